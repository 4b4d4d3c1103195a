import Crypto
import struct Foundation.Data
import Logging
import MeshLink
import MeshRatchet
import MeshRouting
import MeshWire

extension MeshNodeStateMachine {
    // MARK: Receiving a routed packet (PROTOCOL.md §13.1, §13.6, §13.10, §13.11)

    /// What the first, cheap phase of receiving decided (``admit(_:from:now:)``).
    enum Admission {
        /// The packet breaks the wire rules: close the link it came on.
        case violation(String)
        /// Over the neighbour's budget, or seen before: drop it.
        case dropped
        /// Go on, with the static key known for its origin (to open a packet sealed for this node).
        case admitted(Header, originKey: Curve25519.KeyAgreement.PublicKey?)
    }

    /// What the second, costly phase made of a packet (``check(_:header:originKey:from:identity:nowMilliseconds:logger:)``).
    enum Checked {
        case violation(String)
        case dropped
        /// A verified advert, with its signed prekey when that verified too (§19.1).
        case advert(LinkStatePayload, RoutedPacket, prekey: SignedPrekey?)
        /// A verified broadcast and what it delivers here.
        case broadcast(RoutedPacket, Opened?)
        /// A sealed packet: in transit, or for this node (opened, or `nil` when it did not open);
        /// `repair` names a session of the origin's this node does not hold (§19.7).
        case sealed(RoutedPacket, opened: (SealedPayload, PeerID)?, repair: UInt64? = nil)
    }

    /// A neighbour sent a routed packet: check it, charge its work to the neighbour's budget,
    /// verify or open it, learn from it and let the router relay and deliver it.
    ///
    /// The three phases, ``admit(_:from:now:)``, ``check(_:header:originKey:from:identity:nowMilliseconds:logger:)``
    /// (the signature check or the open, which reads no state) and ``apply(_:received:from:now:nowMilliseconds:random:)``,
    /// in one call; a shell may run the middle one outside its lock.
    /// - Parameters:
    ///   - routed: the packet as it came.
    ///   - neighbor: the neighbour it came from.
    ///   - now: the current instant.
    ///   - nowMilliseconds: the wall clock (Unix milliseconds): replay window (§13.6), pong budget.
    ///   - random: the source of a pong's packet id.
    /// - Returns: the step; its ``Step/violation`` says why to close the neighbour's link.
    package mutating func received(_ routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant, nowMilliseconds: Int64,
                                   random: inout some RandomNumberGenerator) -> Step {
        switch admit(routed, from: neighbor, now: now) {
        case .violation(let reason): return Self.violation(reason)
        case .dropped: return Step()
        case .admitted(let header, let originKey):
            let checked = Self.check(routed, header: header, originKey: originKey, from: neighbor, identity: identity,
                                     endToEnd: endToEnd, nowMilliseconds: nowMilliseconds, logger: logger)
            return apply(checked, received: routed, from: neighbor, now: now, nowMilliseconds: nowMilliseconds, random: &random)
        }
    }

    /// Receiving, phase 1: the header and size rules (§13.1), then the neighbour's budget and the
    /// duplicate check (§13.11), before any costly work.
    /// - Parameter work: what opening the packet would cost (``openingWork(of:)``), read before the
    ///   caller took its lock; `nil` reads it here.
    mutating func admit(_ routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant, work: RatchetWork? = nil) -> Admission {
        let header: Header
        switch Self.decodeHeader(routed) {
        case .failure(let why): return .violation(why.description)
        case .success(let decoded): header = decoded
        }
        if let violation = Self.sizeViolation(routed) { return .violation(violation) }
        guard takeBudget(routed, header: header, from: neighbor, now: now, work: work) else { return .dropped }
        return .admitted(header, originKey: known[header.origin]?.staticKey)
    }

    /// Receiving, phase 2: verifies an advert or broadcast, opens a packet sealed for this node.
    /// Reads no state of the node (what it needs is passed in), so it may run outside a lock.
    static func check(_ routed: RoutedPayload, header: Header, originKey: Curve25519.KeyAgreement.PublicKey?, from neighbor: NodeID,
                      identity: LocalIdentity, endToEnd: EndToEndStore, nowMilliseconds: Int64, logger: Logger) -> Checked {
        switch routed.payload {
        case .linkState(let signed):
            let advert: LinkStatePayload
            do {
                advert = try MeshSigning.verifiedLinkState(signed, origin: header.origin)
            } catch {
                logger.notice("dropped a link-state advert", metadata: ["mesh.origin": "\(header.origin.shortHex)", "mesh.from": "\(neighbor.shortHex)", "error": "\(error)"])
                return .dropped
            }
            let neighbors = advert.neighbors.compactMap { neighbor in
                (try? NodeID(bytes: neighbor.nodeID)).map { AdvertNeighbor(id: $0, latencyMicros: neighbor.latencyUs) }
            }
            let linkState = LinkStateAdvert(origin: header.origin, sequence: advert.sequence, neighbors: neighbors,
                                            attachment: signed.serialized)
            var prekey: SignedPrekey?
            if advert.hasSignedPrekey, let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: advert.identityKey) {
                let received = SignedPrekey(id: advert.signedPrekey.id, publicKey: advert.signedPrekey.publicKey,
                                            signature: advert.signedPrekey.signature)
                if (try? received.verified(by: identityKey)) != nil {
                    prekey = received
                } else {
                    logger.notice("ignored an advert's signed prekey that does not verify", metadata: ["mesh.origin": "\(header.origin.shortHex)"])
                }
            }
            return .advert(advert, header.packet(kind: .advert(linkState), payload: Data()), prekey: prekey)
        case .broadcast(let signed):
            let broadcast: BroadcastPayload
            do {
                broadcast = try MeshSigning.verifiedBroadcast(signed, origin: header.origin, packetID: routed.packetID)
            } catch {
                logger.notice("dropped a broadcast", metadata: ["mesh.origin": "\(header.origin.shortHex)", "mesh.from": "\(neighbor.shortHex)", "error": "\(error)"])
                return .dropped
            }
            let opened: Opened?
            if case .channel(let message) = broadcast.content {
                opened = (try? PeerID(id: header.origin, displayName: broadcast.displayName)).flatMap {
                    channelDelivery(message, sender: $0, delivery: .broadcast, hops: Int(header.hops) + 1,
                                    sentAtMs: broadcast.sentAtMs, nowMilliseconds: nowMilliseconds, logger: logger)
                }
            } else {
                opened = event(for: broadcast, origin: header.origin, hops: Int(header.hops) + 1).map(Opened.event)
            }
            // No payload: the copies a relay sends on are the received packet re-framed (``reframe(_:as:)``),
            // so the signed part is not serialized again here.
            return .broadcast(header.packet(kind: .broadcast, payload: Data()), opened)
        case .sealed(let sealed):
            guard let destination = header.destination else { return .violation("a sealed packet without a destination") }
            let packet = header.packet(kind: .unicast(destination: destination), payload: sealed)
            guard destination == identity.nodeID else { return .sealed(packet, opened: nil) }
            switch openSealed(sealed, header: header, destination: destination, endToEnd: endToEnd, originKey: originKey, nowMilliseconds: nowMilliseconds, logger: logger) {
            case .success(let opened): return .sealed(packet, opened: opened)
            case .failure(let failure): return .sealed(packet, opened: nil, repair: failure.session)
            }
        case nil:
            logger.debug("ignored a routed packet with an unknown payload (a newer peer's)", metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return .dropped
        }
    }

    /// Receiving, phase 3: learns from a verified advert, answers a ping (within the pong budget,
    /// §13.10), matches a pong to this node's ping, and lets the router relay and deliver.
    ///
    /// The copies the router sends on are `received` re-framed (``reframe(_:as:)``): its signed or
    /// sealed part is passed on as it came, not decoded and encoded again (§13.2.2).
    mutating func apply(_ checked: Checked, received routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant,
                        nowMilliseconds: Int64, random: inout some RandomNumberGenerator) -> Step {
        switch checked {
        case .violation(let reason):
            return Self.violation(reason)
        case .dropped:
            return Step()
        case .advert(let advert, let packet, let prekey):
            let renamed = learn(advert, origin: packet.origin, prekey: prekey)
            let actions = router.received(packet, from: neighbor, now: now)
            var step = execute(actions, relaying: routed)
            if let renamed { step.events.append(renamed) }
            if packet.origin != identity.nodeID {
                // Before the reachability events: the application hears of the successor first.
                step.events.insert(contentsOf: learnRotations(advert.rotations, identityKey: advert.identityKey,
                                                              displayName: advert.displayName), at: 0)
            }
            return step
        case .broadcast(let packet, let opened):
            let actions = router.received(packet, from: neighbor, now: now)
            return execute(actions, opened: opened, relaying: routed)
        case .sealed(let packet, nil, let repair):
            if case .unicast(let destination) = packet.kind, destination == identity.nodeID {
                // For this node and it did not open: the neighbour's derivation budget is fixed for a while (§13.11).
                router.noteFailedWork(.derivation, from: neighbor, now: now)
            }
            let actions = router.received(packet, from: neighbor, now: now)
            var step = execute(actions, relaying: routed)
            if let repair { step.sends += sendRepair(repair, to: packet.origin, now: now, nowMilliseconds: nowMilliseconds, random: &random) }
            return step
        case .sealed(let packet, let (plaintext, sender)?, _):
            var opened: Opened?
            var reply: SealedPayload.OneOf_Content?
            var answered: UInt64?
            switch plaintext.content {
            case .ping(let ping):
                if takePongBudget(nowMilliseconds: nowMilliseconds) {
                    var pong = Meshchat_V1_Pong()
                    pong.nonce = ping.nonce
                    reply = .pong(pong)
                } else {
                    logger.info("did not answer a mesh ping: more than \(Self.maxPongsPerSecond) per second", metadata: ["mesh.origin": "\(sender)"])
                }
            case .pong(let pong):
                // Only a pong for a ping of this node's that waits answers anything.
                if pings[pong.nonce] == .sent {
                    pings[pong.nonce] = .answered
                    answered = pong.nonce
                }
            case .channel(let message):
                opened = Self.channelDelivery(message, sender: sender, delivery: .sealed, hops: Int(packet.hops) + 1,
                                              sentAtMs: plaintext.sealedAtMs, nowMilliseconds: nowMilliseconds, logger: logger)
            case .data(let data):
                opened = .event(.received(ReceivedMessage(sender: sender, mode: .reliable, content: .data(data.payload),
                                                          hops: Int(packet.hops) + 1, isPrivate: true)))
            case .repair(let repair):
                // Authenticated by the session it came on: the origin cannot open that session's messages.
                endToEnd.demote(repair.sessionID, of: packet.origin)
                logger.info("a node could not open an end-to-end session's messages; using a newer session with it",
                            metadata: ["mesh.origin": "\(packet.origin.shortHex)"])
            case nil:
                logger.debug("ignored a sealed packet with unknown content (a newer peer's)", metadata: ["mesh.origin": "\(packet.origin.shortHex)"])
            }
            let actions = router.received(packet, from: neighbor, now: now)
            var step = execute(actions, opened: opened, relaying: routed)
            if let answered { step.answeredPings.append(answered) }
            if let reply, let answer = try? sendSealed(reply, to: packet.origin, now: now, nowMilliseconds: nowMilliseconds, random: &random) {
                step.sends += answer.sends
            }
            return step
        }
    }

    /// How long a neighbour's packet must wait for its budget (§13.11), or `nil` when it may go on
    /// now: the link's reader waits instead of dropping it. Broadcasts wait (they have no receipts),
    /// and so do session messages for another node (kind 2, §19.6): a bulk sender across this relay
    /// is slowed by TCP to the budget's pace instead of losing what is over it. Everything else
    /// over budget is dropped by ``admit(_:from:now:work:)``.
    func budgetWait(_ routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant) -> Duration? {
        switch routed.payload {
        case .broadcast?:
            return router.budgetWait(.broadcast, from: neighbor, now: now)
        case .sealed(let sealed)? where sealed.first == RatchetPacket.sessionKind && !routed.destination.isEmpty
            && !routed.destination.elementsEqual(identity.nodeID.bytes):
            return router.budgetWait(.sessionRelaying, units: Self.sessionRelayingUnits(sealed), from: neighbor, now: now)
        default:
            return nil
        }
    }

    /// What relaying a session message costs in ``NeighborWork/sessionRelaying`` units: one per
    /// packet and one per started 16 KiB (§13.11).
    static func sessionRelayingUnits(_ sealed: Data) -> Int {
        1 + (sealed.count + 16_383) / 16_384
    }

    private static func violation(_ reason: String) -> Step {
        var step = Step()
        step.violation = reason
        return step
    }

    /// Why a routed packet is over a size limit that binds receivers (§13.1, §13.6): a sealed packet,
    /// or a signed advert or broadcast, larger than one Noise message (65,535 bytes).
    private static func sizeViolation(_ routed: RoutedPayload) -> String? {
        let (what, size): (String, Int)
        switch routed.payload {
        case .sealed(let sealed): (what, size) = ("a sealed packet", sealed.count)
        case .linkState(let signed): (what, size) = ("a signed advert", signed.body.count + signed.signature.count)
        case .broadcast(let signed): (what, size) = ("a signed broadcast", signed.body.count + signed.signature.count)
        case nil: return nil
        }
        guard size > WireLimits.maxSealedSize else { return nil }
        return "\(what) of \(size) bytes (maximum \(WireLimits.maxSealedSize))"
    }

    /// Whether the work a neighbour's packet asks for fits that neighbour's budget (§13.11):
    /// verifying an advert or broadcast, opening a sealed packet for this node (Diffie-Hellman and
    /// key derivation, as its visible header and the session it names say), relaying one for
    /// another. A broadcast or sealed packet seen before is dropped here, before its costly work.
    /// Drops are counted by the router and logged at debug, at most once a second.
    private mutating func takeBudget(_ routed: RoutedPayload, header: Header, from neighbor: NodeID, now: RouterInstant,
                                     work estimated: RatchetWork?) -> Bool {
        var charges: [(NeighborWork, Int)]
        switch routed.payload {
        case .linkState: charges = [(.verification, 1)]
        case .broadcast:
            if router.hasSeen(header.packetID, now: now) { return false }
            charges = [(.broadcast, 1)]
        case .sealed(let sealed):
            let blocks = (sealed.count + 16_383) / 16_384
            guard header.destination == identity.nodeID else {
                charges = sealed.first == RatchetPacket.sessionKind ? [(.sessionRelaying, Self.sessionRelayingUnits(sealed))] : [(.relaying, 1)]
                break
            }
            if router.hasSeen(header.packetID, now: now) { return false }
            let work = estimated ?? Self.openingWork(of: routed, identity: identity, endToEnd: endToEnd) ?? .none
            charges = work.diffieHellman ? [(.opening, 1)] : []
            if sealed.first != RatchetPacket.prekeyKind { charges.append((.derivation, work.derivedKeys + blocks)) }
        case nil: return true
        }
        guard let work = router.takeBudget(all: charges, from: neighbor, now: now) else { return true }
        if budgetLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
            budgetLoggedAt = now
            logger.debug("dropped packets over a neighbour's budget", metadata: [
                "mesh.from": "\(neighbor.shortHex)", "budget.work": "\(work)",
                "budget.dropped": "\(router.budgets.dropped.map { "\($0.key)=\($0.value)" }.sorted())",
            ])
        }
        return false
    }

    /// What opening `routed` would cost this node (§13.11), when it is a sealed packet for it: read
    /// from the end-to-end store, whose lock a shell should not take inside its own.
    static func openingWork(of routed: RoutedPayload, identity: LocalIdentity, endToEnd: EndToEndStore) -> RatchetWork? {
        guard case .sealed(let sealed) = routed.payload, routed.destination == Data(identity.nodeID.bytes),
              let origin = try? NodeID(bytes: routed.origin) else { return nil }
        return endToEnd.openingWork(of: sealed, from: origin)
    }

    /// Remembers what a verified advert says about its origin (name, static key, attachments), unless
    /// an advert with a newer sequence already did.
    /// - Returns: ``SessionEvent/peerRenamed(_:previousName:)`` when the origin's name changed.
    private mutating func learn(_ advert: LinkStatePayload, origin: NodeID, prekey: SignedPrekey?) -> SessionEvent? {
        guard origin != identity.nodeID,
              let staticKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: advert.staticKey),
              let peer = try? PeerID(id: origin, displayName: advert.displayName) else { return nil }
        let old = known[origin]
        if let seen = old?.sequence, advert.sequence <= seen { return nil }
        known[origin] = Known(peer: peer, staticKey: staticKey, identityKey: advert.identityKey, sequence: advert.sequence,
                              prekey: prekey ?? old?.prekey)
        attachments[origin] = Self.attachments(advert.attachments)
        guard let old, old.peer.displayName != peer.displayName else { return nil }
        return .peerRenamed(peer, previousName: old.peer.displayName)
    }

    private mutating func takePongBudget(nowMilliseconds: Int64) -> Bool {
        let second = nowMilliseconds / 1000
        if pongBudget.second != second { pongBudget = (second, Self.maxPongsPerSecond) }
        guard pongBudget.left > 0 else { return false }
        pongBudget.left -= 1
        return true
    }

    /// Opens a packet sealed for this node; a failure (logged) carries the session id to repair when
    /// the packet named a session this node does not hold (§19.7).
    private static func openSealed(_ sealed: Data, header: Header, destination: NodeID, endToEnd: EndToEndStore, originKey: Curve25519.KeyAgreement.PublicKey?,
                                   nowMilliseconds: Int64, logger: Logger) -> Result<(SealedPayload, PeerID), RepairRequest> {
        let plaintext: SealedPayload
        do {
            (plaintext, _) = try endToEnd.open(sealed, header: SealHeader(origin: header.origin, destination: destination,
                                                                          packetID: header.packetIDBytes),
                                               knownStaticKey: originKey)
        } catch {
            // Debug, not notice: the derivation budget lets up to 16,384 packets a second from one
            // neighbour get this far (§13.11), and a flood of them must not become a flood of logs.
            logger.debug("dropped a sealed packet", metadata: ["mesh.origin": "\(header.origin.shortHex)", "error": "\(error)"])
            guard error.code == .unknownSession, let packet = try? RatchetPacket(decoding: sealed) else { return .failure(RepairRequest(session: nil)) }
            return .failure(RepairRequest(session: packet.sessionID))
        }
        // Data messages have nothing else to recognise a replay by once the duplicate cache forgot
        // its packet id; a channel applies its own replay window (§13.12: the chat's lines are
        // deduplicated by message id on disk, so a laptop whose clock is far off still chats).
        if case .data? = plaintext.content, skew(plaintext.sealedAtMs, nowMilliseconds: nowMilliseconds) > Self.freshness {
            logger.notice("dropped sealed data: its clock differs from ours by more than \(Self.freshness) (a replay, or a clock far off)",
                          metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return .failure(RepairRequest(session: nil))
        }
        guard let sender = try? PeerID(id: header.origin, displayName: plaintext.displayName) else { return .failure(RepairRequest(session: nil)) }
        return .success((plaintext, sender))
    }

    /// Why opening failed, as far as a repair is concerned.
    struct RepairRequest: Error {
        /// The session to name in a repair, when the packet named one this node does not hold.
        var session: UInt64?
    }

    /// A repair for the origin (§19.7): a message on a fresh session naming the one that did not open,
    /// at most one per ``repairInterval`` per node and ``maxRepairsPerSecond`` in all.
    private mutating func sendRepair(_ session: UInt64, to node: NodeID, now: RouterInstant, nowMilliseconds: Int64,
                                     random: inout some RandomNumberGenerator) -> [(NodeID, RoutedPayload)] {
        if let last = repairsSent[node], now - last < Self.repairInterval { return [] }
        let second = nowMilliseconds / 1000
        if repairBudget.second != second { repairBudget = (second, Self.maxRepairsPerSecond) }
        guard repairBudget.left > 0 else { return [] }
        repairBudget.left -= 1
        if repairsSent.count >= 1_024 { repairsSent = repairsSent.filter { now - $0.value < Self.repairInterval } }
        guard repairsSent.count < 1_024 else { return [] }
        repairsSent[node] = now
        var repair = SessionRepairPayload()
        repair.sessionID = session
        return (try? sendSealed(.repair(repair), to: node, fresh: true, now: now, nowMilliseconds: nowMilliseconds, random: &random))?.sends ?? []
    }

    private static func event(for broadcast: BroadcastPayload, origin: NodeID, hops: Int) -> SessionEvent? {
        guard let sender = try? PeerID(id: origin, displayName: broadcast.displayName) else { return nil }
        switch broadcast.content {
        case .data(let data):
            return .received(ReceivedMessage(sender: sender, mode: .reliable, content: .data(data.payload), hops: hops, isPrivate: false))
        case .channel, nil:
            return nil
        }
    }
}
