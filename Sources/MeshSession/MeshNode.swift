import Crypto
import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshRouting
import MeshWire
import NIOConcurrencyHelpers

/// The session's shell around the pure ``Router`` (PROTOCOL.md §13): it verifies, signs, seals and
/// opens mesh packets and turns the router's actions into link writes and session events.
///
/// Every input returns a ``Step``: the writes to make now (they never wait, §13.2.7) and the events
/// to report, which the caller pushes to the session's queue in order (with back-pressure).
/// This type is thread-safe: one lock guards the router and what adverts taught us.
/// (`package`: the fuzz entry points of `MeshFuzz` drive it with hostile packets.)
package final class MeshNode: Sendable {
    /// What a verified advert taught us about a node.
    struct Known: Sendable {
        var peer: PeerID
        var staticKey: Curve25519.KeyAgreement.PublicKey
        /// The sequence of the advert the name and key came from; `nil` when they came from a
        /// handshake (which is always current).
        var sequence: UInt64?
    }

    /// What to do after an input.
    package struct Step: Sendable {
        /// Packets for neighbours.
        package var sends: [(NodeID, RoutedPayload)] = []
        /// Events for the application, in order.
        package var events: [SessionEvent] = []
        /// A reason to close the link the input came from (a malformed packet, §13.1).
        package var violation: String?
        /// Messages for application channels, in order (§13.12).
        package var channelMessages: [ChannelDelivery] = []
    }

    /// A message for an application channel, which the session hands to the channel registered
    /// under its id, if any (§13.12).
    package struct ChannelDelivery: Sendable {
        /// The channel id as it came (any value but 0).
        package var channel: UInt32
        /// How far the sender's clock was from ours (saturated).
        package var skew: Duration
        /// The message.
        package var message: ChannelMessage
    }

    /// What an opened packet delivers here.
    enum Opened: Sendable {
        /// A session event.
        case event(SessionEvent)
        /// A channel message.
        case channel(ChannelDelivery)
    }

    private struct State: Sendable {
        var router: Router
        var known: [NodeID: Known] = [:]
        /// The channel attachments each node's latest verified advert carries (§13.12).
        var attachments: [NodeID: [UInt32: Data]] = [:]
        /// When a packet dropped for want of budget was last logged (at most once a second).
        var budgetLoggedAt: RouterInstant?
    }

    /// How far a sealed packet's clock may be from ours before it is refused as a replay (§13.6).
    static let freshness: Duration = .seconds(600)

    let identity: LocalIdentity
    /// This node as adverts, broadcasts and sealed packets name it (``rename(_:)`` changes it).
    var me: PeerID { current.withLockedValue { $0 } }
    private let current: NIOLockedValueBox<PeerID>
    /// This node's channel attachments, carried in its adverts (§13.12).
    private let localAttachments: NIOLockedValueBox<[UInt32: Data]>
    private let state: NIOLockedValueBox<State>
    /// Pings this node sent across the mesh, by nonce, waiting for their pong (§13.10).
    private let pings = NIOLockedValueBox<[UInt64: PingWait]>([:])

    /// A ping waiting for its pong.
    private enum PingWait {
        /// Sent; nobody waits yet.
        case sent
        /// The pong came before anybody waited.
        case answered
        /// Somebody waits.
        case waiting(CheckedContinuation<Bool, Never>)
    }
    /// Pongs this node may still send in the current second (§13.10: at most 20 per second).
    private let pongBudget = NIOLockedValueBox<(second: Int64, left: Int)>((0, 0))
    /// Pongs answered per second at most (§13.10).
    static let maxPongsPerSecond = 20
    private let clockStart = ContinuousClock.now
    private let logger: Logger

    package init(peer: LocalPeer, configuration: RoutingConfiguration, logger: Logger) {
        self.identity = peer.identity
        let current = NIOLockedValueBox(peer.peerID)
        self.current = current
        self.logger = logger
        let identity = peer.identity
        let localAttachments = NIOLockedValueBox<[UInt32: Data]>([:])
        self.localAttachments = localAttachments
        // Sequences start at the wall clock so that a restarted node's adverts replace its old ones (§13.2).
        let initialSequence = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        let router = Router(localNode: identity.nodeID, configuration: configuration, initialSequence: initialSequence,
                            now: RouterInstant(offset: .zero)) { advert in
            var payload = LinkStatePayload()
            payload.displayName = current.withLockedValue { $0.displayName }
            payload.sequence = advert.sequence
            payload.neighbors = advert.neighbors.map {
                var neighbor = LinkStateNeighborPayload()
                neighbor.nodeID = Data($0.id.bytes)
                neighbor.latencyUs = $0.latencyMicros
                return neighbor
            }
            payload.attachments = localAttachments.withLockedValue { $0 }.sorted { $0.key < $1.key }.map {
                var attachment = ChannelAttachmentPayload()
                attachment.channel = $0.key
                attachment.data = $0.value
                return attachment
            }
            return MeshSigning.signLinkState(payload, identity: identity).serialized
        }
        self.state = NIOLockedValueBox(State(router: router))
    }

    var now: RouterInstant { RouterInstant(offset: ContinuousClock.now - clockStart) }

    // MARK: Queries

    /// The nodes this node can reach now, nearest first.
    var reachable: [MeshRoute] {
        state.withLockedValue { state in
            state.router.reachable.map { Self.meshRoute($0, known: state.known) }
        }.sorted { ($0.hops, $0.peer.displayName, $0.peer.id) < ($1.hops, $1.peer.displayName, $1.peer.id) }
    }

    /// The route to one node, if it is reachable.
    func route(to node: NodeID) -> MeshRoute? {
        state.withLockedValue { state in state.router.route(to: node).map { Self.meshRoute($0, known: state.known) } }
    }

    /// The peer handle of a node known from its advert.
    func peer(_ node: NodeID) -> PeerID? { state.withLockedValue { $0.known[node]?.peer } }

    /// The attachment a node's latest verified advert carries for a channel (this node's own for
    /// this node), §13.12.
    func attachment(of node: NodeID, channel: UInt32) -> Data? {
        if node == identity.nodeID { return localAttachments.withLockedValue { $0[channel] } }
        return state.withLockedValue { $0.attachments[node]?[channel] }
    }

    /// When the router next needs ``timerFired()``.
    var nextDeadline: Duration? { state.withLockedValue { $0.router.nextDeadline?.offset } }

    /// Every node's latest verified advert (the topology as this node sees it).
    var topology: [MeshTopologyEntry] {
        state.withLockedValue { state in
            state.router.database.map { advert in
                MeshTopologyEntry(
                    node: advert.origin == identity.nodeID ? me : (state.known[advert.origin]?.peer ?? Self.unnamed(advert.origin)),
                    neighbors: advert.neighbors.map { ($0.id, Duration.microseconds(Int64($0.latencyMicros))) }
                        .map { MeshTopologyEntry.Link(node: $0.0, latency: $0.1) })
            }
        }
    }

    private static func unnamed(_ node: NodeID) -> PeerID {
        try! PeerID(id: node, displayName: node.shortHex)
    }

    private static func meshRoute(_ route: Route, known: [NodeID: Known]) -> MeshRoute {
        func peer(_ node: NodeID) -> PeerID { known[node]?.peer ?? unnamed(node) }
        return MeshRoute(peer: peer(route.destination), hops: route.hops, nextHop: peer(route.nextHop),
                         path: route.path.map(peer),
                         hopLatencies: route.hopLatenciesMicros.map { .microseconds(Int64($0)) })
    }

    // MARK: Inputs

    /// A link to a neighbour was admitted; its handshake proved the neighbour's static key, so the
    /// neighbour is known (name and key) before its first advert arrives.
    package func neighborUp(_ peer: PeerID, staticKey: Data, latency: Duration?) -> Step {
        let micros = latency.map(Self.micros) ?? 1_000
        var renamed: SessionEvent?
        if let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: staticKey) {
            state.withLockedValue { state in
                if let old = state.known[peer.id]?.peer, old.displayName != peer.displayName {
                    renamed = .peerRenamed(peer, previousName: old.displayName)
                }
                state.known[peer.id] = Known(peer: peer, staticKey: key, sequence: state.known[peer.id]?.sequence)
            }
        }
        var step = run { state, now in state.router.neighborUp(peer.id, latencyMicros: micros, now: now) }
        if let renamed { step.events.insert(renamed, at: 0) }
        return step
    }

    /// This node's display name changed: adverts, broadcasts and sealed packets carry the new one
    /// from now on, and a new advert tells the mesh (at once, or when the rate limit allows).
    func rename(_ peer: PeerID) -> Step {
        current.withLockedValue { $0 = peer }
        return run { state, now in state.router.attachmentChanged(now: now) }
    }

    /// Sets or removes this node's attachment for a channel; a new advert tells the mesh (at once,
    /// or when the rate limit allows), §13.12.
    func setAttachment(_ data: Data?, channel: UInt32) -> Step {
        let changed = localAttachments.withLockedValue { attachments in
            guard attachments[channel] != data else { return false }
            attachments[channel] = data
            return true
        }
        guard changed else { return Step() }
        return run { state, now in state.router.attachmentChanged(now: now) }
    }

    /// A neighbour's link ended.
    func neighborDown(_ node: NodeID) -> Step {
        run { state, now in state.router.neighborDown(node, now: now) }
    }

    /// A neighbour's link measured a round trip.
    func neighborLatency(_ node: NodeID, _ latency: Duration) -> Step {
        run { state, now in state.router.neighborLatency(node, micros: Self.micros(latency), now: now) }
    }

    /// The router's timer is due.
    func timerFired() -> Step {
        run { state, now in state.router.timerFired(now: now) }
    }

    private static func micros(_ duration: Duration) -> UInt32 {
        let value = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return UInt32(clamping: max(1, value))
    }

    /// A neighbour sent a routed packet.
    package func received(_ routed: RoutedPayload, from neighbor: NodeID) -> Step {
        let packet: RoutedPacket
        var opened: Opened?
        var renamed: SessionEvent?
        var reply: (NodeID, SealedPayload.OneOf_Content)?
        switch Self.decodeHeader(routed) {
        case .failure(let why):
            var step = Step()
            step.violation = why.description
            return step
        case .success(let header):
            if let violation = Self.sizeViolation(routed) {
                var step = Step()
                step.violation = violation
                return step
            }
            guard admit(routed, header: header, from: neighbor) else { return Step() }
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
                                             sentAtMs: broadcast.sentAtMs, logger: logger)
                    }
                } else {
                    opened = Self.event(for: broadcast, origin: header.origin, hops: Int(header.hops) + 1).map(Opened.event)
                }
            case .sealed(let sealed):
                guard let destination = header.destination else {
                    var step = Step()
                    step.violation = "a sealed packet without a destination"
                    return step
                }
                packet = header.packet(kind: .unicast(destination: destination), payload: sealed)
                if destination == identity.nodeID {
                    (opened, reply) = open(sealed, header: header, destination: destination)
                }
            case nil:
                logger.debug("ignored a routed packet with an unknown payload (a newer peer's)", metadata: ["mesh.origin": "\(header.origin.shortHex)"])
                return Step()
            }
        }
        var step = run(opened: opened) { state, now in state.router.received(packet, from: neighbor, now: now) }
        if let renamed { step.events.append(renamed) }
        if let (node, content) = reply, let answer = try? sendSealed(content, to: node) { step.sends += answer.sends }
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

    /// How long a neighbour's broadcast must wait for its budget (§13.11), or `nil` when it may go on
    /// now (or is not a broadcast): the link's reader waits instead of dropping it.
    func budgetWait(_ routed: RoutedPayload, from neighbor: NodeID) -> Duration? {
        guard case .broadcast? = routed.payload else { return nil }
        let now = self.now
        return state.withLockedValue { $0.router.budgetWait(.broadcast, from: neighbor, now: now) }
    }

    /// Whether the work a neighbour's packet asks for fits that neighbour's budget (§13.11):
    /// verifying an advert or broadcast, opening a sealed packet for this node, relaying one for
    /// another. A broadcast or sealed packet seen before is dropped here, before its costly work.
    /// Drops are counted by the router and logged at debug, at most once a second.
    private func admit(_ routed: RoutedPayload, header: Header, from neighbor: NodeID) -> Bool {
        let now = self.now
        return state.withLockedValue { state in
            let work: NeighborWork
            switch routed.payload {
            case .linkState: work = .verification
            case .broadcast:
                if state.router.hasSeen(header.packetID, now: now) { return false }
                work = .broadcast
            case .sealed:
                guard header.destination == identity.nodeID else { work = .relaying; break }
                if state.router.hasSeen(header.packetID, now: now) { return false }
                work = .opening
            case nil: return true
            }
            if state.router.takeBudget(work, from: neighbor, now: now) { return true }
            if state.budgetLoggedAt.map({ now - $0 >= .seconds(1) }) ?? true {
                state.budgetLoggedAt = now
                logger.debug("dropped packets over a neighbour's budget", metadata: [
                    "mesh.from": "\(neighbor.shortHex)", "budget.work": "\(work)",
                    "budget.dropped": "\(state.router.budgets.dropped.map { "\($0.key)=\($0.value)" }.sorted())",
                ])
            }
            return false
        }
    }

    /// Sends a signed broadcast to every node within the hop limit.
    /// - Returns: the step (no sends when there is no neighbour).
    func broadcast(_ content: BroadcastPayload.OneOf_Content, sentAt: Int64) -> Step {
        let packetID = Self.randomPacketID()
        var body = BroadcastPayload()
        body.packetID = Data(packetID.bytes)
        body.displayName = me.displayName
        body.sentAtMs = sentAt
        body.content = content
        let signed = MeshSigning.signBroadcast(body, identity: identity)
        return run { state, now in state.router.broadcast(payload: signed.serialized, packetID: packetID, now: now) }
    }

    /// Seals content for a node and routes it.
    /// - Returns: the step, or `nil` when the node is not reachable (or its keys are unknown).
    func sendSealed(_ content: SealedPayload.OneOf_Content, to node: NodeID) throws(EndToEndError) -> Step? {
        guard let known = state.withLockedValue({ $0.known[node] }) else { return nil }
        let packetID = Self.randomPacketID()
        let header = SealHeader(origin: identity.nodeID, destination: node, packetID: Data(packetID.bytes))
        let sealed = try Sealing.seal(content, displayName: me.displayName, sealedAtMilliseconds: Self.nowMilliseconds,
                                      header: header, recipientStaticKey: known.staticKey, identity: identity)
        var outcome = UnicastOutcome.noRoute
        var step = Step()
        state.withLockedValue { state in
            outcome = state.router.unicast(payload: sealed, to: node, packetID: packetID, now: now)
            if case .sent(let actions) = outcome { execute(actions, state: state, into: &step) }
        }
        guard case .sent = outcome else { return nil }
        return step
    }

    // MARK: Internals

    private func run(opened: Opened? = nil, _ body: (inout State, RouterInstant) -> [RouterAction]) -> Step {
        var step = Step()
        state.withLockedValue { state in
            let actions = body(&state, now)
            execute(actions, state: state, into: &step, opened: opened)
        }
        return step
    }

    private func execute(_ actions: [RouterAction], state: State, into step: inout Step, opened: Opened? = nil) {
        for action in actions {
            switch action {
            case .send(let packet, let neighbor):
                step.sends.append((neighbor, Self.encode(packet)))
            case .deliver(let packet):
                if case .advert = packet.kind { continue }
                switch opened {
                case .event(let event)?: step.events.append(event)
                case .channel(let delivery)?: step.channelMessages.append(delivery)
                case nil: break
                }
            case .reachabilityChanged(let changes):
                for change in changes {
                    switch change {
                    case .reachable(let route), .changed(let route):
                        let meshRoute = Self.meshRoute(route, known: state.known)
                        step.events.append(.reachabilityChanged(meshRoute.peer, meshRoute))
                    case .unreachable(let node):
                        step.events.append(.reachabilityChanged(state.known[node]?.peer ?? Self.unnamed(node), nil))
                    }
                }
            case .dropped(let packet, let reason):
                if reason != .duplicate {
                    logger.debug("dropped a routed packet", metadata: ["mesh.origin": "\(packet.origin.shortHex)", "route.drop": "\(reason)", "frame.ttl": "\(packet.hopLimit)"])
                }
            }
        }
    }

    /// Remembers what a verified advert says about its origin (name, static key, attachments), unless
    /// an advert with a newer sequence already did.
    /// - Returns: ``SessionEvent/peerRenamed(_:previousName:)`` when the origin's name changed.
    private func learn(_ advert: LinkStatePayload, origin: NodeID) -> SessionEvent? {
        guard origin != identity.nodeID,
              let staticKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: advert.staticKey),
              let peer = try? PeerID(id: origin, displayName: advert.displayName) else { return nil }
        return state.withLockedValue { state -> SessionEvent? in
            let old = state.known[origin]
            if let seen = old?.sequence, advert.sequence <= seen { return nil }
            state.known[origin] = Known(peer: peer, staticKey: staticKey, sequence: advert.sequence)
            state.attachments[origin] = Self.attachments(advert.attachments)
            guard let old, old.peer.displayName != peer.displayName else { return nil }
            return .peerRenamed(peer, previousName: old.peer.displayName)
        }
    }

    /// Opens a packet sealed for this node; `nil` (logged) when it does not open or is stale.
    private func open(_ sealed: Data, header: Header, destination: NodeID) -> (Opened?, (NodeID, SealedPayload.OneOf_Content)?) {
        guard let (plaintext, sender) = openSealed(sealed, header: header, destination: destination) else { return (nil, nil) }
        switch plaintext.content {
        case .ping(let ping):
            guard takePongBudget() else {
                logger.info("did not answer a mesh ping: more than \(Self.maxPongsPerSecond) per second", metadata: ["mesh.origin": "\(sender)"])
                return (nil, nil)
            }
            var pong = Meshchat_V1_Pong()
            pong.nonce = ping.nonce
            return (nil, (header.origin, .pong(pong)))
        case .pong(let pong):
            let waiter: CheckedContinuation<Bool, Never>? = pings.withLockedValue { pings in
                switch pings[pong.nonce] {
                case .sent?:
                    pings[pong.nonce] = .answered
                    return nil
                case .waiting(let continuation)?:
                    pings[pong.nonce] = nil
                    return continuation
                case .answered?, nil:
                    return nil
                }
            }
            waiter?.resume(returning: true)
            return (nil, nil)
        default:
            if case .channel(let message) = plaintext.content {
                return (Self.channelDelivery(message, sender: sender, delivery: .sealed, hops: Int(header.hops) + 1,
                                             sentAtMs: plaintext.sealedAtMs, logger: logger), nil)
            }
            return (event(for: plaintext, sender: sender, hops: Int(header.hops) + 1).map(Opened.event), nil)
        }
    }

    private func takePongBudget() -> Bool {
        let second = Self.nowMilliseconds / 1000
        return pongBudget.withLockedValue { budget in
            if budget.second != second { budget = (second, Self.maxPongsPerSecond) }
            guard budget.left > 0 else { return false }
            budget.left -= 1
            return true
        }
    }

    /// Registers a ping's nonce before it is sent.
    func expectPong(_ nonce: UInt64) {
        pings.withLockedValue { $0[nonce] = .sent }
    }

    /// Waits for the pong of a registered ping: `true` when it came, `false` after ``cancelPing(_:)``.
    func waitForPong(_ nonce: UInt64) async -> Bool {
        await withCheckedContinuation { continuation in
            let ready: Bool? = pings.withLockedValue { pings in
                switch pings[nonce] {
                case .sent?:
                    pings[nonce] = .waiting(continuation)
                    return nil
                case .answered?:
                    pings[nonce] = nil
                    return true
                case .waiting?, nil:
                    return false
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Gives up waiting for a pong.
    func cancelPing(_ nonce: UInt64) {
        let wait = pings.withLockedValue { $0.removeValue(forKey: nonce) }
        if case .waiting(let continuation)? = wait { continuation.resume(returning: false) }
    }

    /// Opens a packet sealed for this node; `nil` (logged) when it does not open or is stale.
    private func openSealed(_ sealed: Data, header: Header, destination: NodeID) -> (SealedPayload, PeerID)? {
        let plaintext: SealedPayload
        do {
            let known = state.withLockedValue { $0.known[header.origin]?.staticKey }
            plaintext = try Sealing.open(sealed, header: SealHeader(origin: header.origin, destination: destination, packetID: header.packetIDBytes),
                                         identity: identity, knownStaticKey: known)
        } catch {
            logger.notice("dropped a sealed packet", metadata: ["mesh.origin": "\(header.origin.shortHex)", "error": "\(error)"])
            return nil
        }
        // Data messages have nothing else to recognise a replay by once the duplicate cache forgot
        // its packet id; a channel applies its own replay window (§13.12: the chat's lines are
        // deduplicated by message id on disk, so a laptop whose clock is far off still chats).
        let skew = Self.skew(plaintext.sealedAtMs)
        var heldToClock = false
        switch plaintext.content {
        case .data?: heldToClock = true
        default: break
        }
        if heldToClock, skew > Self.freshness {
            logger.notice("dropped sealed data: its clock differs from ours by more than \(Self.freshness) (a replay, or a clock far off)",
                          metadata: ["mesh.origin": "\(header.origin.shortHex)"])
            return nil
        }
        guard let sender = try? PeerID(id: header.origin, displayName: plaintext.displayName) else { return nil }
        return (plaintext, sender)
    }

    /// The event for an opened sealed packet (pings and pongs are handled by ``open(_:header:destination:)``).
    private func event(for plaintext: SealedPayload, sender: PeerID, hops: Int) -> SessionEvent? {
        let origin = sender.id
        switch plaintext.content {
        case .data(let data):
            return .received(ReceivedMessage(sender: sender, mode: .reliable, content: .data(data.payload), hops: hops, isPrivate: true))
        case .ping, .pong, .channel:
            return nil
        case nil:
            logger.debug("ignored a sealed packet with unknown content (a newer peer's)", metadata: ["mesh.origin": "\(origin.shortHex)"])
            return nil
        }
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

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func randomPacketID() -> PacketID {
        var generator = SystemRandomNumberGenerator()
        return PacketID(high: generator.next(), low: generator.next())
    }
}
