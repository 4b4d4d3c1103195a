import Crypto
import struct Foundation.Data
import Logging
import MeshLink
import MeshRouting
import MeshWire

extension MeshNodeStateMachine {
    // MARK: Receiving a routed packet (PROTOCOL.md §13.1, §13.6, §13.10, §13.11)

    /// A neighbour sent a routed packet: check it, charge its work to the neighbour's budget,
    /// verify or open it, learn from it and let the router relay and deliver it.
    /// - Parameters:
    ///   - routed: the packet as it came.
    ///   - neighbor: the neighbour it came from.
    ///   - now: the current instant.
    ///   - nowMilliseconds: the wall clock (Unix milliseconds): replay window (§13.6), pong budget.
    ///   - random: the source of a pong's packet id.
    /// - Returns: the step; its ``Step/violation`` says why to close the neighbour's link.
    package mutating func received(_ routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant, nowMilliseconds: Int64,
                                   random: inout some RandomNumberGenerator) -> Step {
        let packet: RoutedPacket
        var opened: Opened?
        var renamed: SessionEvent?
        var reply: (NodeID, SealedPayload.OneOf_Content)?
        var answered: UInt64?
        let header: Header
        switch Self.decodeHeader(routed) {
        case .failure(let why): return Self.violation(why.description)
        case .success(let decoded): header = decoded
        }
        if let violation = Self.sizeViolation(routed) { return Self.violation(violation) }
        guard admit(routed, header: header, from: neighbor, now: now) else { return Step() }
        switch routed.payload {
        case .linkState(let signed):
            let advert: LinkStatePayload
            do {
                advert = try MeshSigning.verifiedLinkState(signed, origin: header.origin)
            } catch {
                logger.notice("dropped a link-state advert", metadata: ["mesh.origin": "\(header.origin.shortHex)", "mesh.from": "\(neighbor.shortHex)", "error": "\(error)"])
                return Step()
            }
            renamed = learn(advert, origin: header.origin)
            let neighbors = advert.neighbors.compactMap { neighbor in
                (try? NodeID(bytes: neighbor.nodeID)).map { AdvertNeighbor(id: $0, latencyMicros: neighbor.latencyUs) }
            }
            let linkState = LinkStateAdvert(origin: header.origin, sequence: advert.sequence, neighbors: neighbors,
                                            attachment: signed.serialized)
            packet = header.packet(kind: .advert(linkState), payload: Data())
        case .broadcast(let signed):
            let broadcast: BroadcastPayload
            do {
                broadcast = try MeshSigning.verifiedBroadcast(signed, origin: header.origin, packetID: routed.packetID)
            } catch {
                logger.notice("dropped a broadcast", metadata: ["mesh.origin": "\(header.origin.shortHex)", "mesh.from": "\(neighbor.shortHex)", "error": "\(error)"])
                return Step()
            }
            packet = header.packet(kind: .broadcast, payload: signed.serialized)
            if case .channel(let message) = broadcast.content {
                opened = (try? PeerID(id: header.origin, displayName: broadcast.displayName)).flatMap {
                    Self.channelDelivery(message, sender: $0, delivery: .broadcast, hops: Int(header.hops) + 1,
                                         sentAtMs: broadcast.sentAtMs, nowMilliseconds: nowMilliseconds, logger: logger)
                }
            } else {
                opened = Self.event(for: broadcast, origin: header.origin, hops: Int(header.hops) + 1).map(Opened.event)
            }
        case .sealed(let sealed):
            guard let destination = header.destination else { return Self.violation("a sealed packet without a destination") }
            packet = header.packet(kind: .unicast(destination: destination), payload: sealed)
            if destination == identity.nodeID {
                (opened, reply) = open(sealed, header: header, destination: destination, nowMilliseconds: nowMilliseconds,
                                       answered: &answered)
            }
        case nil:
            logger.debug("ignored a routed packet with an unknown payload (a newer peer's)", metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return Step()
        }
        var step = execute(router.received(packet, from: neighbor, now: now), opened: opened)
        if let renamed { step.events.append(renamed) }
        if let answered { step.answeredPings.append(answered) }
        if let (node, content) = reply,
                  let answer = try? sendSealed(content, to: node, now: now, nowMilliseconds: nowMilliseconds, random: &random) {
            step.sends += answer.sends
        }
        return step
    }

    /// How long a neighbour's broadcast must wait for its budget (§13.11), or `nil` when it may go on
    /// now (or is not a broadcast): the link's reader waits instead of dropping it.
    func budgetWait(_ routed: RoutedPayload, from neighbor: NodeID, now: RouterInstant) -> Duration? {
        guard case .broadcast? = routed.payload else { return nil }
        return router.budgetWait(.broadcast, from: neighbor, now: now)
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
    /// verifying an advert or broadcast, opening a sealed packet for this node, relaying one for
    /// another. A broadcast or sealed packet seen before is dropped here, before its costly work.
    /// Drops are counted by the router and logged at debug, at most once a second.
    private mutating func admit(_ routed: RoutedPayload, header: Header, from neighbor: NodeID, now: RouterInstant) -> Bool {
        let work: NeighborWork
        switch routed.payload {
        case .linkState: work = .verification
        case .broadcast:
            if router.hasSeen(header.packetID, now: now) { return false }
            work = .broadcast
        case .sealed:
            guard header.destination == identity.nodeID else { work = .relaying; break }
            if router.hasSeen(header.packetID, now: now) { return false }
            work = .opening
        case nil: return true
        }
        if router.takeBudget(work, from: neighbor, now: now) { return true }
        if budgetLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
            budgetLoggedAt = now
            logger.debug("dropped packets over a neighbour's budget", metadata: [
                "mesh.from": "\(neighbor.shortHex)", "budget.work": "\(work)",
                "budget.dropped": "\(router.budgets.dropped.map { "\($0.key)=\($0.value)" }.sorted())",
            ])
        }
        return false
    }

    /// Remembers what a verified advert says about its origin (name, static key, attachments), unless
    /// an advert with a newer sequence already did.
    /// - Returns: ``SessionEvent/peerRenamed(_:previousName:)`` when the origin's name changed.
    private mutating func learn(_ advert: LinkStatePayload, origin: NodeID) -> SessionEvent? {
        guard origin != identity.nodeID,
              let staticKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: advert.staticKey),
              let peer = try? PeerID(id: origin, displayName: advert.displayName) else { return nil }
        let old = known[origin]
        if let seen = old?.sequence, advert.sequence <= seen { return nil }
        known[origin] = Known(peer: peer, staticKey: staticKey, sequence: advert.sequence)
        attachments[origin] = Self.attachments(advert.attachments)
        guard let old, old.peer.displayName != peer.displayName else { return nil }
        return .peerRenamed(peer, previousName: old.peer.displayName)
    }

    /// Opens a packet sealed for this node: what it delivers here, and the sealed content to send
    /// back (a pong for a ping within the pong budget, §13.10). A pong for a ping of this node's
    /// that waits marks it answered and sets `answered` to its nonce; any other pong is ignored.
    private mutating func open(_ sealed: Data, header: Header, destination: NodeID, nowMilliseconds: Int64,
                               answered: inout UInt64?) -> (Opened?, (NodeID, SealedPayload.OneOf_Content)?) {
        guard let (plaintext, sender) = openSealed(sealed, header: header, destination: destination,
                                                   nowMilliseconds: nowMilliseconds) else { return (nil, nil) }
        switch plaintext.content {
        case .ping(let ping):
            guard takePongBudget(nowMilliseconds: nowMilliseconds) else {
                logger.info("did not answer a mesh ping: more than \(Self.maxPongsPerSecond) per second", metadata: ["mesh.origin": "\(sender)"])
                return (nil, nil)
            }
            var pong = Meshchat_V1_Pong()
            pong.nonce = ping.nonce
            return (nil, (header.origin, .pong(pong)))
        case .pong(let pong):
            if pings[pong.nonce] == .sent {
                pings[pong.nonce] = .answered
                answered = pong.nonce
            }
            return (nil, nil)
        case .channel(let message):
            return (Self.channelDelivery(message, sender: sender, delivery: .sealed, hops: Int(header.hops) + 1,
                                         sentAtMs: plaintext.sealedAtMs, nowMilliseconds: nowMilliseconds, logger: logger), nil)
        case .data(let data):
            return (.event(.received(ReceivedMessage(sender: sender, mode: .reliable, content: .data(data.payload),
                                                     hops: Int(header.hops) + 1, isPrivate: true))), nil)
        case nil:
            logger.debug("ignored a sealed packet with unknown content (a newer peer's)", metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return (nil, nil)
        }
    }

    private mutating func takePongBudget(nowMilliseconds: Int64) -> Bool {
        let second = nowMilliseconds / 1000
        if pongBudget.second != second { pongBudget = (second, Self.maxPongsPerSecond) }
        guard pongBudget.left > 0 else { return false }
        pongBudget.left -= 1
        return true
    }

    /// Opens a packet sealed for this node; `nil` (logged) when it does not open or is stale.
    private func openSealed(_ sealed: Data, header: Header, destination: NodeID, nowMilliseconds: Int64) -> (SealedPayload, PeerID)? {
        let plaintext: SealedPayload
        do {
            plaintext = try Sealing.open(sealed, header: SealHeader(origin: header.origin, destination: destination, packetID: header.packetIDBytes),
                                         identity: identity, knownStaticKey: known[header.origin]?.staticKey)
        } catch {
            logger.notice("dropped a sealed packet", metadata: ["mesh.origin": "\(header.origin.shortHex)", "error": "\(error)"])
            return nil
        }
        // Data messages have nothing else to recognise a replay by once the duplicate cache forgot
        // its packet id; a channel applies its own replay window (§13.12: the chat's lines are
        // deduplicated by message id on disk, so a laptop whose clock is far off still chats).
        if case .data? = plaintext.content, Self.skew(plaintext.sealedAtMs, nowMilliseconds: nowMilliseconds) > Self.freshness {
            logger.notice("dropped sealed data: its clock differs from ours by more than \(Self.freshness) (a replay, or a clock far off)",
                          metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return nil
        }
        guard let sender = try? PeerID(id: header.origin, displayName: plaintext.displayName) else { return nil }
        return (plaintext, sender)
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
