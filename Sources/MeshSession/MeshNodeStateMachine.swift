import Crypto
import struct Foundation.Data
import Logging
import MeshLink
import MeshRatchet
import MeshRouting
import MeshWire

/// The mesh node as a value (PROTOCOL.md §13): the pure ``Router`` plus what adverts and handshakes
/// taught this node, its own name and channel attachments, the pings it waits on and its pong budget.
/// It verifies, signs, seals and opens mesh packets and turns the router's actions into a ``Step``.
///
/// Every input is `mutating`, takes the time as parameters (`now`, the monotonic instant the router
/// runs on; `nowMilliseconds`, the Unix wall clock that sealed packets and broadcasts carry) and,
/// where it mints packet ids, a random source; it returns the ``Step`` to carry out: the writes to
/// make now (they never wait, §13.2.7), the events and channel messages to report in order, the
/// pings answered, and a reason to close the input's link when its packet was malformed (§13.1).
/// The value does no I/O and takes no lock; its only side effect is logging through its `Logger`.
///
/// State it keeps:
/// - the router (link-state database, routes, duplicate cache, neighbour budgets §13.11);
/// - ``Known`` nodes: name and static key from a handshake or the newest verified advert;
/// - every node's channel attachments (§13.12) and this node's own, signed into its adverts;
/// - pings by nonce (§13.10): `sent`, then `answered` when the pong comes (the shell holds whoever
///   waits and is told through ``Step/answeredPings``);
/// - the pong budget (at most ``maxPongsPerSecond`` answers per wall-clock second).
///
/// - Important: a value type with no synchronisation: its shell (``MeshNode``) owns it.
package struct MeshNodeStateMachine: Sendable {
    /// What a verified advert (or a handshake) taught us about a node.
    struct Known: Sendable {
        var peer: PeerID
        var staticKey: Curve25519.KeyAgreement.PublicKey
        /// Its Ed25519 identity key (32 bytes), as its handshake or its signed advert proved it.
        var identityKey: Data?
        /// The sequence of the advert the name and key came from; `nil` when they came from a
        /// handshake (which is always current).
        var sequence: UInt64?
        /// Its current signed prekey, verified (§19.1): what a first end-to-end session begins on.
        var prekey: SignedPrekey?
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
        /// Nonces of pings whose pong just came (§13.10).
        package var answeredPings: [UInt64] = []

        package init() {}
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

    /// Where a ping this node sent stands (§13.10).
    enum PingState: Sendable, Equatable {
        /// Sent; no pong yet.
        case sent
        /// The pong came.
        case answered
    }

    /// How far a sealed packet's clock may be from ours before it is refused as a replay (§13.6).
    static let freshness: Duration = .seconds(600)
    /// Pongs answered per second at most (§13.10).
    static let maxPongsPerSecond = 20

    /// This node's keys.
    let identity: LocalIdentity
    /// This node as adverts, broadcasts and sealed packets name it (``rename(_:now:)`` changes it).
    private(set) var me: PeerID
    var router: Router
    var known: [NodeID: Known] = [:]
    /// The channel attachments each node's latest verified advert carries (§13.12).
    var attachments: [NodeID: [UInt32: Data]] = [:]
    /// This node's channel attachments, carried in its adverts (§13.12).
    private(set) var localAttachments: [UInt32: Data] = [:]
    /// This node's end-to-end sessions and prekeys (§19.6–§19.8): a shared reference, thread-safe.
    let endToEnd: EndToEndStore
    /// When a repair was last sent to each node (§19.7: at most one per ``repairInterval``).
    var repairsSent: [NodeID: RouterInstant] = [:]
    /// The least time between two repairs sent to one node.
    static let repairInterval: Duration = .seconds(10)
    /// Repairs sent per second at most, to all nodes together: each begins a session (three X25519
    /// agreements), so packets that name unknown sessions under many origins cannot buy more.
    static let maxRepairsPerSecond = 10
    /// Repairs this node may still send in the current second of its clock.
    var repairBudget: (second: Int64, left: Int) = (0, 0)
    /// When a packet dropped for want of budget was last logged (at most once a second).
    var budgetLoggedAt: RouterInstant?
    /// Pings this node sent across the mesh, by nonce (§13.10).
    var pings: [UInt64: PingState] = [:]
    /// Pongs this node may still send in the current wall-clock second (§13.10).
    var pongBudget: (second: Int64, left: Int) = (0, 0)
    /// Other nodes' key rotations, checked once each (§20.2).
    var rotations = RotationBook()
    let logger: Logger

    /// Creates the node with no neighbours.
    /// - Parameters:
    ///   - peer: this node's identity and name.
    ///   - configuration: the router's limits and timings.
    ///   - initialSequence: the sequence of its first advert; pass the wall clock in milliseconds, so
    ///     that a restarted node's adverts replace its old ones (§13.2).
    ///   - now: the current instant.
    ///   - logger: where dropped packets are logged.
    package init(peer: LocalPeer, configuration: RoutingConfiguration, initialSequence: UInt64, now: RouterInstant,
                 logger: Logger) {
        self.identity = peer.identity
        self.me = peer.peerID
        self.logger = logger
        let endToEnd = EndToEndStore(identity: peer.identity, dataDirectory: peer.dataDirectory, logger: logger)
        self.endToEnd = endToEnd
        self.router = Router(localNode: peer.identity.nodeID, configuration: configuration, initialSequence: initialSequence,
                             now: now, signAdvert: Self.advertSigner(identity: peer.identity, name: peer.peerID.displayName, attachments: [:],
                                                                     prekey: endToEnd.signedPrekey))
        rotations.recordOwn(peer.identity.rotations)
    }

    /// The router's advert signer for what this node's adverts carry now (values, not references).
    private static func advertSigner(identity: LocalIdentity, name: String, attachments: [UInt32: Data],
                                     prekey: SignedPrekey) -> @Sendable (LinkStateAdvert) -> Data {
        let signedPrekey: SignedPrekeyPayload = {
            var payload = SignedPrekeyPayload()
            payload.id = prekey.id
            payload.publicKey = prekey.publicKey
            payload.signature = prekey.signature
            return payload
        }()
        let list = attachments.sorted { $0.key < $1.key }.map {
            var attachment = ChannelAttachmentPayload()
            attachment.channel = $0.key
            attachment.data = $0.value
            return attachment
        }
        return { advert in
            var payload = LinkStatePayload()
            payload.displayName = name
            payload.sequence = advert.sequence
            payload.neighbors = advert.neighbors.map {
                var neighbor = LinkStateNeighborPayload()
                neighbor.nodeID = Data($0.id.bytes)
                neighbor.latencyUs = $0.latencyMicros
                return neighbor
            }
            payload.attachments = list
            payload.signedPrekey = signedPrekey
            return MeshSigning.signLinkState(payload, identity: identity).serialized
        }
    }

    // MARK: Queries

    /// The nodes this node can reach now, nearest first.
    var reachable: [MeshRoute] {
        router.reachable.map { meshRoute($0) }
            .sorted { ($0.hops, $0.peer.displayName, $0.peer.id) < ($1.hops, $1.peer.displayName, $1.peer.id) }
    }

    /// The route to one node, if it is reachable.
    func route(to node: NodeID) -> MeshRoute? { router.route(to: node).map { meshRoute($0) } }

    /// The neighbour packets to a node go to first, if it is reachable (no path built).
    func nextHop(to node: NodeID) -> NodeID? { router.route(to: node)?.nextHop }

    /// The peer handle of a node known from its advert or handshake.
    func peer(_ node: NodeID) -> PeerID? { known[node]?.peer }

    /// A node's Ed25519 identity key as its handshake or signed advert proved it, if known.
    func identityKey(of node: NodeID) -> Data? {
        node == identity.nodeID ? identity.signingKey.publicKey.rawRepresentation : known[node]?.identityKey
    }

    /// The attachment a node's latest verified advert carries for a channel (this node's own for
    /// this node), §13.12.
    func attachment(of node: NodeID, channel: UInt32) -> Data? {
        node == identity.nodeID ? localAttachments[channel] : attachments[node]?[channel]
    }

    /// When the router next needs ``timerFired(now:)``.
    var nextDeadline: RouterInstant? { router.nextDeadline }

    /// Every node's latest verified advert (the topology as this node sees it).
    var topology: [MeshTopologyEntry] {
        router.database.map { advert in
            MeshTopologyEntry(
                node: advert.origin == identity.nodeID ? me : (known[advert.origin]?.peer ?? Self.unnamed(advert.origin)),
                neighbors: advert.neighbors.map { MeshTopologyEntry.Link(node: $0.id, latency: .microseconds(Int64($0.latencyMicros))) })
        }
    }

    /// Where a ping stands, `nil` when it is not (or no longer) registered.
    func ping(_ nonce: UInt64) -> PingState? { pings[nonce] }

    static func unnamed(_ node: NodeID) -> PeerID {
        // A short hex name is always a valid display name.
        try! PeerID(id: node, displayName: node.shortHex)
    }

    func meshRoute(_ route: Route) -> MeshRoute {
        func peer(_ node: NodeID) -> PeerID { known[node]?.peer ?? Self.unnamed(node) }
        return MeshRoute(peer: peer(route.destination), hops: route.hops, nextHop: peer(route.nextHop),
                         path: route.path.map(peer),
                         hopLatencies: route.hopLatenciesMicros.map { .microseconds(Int64($0)) })
    }

    // MARK: Inputs

    /// A link to a neighbour was admitted; its handshake proved the neighbour's static key, so the
    /// neighbour is known (name and key) before its first advert arrives.
    package mutating func neighborUp(_ peer: PeerID, staticKey: Data, identityKey: Data? = nil, prekey: SignedPrekey? = nil,
                                     latency: Duration?, now: RouterInstant) -> Step {
        let micros = latency.map(Self.micros) ?? 1_000
        var renamed: SessionEvent?
        if let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: staticKey) {
            if let old = known[peer.id]?.peer, old.displayName != peer.displayName {
                renamed = .peerRenamed(peer, previousName: old.displayName)
            }
            known[peer.id] = Known(peer: peer, staticKey: key, identityKey: identityKey ?? known[peer.id]?.identityKey,
                                   sequence: known[peer.id]?.sequence, prekey: prekey ?? known[peer.id]?.prekey)
        }
        let actions = router.neighborUp(peer.id, latencyMicros: micros, now: now)
        var step = execute(actions)
        if let renamed { step.events.insert(renamed, at: 0) }
        return step
    }

    /// This node's display name changed: adverts, broadcasts and sealed packets carry the new one
    /// from now on, and a new advert tells the mesh (at once, or when the rate limit allows).
    mutating func rename(_ peer: PeerID, now: RouterInstant) -> Step {
        me = peer
        return advertContentChanged(now: now)
    }

    /// Sets or removes this node's attachment for a channel; a new advert tells the mesh (at once,
    /// or when the rate limit allows), §13.12.
    mutating func setAttachment(_ data: Data?, channel: UInt32, now: RouterInstant) -> Step {
        guard localAttachments[channel] != data else { return Step() }
        localAttachments[channel] = data
        return advertContentChanged(now: now)
    }

    /// This node's prekey changed (a weekly rotation, §19.1): a new advert publishes it.
    mutating func prekeyChanged(now: RouterInstant) -> Step {
        advertContentChanged(now: now)
    }

    private mutating func advertContentChanged(now: RouterInstant) -> Step {
        router.signAdvert = Self.advertSigner(identity: identity, name: me.displayName, attachments: localAttachments,
                                              prekey: endToEnd.signedPrekey)
        let actions = router.attachmentChanged(now: now)
        return execute(actions)
    }

    /// A neighbour's link ended.
    mutating func neighborDown(_ node: NodeID, now: RouterInstant) -> Step {
        let actions = router.neighborDown(node, now: now)
        return execute(actions)
    }

    /// A neighbour's link measured a round trip.
    mutating func neighborLatency(_ node: NodeID, _ latency: Duration, now: RouterInstant) -> Step {
        let actions = router.neighborLatency(node, micros: Self.micros(latency), now: now)
        return execute(actions)
    }

    /// The router's timer is due.
    mutating func timerFired(now: RouterInstant) -> Step {
        let actions = router.timerFired(now: now)
        return execute(actions)
    }

    /// Starts a ping (§13.10): a fresh nonce (never 0, none in use) drawn from `random`, registered
    /// as sent before the ping goes out.
    /// - Returns: the nonce for the ping's payload.
    mutating func startPing(random: inout some RandomNumberGenerator) -> UInt64 {
        var nonce: UInt64
        repeat { nonce = UInt64.random(in: 1...UInt64.max, using: &random) } while pings[nonce] != nil
        pings[nonce] = .sent
        return nonce
    }

    /// Forgets a ping: its pong came and was taken, or nobody waits any more.
    /// - Returns: where it stood.
    @discardableResult
    mutating func forgetPing(_ nonce: UInt64) -> PingState? { pings.removeValue(forKey: nonce) }

    /// Sends a signed broadcast to every node within the hop limit.
    /// - Parameters:
    ///   - content: what it carries.
    ///   - sentAt: the wall clock it carries, in Unix milliseconds.
    ///   - now: the current instant.
    ///   - random: the source of its packet id.
    /// - Returns: the step (no sends when there is no neighbour).
    mutating func broadcast(_ content: BroadcastPayload.OneOf_Content, sentAt: Int64, now: RouterInstant,
                            random: inout some RandomNumberGenerator) -> Step {
        let packetID = PacketID(high: random.next(), low: random.next())
        var body = BroadcastPayload()
        body.packetID = Data(packetID.bytes)
        body.displayName = me.displayName
        body.sentAtMs = sentAt
        body.content = content
        let signed = MeshSigning.signBroadcast(body, identity: identity)
        let actions = router.broadcast(payload: signed.serialized, packetID: packetID, now: now)
        return execute(actions)
    }

    /// Seals content for a node on an end-to-end session with it (§13.6, §19.6) and routes it.
    /// - Parameters:
    ///   - content: what it carries.
    ///   - node: the destination.
    ///   - fresh: begin a new session (a repair, §19.7).
    ///   - now: the current instant.
    ///   - nowMilliseconds: the wall clock the sealed packet carries (Unix milliseconds, §13.6).
    ///   - random: the source of its packet id.
    /// - Returns: the step, or `nil` when the node is not reachable (or its keys are unknown).
    /// - Throws: ``EndToEndError`` when the content does not fit a sealed packet.
    mutating func sendSealed(_ content: SealedPayload.OneOf_Content, to node: NodeID, fresh: Bool = false, now: RouterInstant,
                             nowMilliseconds: Int64, random: inout some RandomNumberGenerator) throws(EndToEndError) -> Step? {
        guard let known = known[node], router.route(to: node) != nil else { return nil }
        let packetID = PacketID(high: random.next(), low: random.next())
        let header = SealHeader(origin: identity.nodeID, destination: node, packetID: Data(packetID.bytes))
        let peerKeys = known.prekey.flatMap { prekey in
            (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: prekey.publicKey)).map {
                PairSessions.PeerKeys(staticKey: known.staticKey, prekeyID: prekey.id, prekey: $0)
            }
        }
        let sealed: Data
        do {
            sealed = try endToEnd.seal(content, displayName: me.displayName, sealedAtMilliseconds: nowMilliseconds, header: header,
                                       peer: peerKeys, fresh: fresh)
        } catch where error.code == .noPrekey {
            logger.debug("cannot seal yet: no session with the node and its signed prekey is not known", metadata: ["mesh.node": "\(node.shortHex)"])
            return nil
        }
        guard case .sent(let actions) = router.unicast(payload: sealed, to: node, packetID: packetID, now: now) else { return nil }
        return execute(actions)
    }

    // MARK: Internals

    static func micros(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return UInt32.max }
        return UInt32(clamping: max(1, whole.addingReportingOverflow(attoseconds / 1_000_000_000_000).partialValue))
    }

    /// The step for the router's actions; `opened` is what a delivered packet carries here.
    ///
    /// Callers take the router's actions into a local first: in `execute(router.received(…))` Swift
    /// holds a copy of `self` for the call while the argument mutates `self.router`, so the router's
    /// duplicate cache (8,192 entries) was copied on every packet.
    ///
    /// `relaying` is the packet as it came, when the actions answer a received one: the router's
    /// copies of it go out re-framed from it (``reframe(_:as:)``), everything else is encoded.
    func execute(_ actions: [RouterAction], opened: Opened? = nil, relaying received: RoutedPayload? = nil) -> Step {
        var step = Step()
        for action in actions {
            switch action {
            case .send(let packet, let neighbor):
                if let received, let relayed = Self.reframe(received, as: packet) {
                    step.sends.append((neighbor, relayed))
                } else {
                    step.sends.append((neighbor, Self.encode(packet)))
                }
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
                        let meshRoute = meshRoute(route)
                        step.events.append(.reachabilityChanged(meshRoute.peer, meshRoute))
                    case .unreachable(let node):
                        step.events.append(.reachabilityChanged(known[node]?.peer ?? Self.unnamed(node), nil))
                    }
                }
            case .dropped(let packet, let reason):
                if reason != .duplicate {
                    logger.debug("dropped a routed packet", metadata: ["mesh.origin": "\(packet.origin.shortHex)", "route.drop": "\(reason)", "frame.ttl": "\(packet.hopLimit)"])
                }
            }
        }
        return step
    }
}
