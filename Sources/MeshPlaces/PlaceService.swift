import Foundation
import Logging
import MeshSession
import MeshStore
import Places
import SwiftProtobuf

/// Something the places layer reports to the application.
public enum PlacesEvent: Sendable, Hashable {
    /// A pin arrived from another node (broadcast, or in a catch-up when its author became reachable).
    case pinAdded(SharedPin)
    /// Its author withdrew a pin (or a catch-up no longer lists it).
    case pinWithdrawn(SharedPin)
}

/// The places application over a session (PROTOCOL.md §14), on ``MeshSession/ChannelID/places``
/// (channel 3, §13.12): answers other nodes' lookups from this node's data, looks places up here
/// or across the mesh, remembers this node's location, and shares, stores and withdraws pins.
///
/// It registers channel 3 when created. ``run(_:)`` advertises this node's data sets as the
/// channel's attachment and handles the channel's messages; the application hands it the
/// session's reachability changes (``handle(_:)``), on which it sends pin catch-ups. Pins and the
/// location are kept in the ``MessageStore`` and written before a call returns. Store calls run
/// on the session's blocking pool (``MeshSession/Session/runBlocking(_:)``).
///
/// This type is thread-safe (an actor).
public actor PlaceService {
    /// The setting key under which ``here`` is remembered.
    static let hereKey = "places.here"

    /// This node's data.
    public nonisolated let local: LocalPlaces
    private let session: Session
    private nonisolated let channel: MeshChannel
    private let store: MessageStore
    private let logger: Logger
    private let answerTimeout: Duration
    private let defaultHere: Coordinate?
    private var limiter = QueryRateLimiter()
    private var pending: [NodeID: Pending] = [:]
    private var reachable: Set<NodeID> = []
    private var blocked: Set<NodeID> = []
    private var advertised = false
    /// Answers to nodes with no route yet (a lookup can arrive before the asker's advert), sent
    /// when the route appears, given up after the answer timeout.
    private var unsent: [NodeID: [(message: PlacesPayload, until: ContinuousClock.Instant)]] = [:]

    private struct Pending {
        var asked: [NodeID: (peer: PeerID, hops: Int)]
        var answers: [NodeID: PlaceAnswer] = [:]
        var continuation: CheckedContinuation<Void, Never>?
    }

    /// Creates the service.
    /// - Parameters:
    ///   - session: the session; channel 3 is registered on it.
    ///   - store: where pins and the location are kept.
    ///   - local: this node's data sets (none for a node without data).
    ///   - answerTimeout: how long a lookup waits for peers' answers.
    ///   - defaultHere: the location ``here()`` gives while none was set with ``setHere(_:)``
    ///     (the chat's configuration file sets it).
    ///   - logger: for dropped input.
    /// - Throws: ``MeshSession/SessionError`` `channelInUse` when channel 3 is registered already.
    public init(session: Session, store: MessageStore, local: LocalPlaces, answerTimeout: Duration = PlacesLimits.answerTimeout,
                defaultHere: Coordinate? = nil, logger: Logger) throws(SessionError) {
        self.channel = try session.register(channel: .places, limits: PlacesLimits.channel)
        self.session = session
        self.store = store
        self.local = local
        self.answerTimeout = answerTimeout
        self.defaultHere = defaultHere
        self.logger = logger
    }

    // MARK: Location

    /// This node's remembered location (``setHere(_:)``), else the default location given at
    /// creation, if any.
    /// - Throws: ``StoreError`` when the store cannot be read.
    public func here() async throws -> Coordinate? {
        guard let text = try await db({ try $0.setting(Self.hereKey) }) else { return defaultHere }
        return (try? Coordinate(parsing: text)) ?? defaultHere
    }

    /// Remembers this node's location, on disk when it returns.
    /// - Parameter point: the location, or `nil` to forget it.
    /// - Throws: ``StoreError`` when the write fails.
    public func setHere(_ point: Coordinate?) async throws {
        let text = point.map { "\($0.latitude),\($0.longitude)" }
        try await db { try $0.setSetting(Self.hereKey, to: text) }
    }

    // MARK: Lookups

    /// The reachable peers whose advertised data covers a point, nearest first, with their data sets.
    /// - Parameter point: the point.
    /// - Returns: the peers with hops.
    public nonisolated func coveringPeers(_ point: Coordinate) -> [(peer: PeerID, hops: Int)] {
        session.reachablePeers.compactMap { route in
            let sets = placeSets(of: route.peer)
            return sets.contains { $0.covers(point) } ? (route.peer, route.hops) : nil
        }
    }

    /// The reachable peers that advertise any place data, with their data sets.
    public nonisolated var peersWithData: [(peer: PeerID, sets: [PlaceSetInfo])] {
        session.reachablePeers.compactMap { route in
            let sets = placeSets(of: route.peer)
            return sets.isEmpty ? nil : (route.peer, sets)
        }
    }

    /// The data sets a node advertises in its channel 3 attachment (§14.1), those that validate.
    /// - Parameter peer: the node.
    /// - Returns: at most ``PlacesLimits/maxPlaceSets`` sets; none when it advertises none.
    public nonisolated func placeSets(of peer: PeerID) -> [PlaceSetInfo] {
        PlaceSetInfo.sets(fromAttachment: channel.attachment(of: peer))
    }

    /// Looks places up: from this node's data when it covers the point, otherwise from the
    /// reachable peers whose data covers it (at most ``PlacesLimits/maxPeersAsked``, across hops),
    /// waiting for their answers up to the answer timeout.
    /// - Parameter lookup: the lookup.
    /// - Returns: the merged places with their sources; ``LookupResult/nobodyCovers`` when
    ///   neither this node nor a reachable peer holds data there.
    public func lookup(_ lookup: PlaceLookup) async -> LookupResult {
        if local.covers(lookup.centre) {
            let answer = local.answer(lookup)
            return Self.merge(lookup, [(nil, 0, answer)],
                              sources: [.init(peer: nil, hops: 0, outcome: .answered(count: answer.hits.count, total: answer.total))])
        }
        let candidates = coveringPeers(lookup.centre).prefix(PlacesLimits.maxPeersAsked)
        guard !candidates.isEmpty else { return LookupResult(lookup: lookup, hits: [], sources: [], total: 0) }
        var unreachable: [LookupResult.Source] = []
        var message = PlacesPayload()
        message.query = lookup.payload
        // Registered before the first send: an answer can arrive while a later send is awaited
        // (the actor is re-entrant), and it must find its lookup.
        pending[lookup.id] = Pending(asked: Dictionary(candidates.map { ($0.peer.id, $0) }, uniquingKeysWith: { first, _ in first }))
        for (peer, hops) in candidates {
            do {
                try await send(message, to: peer)
            } catch {
                pending[lookup.id]?.asked[peer.id] = nil
                unreachable.append(.init(peer: peer, hops: hops, outcome: .unreachable("\(error)")))
            }
        }
        let asked = pending[lookup.id]?.asked ?? [:]
        if !asked.isEmpty {
            let timeout = answerTimeout
            let timer = Task { [weak self, session] in
                // Cancelled once every answer came: nothing to finish.
                guard (try? await session.sleep(for: timeout)) != nil else { return }
                await self?.finish(lookup.id)
            }
            await withCheckedContinuation { continuation in
                if pending[lookup.id].map({ $0.answers.count == $0.asked.count }) ?? true {
                    continuation.resume()
                } else {
                    pending[lookup.id]?.continuation = continuation
                }
            }
            timer.cancel()
        }
        let done = pending.removeValue(forKey: lookup.id) ?? Pending(asked: asked)
        var answers: [(PeerID?, Int, PlaceAnswer)] = []
        var sources: [LookupResult.Source] = []
        for (node, who) in asked.sorted(by: { ($0.value.hops, $0.value.peer.displayName) < ($1.value.hops, $1.value.peer.displayName) }) {
            guard let answer = done.answers[node] else {
                sources.append(.init(peer: who.peer, hops: who.hops, outcome: .noAnswer))
                continue
            }
            if let refused = answer.refused {
                sources.append(.init(peer: who.peer, hops: who.hops, outcome: .refused(refused)))
            } else {
                answers.append((who.peer, who.hops, answer))
                sources.append(.init(peer: who.peer, hops: who.hops, outcome: .answered(count: answer.hits.count, total: answer.total)))
            }
        }
        return Self.merge(lookup, answers, sources: sources + unreachable)
    }

    private func finish(_ id: NodeID) {
        guard let continuation = pending[id]?.continuation else { return }
        pending[id]?.continuation = nil
        continuation.resume()
    }

    /// Merges answers: distances and bearings from the lookup's point; places farther than the
    /// radius (a peer's mistake) are left out; one per (folded name, position); nearest first.
    static func merge(_ lookup: PlaceLookup, _ answers: [(PeerID?, Int, PlaceAnswer)], sources: [LookupResult.Source]) -> LookupResult {
        var hits: [LookupResult.Hit] = []
        var seen = Set<String>()
        let slack = 1.0 + lookup.radius.metres * 1e-9
        for (peer, _, answer) in answers {
            for hit in answer.hits {
                let distance = Geodesy.distance(from: lookup.centre, to: hit.coordinate)
                guard distance <= lookup.radius.metres + slack else { continue }
                let key = "\(PlaceIndex.searchKey(for: hit.name))|\(hit.coordinate.latitude)|\(hit.coordinate.longitude)"
                guard seen.insert(key).inserted else { continue }
                hits.append(.init(name: hit.name, coordinate: hit.coordinate, distance: .metres(distance),
                                  bearing: Geodesy.bearing(from: lookup.centre, to: hit.coordinate), placeSet: hit.placeSet, source: peer))
            }
        }
        hits.sort { a, b in
            if a.distance != b.distance { return a.distance < b.distance }
            if a.name != b.name { return a.name < b.name }
            return a.placeSet < b.placeSet
        }
        let total = answers.reduce(0) { $0 + $1.2.total }
        return LookupResult(lookup: lookup, hits: Array(hits.prefix(lookup.limit)), sources: sources, total: total)
    }

    // MARK: Pins

    /// Shares a pin with the room: stored first (durable when this returns), then broadcast.
    /// - Parameters:
    ///   - coordinate: where.
    ///   - label: 1–64 bytes.
    ///   - note: at most 256 bytes.
    ///   - lifetime: 1 minute to 7 days.
    /// - Returns: the pin, and whether no neighbour was there to take it now (it reaches
    ///   nodes when they become reachable, ``handle(_:)``).
    /// - Throws: ``PlacesInputError`` for a bad label, note, position or lifetime; ``StoreError``
    ///   (`pinsFull`); ``SessionError`` when the broadcast is refused.
    public func pin(_ coordinate: Coordinate, label: String, note: String = "",
                    lifetime: Duration = PlacesLimits.defaultPinLifetime) async throws -> (pin: SharedPin, sentToNobody: Bool) {
        let now = session.loopDate
        let pin = try SharedPin(author: session.peer.peerID, coordinate: coordinate, label: label, note: note,
                                createdAt: now, lifetime: lifetime)
        let stored = pin.stored(receivedAt: now)
        try await db { try $0.savePin(stored, now: now) }
        var message = PlacesPayload()
        message.pin = pin.payload
        let nobody = try await channel.broadcast(try! message.serializedData())
        return (pin, nobody)
    }

    /// Withdraws pins of this node everywhere: marked withdrawn here, then a withdrawal is broadcast.
    /// - Parameter ids: the pins' ids.
    /// - Returns: the pins withdrawn (those that were this node's and live).
    /// - Throws: ``StoreError``, ``SessionError``.
    public func unpin(_ ids: [String]) async throws -> [SharedPin] {
        let me = session.peer.peerID.id
        var withdrawn: [SharedPin] = []
        for id in ids {
            let now = session.loopDate
            guard let pin = try await db({ try $0.withdrawPin(id: id, by: me, now: now) }) else { continue }
            var message = PlacesPayload()
            var withdrawal = PinWithdrawalPayload()
            withdrawal.pinID = Data((try? NodeID(hex: pin.id))?.bytes ?? [])
            message.unpin = withdrawal
            try await channel.broadcast(try! message.serializedData())
            withdrawn.append(SharedPin(pin))
        }
        return withdrawn
    }

    /// The live pins (everyone's), oldest first.
    /// - Throws: ``StoreError``.
    public func pins() async throws -> [SharedPin] {
        let now = session.loopDate
        try await db { try $0.prunePins(now: now) }
        let blocked = self.blocked
        return try await db { try $0.pins(now: now) }.filter { !blocked.contains($0.author) }.map(SharedPin.init)
    }

    /// Ignores nodes: their pins, withdrawals and lookups are dropped, and ``pins()`` leaves
    /// out the pins they made.
    /// - Parameter nodes: the blocked nodes (replacing the previous set).
    public func setBlocked(_ nodes: Set<NodeID>) {
        blocked = nodes
    }

    // MARK: Input

    /// Sets this node's channel 3 attachment to its data sets (§14.1), once: call it before the
    /// session starts so that the first advert carries them (``run(_:)`` calls it otherwise).
    public func advertise() async {
        guard !advertised else { return }
        advertised = true
        do {
            try await channel.setAttachment(PlaceSetInfo.attachment(local.sets.map(\.info), logger: logger))
        } catch {
            logger.error("could not advertise this node's place data", metadata: ["error": "\(error)"])
        }
    }

    /// Advertises this node's data sets (``advertise()``), then handles the channel's messages
    /// (``handle(_:)``) until the channel closes (the session disconnected).
    /// - Parameter show: shows what a message changed (pins added or withdrawn).
    public func run(_ show: @escaping @Sendable (PlacesEvent) async -> Void) async {
        await advertise()
        for await message in channel.messages {
            for change in await handle(message) { await show(change) }
        }
    }

    /// Handles one message of channel 3: lookups are answered, answers matched with their
    /// lookups, pins stored. Malformed input, a message from a blocked node, and a message that
    /// came the wrong way (a pin sealed, a lookup broadcast) are logged and dropped.
    /// - Parameter message: the message.
    /// - Returns: what to show.
    public func handle(_ message: ChannelMessage) async -> [PlacesEvent] {
        if blocked.contains(message.sender.id) { return [] }
        let payload: PlacesPayload
        do {
            payload = try PlacesPayload(serializedBytes: message.payload)
        } catch {
            logger.notice("dropped a malformed places message", metadata: ["mesh.origin": "\(message.sender)", "error": "\(error)"])
            return []
        }
        return await handle(payload, from: message.sender, isPrivate: message.delivery == .sealed)
    }

    /// Handles a session event: a node that becomes reachable is sent this node's live pins, so
    /// it catches up with pins and withdrawals it missed, and the answers that waited for its
    /// route. Other events are ignored.
    /// - Parameter event: the event.
    /// - Returns: what to show (nothing today).
    public func handle(_ event: SessionEvent) async -> [PlacesEvent] {
        switch event {
        case .reachabilityChanged(let peer, let route):
            if route == nil {
                reachable.remove(peer.id)
            } else if reachable.insert(peer.id).inserted {
                await sendCatchUp(to: peer)
            }
            if route != nil, let waiting = unsent.removeValue(forKey: peer.id) {
                let now = session.clock.now
                for (message, until) in waiting where until > now {
                    try? await send(message, to: peer)
                }
            }
            return []
        default:
            return []
        }
    }

    private func handle(_ message: PlacesPayload, from sender: PeerID, isPrivate: Bool) async -> [PlacesEvent] {
        do {
            switch message.body {
            case .query(let query)? where isPrivate:
                await answer(query, from: sender)
                return []
            case .answer(let payload)? where isPrivate:
                let answer = try PlaceAnswer(validating: payload)
                guard var lookup = pending[answer.id], lookup.asked[sender.id] != nil else {
                    logger.debug("ignored a places answer to no lookup of ours (late or unasked)", metadata: ["mesh.origin": "\(sender)"])
                    return []
                }
                lookup.answers[sender.id] = answer
                pending[answer.id] = lookup
                if lookup.answers.count == lookup.asked.count { finish(answer.id) }
                return []
            case .pin(let payload)? where !isPrivate:
                let now = session.loopDate
                let pin = try SharedPin(validating: payload, author: sender, now: now)
                let stored = pin.stored(receivedAt: now)
                let change = try await db { try $0.savePin(stored, now: now) }
                return change == .added ? [.pinAdded(pin)] : []
            case .unpin(let payload)? where !isPrivate:
                guard let id = try? NodeID(bytes: payload.pinID) else {
                    throw PlacesInputError("withdrawn pin id has \(payload.pinID.count) bytes, expected 16")
                }
                let now = session.loopDate
                let withdrawn = try await db { try $0.withdrawPin(id: id.hex, by: sender.id, now: now) }
                return withdrawn.map { [.pinWithdrawn(SharedPin($0))] } ?? []
            case .pins(let set)? where isPrivate:
                guard set.pins.count <= PlacesLimits.maxPinsPerSet else {
                    throw PlacesInputError("pin catch-up has \(set.pins.count) pins, at most \(PlacesLimits.maxPinsPerSet)")
                }
                let now = session.loopDate
                let pins = try set.pins.map { payload throws(PlacesInputError) in
                    try SharedPin(validating: payload, author: sender, now: now).stored(receivedAt: now)
                }
                // 0 (unset): a sender older than the field; any pin it does not list goes.
                let asOf = set.asOfMs > 0 ? Date(timeIntervalSince1970: Double(set.asOfMs) / 1000) : nil
                let (added, withdrawn) = try await db { try $0.replacePins(of: sender.id, with: pins, asOf: asOf, now: now) }
                return added.map { .pinAdded(SharedPin($0)) } + withdrawn.map { .pinWithdrawn(SharedPin($0)) }
            case nil:
                logger.debug("ignored a places message of an unknown kind (a newer peer's)", metadata: ["mesh.origin": "\(sender)"])
                return []
            default:
                throw PlacesInputError("a places \(Self.kind(message)) must be \(isPrivate ? "broadcast" : "sealed"), not \(isPrivate ? "sealed" : "broadcast")")
            }
        } catch {
            logger.notice("dropped a places message", metadata: ["mesh.origin": "\(sender)", "error": "\(error)"])
            return []
        }
    }

    private static func kind(_ message: PlacesPayload) -> String {
        switch message.body {
        case .query: "lookup"
        case .answer: "answer"
        case .pin: "pin"
        case .unpin: "withdrawal"
        case .pins: "pin catch-up"
        case nil: "message"
        }
    }

    private func answer(_ query: PlaceQueryPayload, from sender: PeerID) async {
        var reply: PlaceAnswer
        do {
            let lookup = try PlaceLookup(validating: query)
            if let refusal = limiter.admit(sender.id, now: session.clock.now) {
                reply = PlaceAnswer(id: lookup.id, hits: [], total: 0, refused: refusal)
            } else if local.sets.isEmpty {
                reply = PlaceAnswer(id: lookup.id, hits: [], total: 0, refused: "no place data here")
            } else {
                reply = local.answer(lookup)
            }
        } catch {
            logger.notice("refused a places lookup", metadata: ["mesh.origin": "\(sender)", "error": "\(error)"])
            guard let id = try? NodeID(bytes: query.queryID) else { return }
            reply = PlaceAnswer(id: id, hits: [], total: 0, refused: error.message)
        }
        var message = PlacesPayload()
        message.answer = reply.payload
        do {
            try await send(message, to: sender)
        } catch where error.code == .notReachable {
            // The lookup outran the asker's advert: answer when its route appears.
            let now = session.clock.now
            var waiting = (unsent[sender.id] ?? []).filter { $0.until > now }
            if waiting.count < Int(PlacesLimits.queriesPerNodeBurst) { waiting.append((message, now + answerTimeout)) }
            unsent[sender.id] = waiting
            if unsent.count > 1024 { unsent = unsent.filter { $0.value.contains { $0.until > now } } }
        } catch {
            logger.info("could not answer a places lookup", metadata: ["mesh.origin": "\(sender)", "error": "\(error)"])
        }
    }

    private func sendCatchUp(to peer: PeerID) async {
        do {
            let now = session.loopDate
            let mine = try await db { [me = session.peer.peerID.id] in try $0.pins(now: now, by: me) }
            var set = PinSetPayload()
            // A pin made after this read (while the set is on its way) must not be withdrawn by it.
            set.asOfMs = Int64(exactly: (now.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
            set.pins = mine.suffix(PlacesLimits.maxPinsPerSet).map { SharedPin($0).payload }
            var message = PlacesPayload()
            message.pins = set
            try await send(message, to: peer)
        } catch {
            logger.info("could not send pins to a newly reachable node", metadata: ["mesh.peer": "\(peer)", "error": "\(error)"])
        }
    }

    /// Seals a places message to one node on channel 3.
    private func send(_ message: PlacesPayload, to peer: PeerID) async throws(SessionError) {
        // Serializing a message built in Swift cannot fail.
        try await channel.send(try! message.serializedData(), to: peer)
    }

    @discardableResult
    private func db<T: Sendable>(_ body: @escaping @Sendable (MessageStore) throws -> T) async throws -> T {
        let store = self.store
        return try await Session.runBlocking { try body(store) }
    }
}
