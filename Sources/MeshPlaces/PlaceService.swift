import Foundation
import Logging
import MeshSession
import MeshStore
import MeshTransport
import MeshWire
import Places

/// Something the places layer reports to the application.
public enum PlacesEvent: Sendable, Hashable {
    /// A pin arrived from another node (broadcast, or in a catch-up when its author became reachable).
    case pinAdded(SharedPin)
    /// Its author withdrew a pin (or a catch-up no longer lists it).
    case pinWithdrawn(SharedPin)
}

/// The places application over a session (PROTOCOL.md §14): answers other nodes' lookups from
/// this node's data, looks places up here or across the mesh, remembers this node's location,
/// and shares, stores and withdraws pins.
///
/// The application hands it every session event (``handle(_:)``): places messages and
/// reachability changes; it returns what to show. Pins and the location are kept in the
/// ``MessageStore`` and written before a call returns. Store calls run on NIO's blocking pool.
public actor PlaceService {
    /// The setting key under which ``here`` is remembered.
    static let hereKey = "places.here"

    /// This node's data.
    public nonisolated let local: LocalPlaces
    private let session: Session
    private let store: MessageStore
    private let logger: Logger
    private let answerTimeout: Duration
    private let defaultHere: Coordinate?
    private var limiter = QueryRateLimiter()
    private var pending: [NodeID: Pending] = [:]
    private var reachable: Set<NodeID> = []
    private var blocked: Set<NodeID> = []
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
    ///   - session: the session (its ``Session/Configuration/placeSets`` should advertise `local`).
    ///   - store: where pins and the location are kept.
    ///   - local: this node's data sets (none for a node without data).
    ///   - answerTimeout: how long a lookup waits for peers' answers.
    ///   - defaultHere: the location ``here()`` gives while none was set with ``setHere(_:)``
    ///     (the chat's configuration file sets it).
    ///   - logger: for dropped input.
    public init(session: Session, store: MessageStore, local: LocalPlaces, answerTimeout: Duration = PlacesLimits.answerTimeout,
                defaultHere: Coordinate? = nil, logger: Logger) {
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
            let sets = session.placeSets(of: route.peer).compactMap { try? PlaceSetInfo(validating: $0) }
            return sets.contains { $0.covers(point) } ? (route.peer, route.hops) : nil
        }
    }

    /// The reachable peers that advertise any place data, with their data sets.
    public nonisolated var peersWithData: [(peer: PeerID, sets: [PlaceSetInfo])] {
        session.reachablePeers.compactMap { route in
            let sets = session.placeSets(of: route.peer).compactMap { try? PlaceSetInfo(validating: $0) }
            return sets.isEmpty ? nil : (route.peer, sets)
        }
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
                try await session.sendPlaces(message, to: peer)
            } catch {
                pending[lookup.id]?.asked[peer.id] = nil
                unreachable.append(.init(peer: peer, hops: hops, outcome: .unreachable("\(error)")))
            }
        }
        let asked = pending[lookup.id]?.asked ?? [:]
        if !asked.isEmpty {
            let timeout = answerTimeout
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
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
        let pin = try SharedPin(author: session.peer.peerID, coordinate: coordinate, label: label, note: note, lifetime: lifetime)
        let stored = pin.stored(receivedAt: Date())
        try await db { try $0.savePin(stored, now: Date()) }
        var message = PlacesPayload()
        message.pin = pin.payload
        let nobody = try await session.broadcastPlaces(message)
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
            guard let pin = try await db({ try $0.withdrawPin(id: id, by: me, now: Date()) }) else { continue }
            var message = PlacesPayload()
            var withdrawal = PinWithdrawalPayload()
            withdrawal.pinID = Data((try? NodeID(hex: pin.id))?.bytes ?? [])
            message.unpin = withdrawal
            try await session.broadcastPlaces(message)
            withdrawn.append(SharedPin(pin))
        }
        return withdrawn
    }

    /// The live pins (everyone's), oldest first.
    /// - Throws: ``StoreError``.
    public func pins() async throws -> [SharedPin] {
        try await db { try $0.prunePins(now: Date()) }
        let blocked = self.blocked
        return try await db { try $0.pins(now: Date()) }.filter { !blocked.contains($0.author) }.map(SharedPin.init)
    }

    /// Ignores nodes: their pins, withdrawals and lookups are dropped, and ``pins()`` leaves
    /// out the pins they made.
    /// - Parameter nodes: the blocked nodes (replacing the previous set).
    public func setBlocked(_ nodes: Set<NodeID>) {
        blocked = nodes
    }

    // MARK: Input

    /// Handles a session event: places messages (lookups are answered, answers matched with
    /// their lookups, pins stored) and reachability (a node that becomes reachable is sent this
    /// node's live pins, so it catches up with pins and withdrawals it missed). Other events are
    /// ignored. Malformed input is logged and dropped.
    /// - Parameter event: the event.
    /// - Returns: what to show.
    public func handle(_ event: SessionEvent) async -> [PlacesEvent] {
        switch event {
        case .places(let message, let sender, _, let isPrivate):
            if blocked.contains(sender.id) { return [] }
            return await handle(message, from: sender, isPrivate: isPrivate)
        case .reachabilityChanged(let peer, let route):
            if route == nil {
                reachable.remove(peer.id)
            } else if reachable.insert(peer.id).inserted {
                await sendCatchUp(to: peer)
            }
            if route != nil, let waiting = unsent.removeValue(forKey: peer.id) {
                for (message, until) in waiting where until > .now {
                    try? await session.sendPlaces(message, to: peer)
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
                let pin = try SharedPin(validating: payload, author: sender, now: Date())
                let stored = pin.stored(receivedAt: Date())
                let change = try await db { try $0.savePin(stored, now: Date()) }
                return change == .added ? [.pinAdded(pin)] : []
            case .unpin(let payload)? where !isPrivate:
                guard let id = try? NodeID(bytes: payload.pinID) else {
                    throw PlacesInputError("withdrawn pin id has \(payload.pinID.count) bytes, expected 16")
                }
                let withdrawn = try await db { try $0.withdrawPin(id: id.hex, by: sender.id, now: Date()) }
                return withdrawn.map { [.pinWithdrawn(SharedPin($0))] } ?? []
            case .pins(let set)? where isPrivate:
                guard set.pins.count <= PlacesLimits.maxPinsPerSet else {
                    throw PlacesInputError("pin catch-up has \(set.pins.count) pins, at most \(PlacesLimits.maxPinsPerSet)")
                }
                let now = Date()
                let pins = try set.pins.map { payload throws(PlacesInputError) in
                    try SharedPin(validating: payload, author: sender, now: now).stored(receivedAt: now)
                }
                let (added, withdrawn) = try await db { try $0.replacePins(of: sender.id, with: pins, now: now) }
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
            if let refusal = limiter.admit(sender.id, now: .now) {
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
            try await session.sendPlaces(message, to: sender)
        } catch where error.code == .notReachable {
            // The lookup outran the asker's advert: answer when its route appears.
            let now = ContinuousClock.now
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
            let mine = try await db { [me = session.peer.peerID.id] in try $0.pins(now: Date(), by: me) }
            var set = PinSetPayload()
            set.pins = mine.suffix(PlacesLimits.maxPinsPerSet).map { SharedPin($0).payload }
            var message = PlacesPayload()
            message.pins = set
            try await session.sendPlaces(message, to: peer)
        } catch {
            logger.info("could not send pins to a newly reachable node", metadata: ["mesh.peer": "\(peer)", "error": "\(error)"])
        }
    }

    @discardableResult
    private func db<T: Sendable>(_ body: @escaping @Sendable (MessageStore) throws -> T) async throws -> T {
        let store = self.store
        return try await EventLoops.runBlocking { try body(store) }
    }
}
