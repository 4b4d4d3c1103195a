import struct Foundation.Data
import MeshWire

/// Link-state routing for one node, as a pure state machine (ROUTING-SPEC).
///
/// Every node floods a ``LinkStateAdvert`` listing its neighbours; every node keeps the adverts
/// in a bounded database, computes shortest paths over the links that both ends list, and
/// forwards unicasts hop by hop along them. Broadcasts follow the origin's shortest-path tree
/// (or flood, see ``BroadcastStrategy``).
///
/// The shell reports link events (``neighborUp(_:latencyMicros:now:)``,
/// ``neighborDown(_:now:)``, ``neighborLatency(_:micros:now:)``), received packets
/// (``received(_:from:now:)``, adverts only after their signature was verified) and
/// timers (``timerFired(now:)`` at ``nextDeadline``), and asks to send (``broadcast(payload:packetID:now:)``,
/// ``unicast(payload:to:packetID:now:)``). Each input returns the ``RouterAction``s to carry out,
/// in order. Time is injected: the router reads no clock and starts no task.
///
/// Transitions of this node's own advert:
/// - a change of the neighbour set (or a latency change of more than 25 % and 1 ms) originates an
///   advert at once when none went out within ``RoutingConfiguration/minAdvertInterval``, else marks
///   one pending, sent by the ``timerFired(now:)`` at the end of that interval (changes batch);
/// - with no change, the advert is re-sent every ``RoutingConfiguration/advertRefreshInterval``;
/// - a received advert claiming this node as origin with a sequence at or above the next one
///   (left over from before a restart) makes the node jump past it and originate.
///
/// Received adverts are delivered (``RouterAction/deliver(_:)``) only when new, so the layer
/// above learns names and keys from their attachments once per advert. Whenever an input
/// changes the routes, one ``RouterAction/reachabilityChanged(_:)`` lists every change.
///
/// - Important: a value type with no synchronisation: the shell owns it (an actor or one event loop).
public struct Router: Sendable {
    /// This node.
    public let localNode: NodeID
    /// The limits and timings.
    public let configuration: RoutingConfiguration

    /// Returns the attachment for an own advert (the layer above's signed wire form). The layer
    /// above replaces it when what its adverts carry changes (a new name, new channel attachments),
    /// then calls ``attachmentChanged(now:)``; a closure over values keeps the router a pure value.
    public var signAdvert: @Sendable (LinkStateAdvert) -> Data
    /// Live neighbours with their latest measured latency.
    var live: [NodeID: UInt32] = [:]
    /// The sequence the next own advert gets.
    var nextSequence: UInt64
    /// The last advert this node originated.
    var ownAdvert: LinkStateAdvert?
    /// The latencies listed in ``ownAdvert``: the link weights this node computes with.
    var advertised: [NodeID: UInt32] = [:]
    var lastOriginatedAt: RouterInstant?
    var advertPending = false
    var store: LinkStateDatabase
    var duplicates: DuplicateCache
    var topology = Topology()
    var routes: [NodeID: Route] = [:]
    /// When the graph last changed; broadcasts flood for ``RoutingConfiguration/broadcastSettleTime`` after.
    var lastTopologyChange: RouterInstant?
    /// Broadcast forwarding decisions per origin for the current graph (at most maxNodes + 1).
    var plans: [NodeID: BroadcastPlan] = [:]
    /// Each live neighbour's budgets for the work its packets cause (PROTOCOL.md §13.11).
    public internal(set) var budgets = NeighborBudgets()

    /// Creates the router of a node that has no neighbours yet.
    /// - Parameters:
    ///   - localNode: this node.
    ///   - configuration: limits and timings; traps when ``RoutingConfiguration/validationFailure`` is not `nil`.
    ///   - initialSequence: the sequence of the first own advert. Pass something that grows across
    ///     restarts (the shell passes wall-clock milliseconds at start), so that others do not
    ///     ignore the restarted node's adverts as old.
    ///   - now: the current time.
    ///   - signAdvert: returns the attachment for an own advert (the layer above's signed wire form);
    ///     called with an empty attachment each time the router originates.
    public init(
        localNode: NodeID,
        configuration: RoutingConfiguration = .init(),
        initialSequence: UInt64,
        now: RouterInstant,
        signAdvert: @escaping @Sendable (LinkStateAdvert) -> Data
    ) {
        if let failure = configuration.validationFailure {
            preconditionFailure("invalid RoutingConfiguration: \(failure)")
        }
        self.localNode = localNode
        self.configuration = configuration
        self.nextSequence = initialSequence
        self.signAdvert = signAdvert
        self.store = LinkStateDatabase(maxNodes: configuration.maxNodes, lifetime: configuration.advertLifetime)
        self.duplicates = DuplicateCache(capacity: configuration.duplicateCacheCapacity, lifetime: configuration.duplicateLifetime)
        self.topology = Topology(local: localNode, localLinks: [:], database: store)
        self.budgets = NeighborBudgets(workConserving: configuration.workConservingBudgets)
    }

    // MARK: - Queries

    /// When the shell must call ``timerFired(now:)`` next: a pending advert, the refresh, or an
    /// advert's expiry; `nil` when nothing is scheduled.
    public var nextDeadline: RouterInstant? {
        var deadlines: [RouterInstant] = []
        if let last = lastOriginatedAt {
            deadlines.append(last + (advertPending ? configuration.minAdvertInterval : configuration.advertRefreshInterval))
        }
        if let expiry = store.nextExpiry { deadlines.append(expiry) }
        return deadlines.min()
    }

    /// The current route to `destination`, or `nil` when it is unreachable.
    /// - Parameter destination: the node.
    /// - Returns: the route.
    public func route(to destination: NodeID) -> Route? { routes[destination] }

    /// Every current route, ordered by destination.
    public var reachable: [Route] { routes.keys.sorted().compactMap { routes[$0] } }

    /// Every advert known: this node's latest and the received ones, ordered by origin (for a
    /// topology view; unreachable origins stay until their adverts expire).
    public var database: [LinkStateAdvert] {
        var adverts = store.entries.values.map(\.advert)
        if let ownAdvert { adverts.append(ownAdvert) }
        return adverts.sorted { $0.origin < $1.origin }
    }

    /// The live neighbours, ordered by id.
    public var neighbors: [NodeID] { live.keys.sorted() }

    /// The sequence of the last advert this node originated, if any.
    public var currentSequence: UInt64? { ownAdvert?.sequence }

    /// Whether a packet id was seen within the duplicate lifetime (checked before costly work such
    /// as opening a sealed packet; ``received(_:from:now:)`` remembers it).
    public func hasSeen(_ packetID: PacketID, now: RouterInstant) -> Bool {
        duplicates.contains(.packet(packetID), now: now)
    }

    /// How long a live neighbour's packet must wait before its `units` of `work` fit the budget, or
    /// `nil` when they fit now (PROTOCOL.md §13.11). Nothing is taken.
    public func budgetWait(_ work: NeighborWork, units: Int = 1, from neighbor: NodeID, now: RouterInstant) -> Duration? {
        guard live[neighbor] != nil else { return nil }
        return budgets.wait(work, units: units, from: neighbor, now: now)
    }

    /// Takes `units` of work (one unless the kind counts more, ``NeighborWork``) from a live
    /// neighbour's budget (PROTOCOL.md §13.11): the shell asks before verifying, opening or relaying
    /// one of its packets.
    /// - Returns: whether the work may be done; `false` (counted) means drop the packet.
    public mutating func takeBudget(_ work: NeighborWork, units: Int = 1, from neighbor: NodeID, now: RouterInstant) -> Bool {
        guard live[neighbor] != nil else { return true }
        return budgets.take(work, units: units, from: neighbor, now: now)
    }

    /// Takes several kinds of work for one packet from a live neighbour's budget, all or none
    /// (``NeighborBudgets/take(all:from:now:)``).
    /// - Returns: `nil` when the work may be done, else the first kind over budget (counted): drop the packet.
    public mutating func takeBudget(all charges: [(NeighborWork, Int)], from neighbor: NodeID, now: RouterInstant) -> NeighborWork? {
        guard live[neighbor] != nil else { return nil }
        return budgets.take(all: charges, from: neighbor, now: now)
    }

    /// Notes that a live neighbour's work failed (``NeighborBudgets/noteFailed(_:from:now:)``): it
    /// borrows none of that work for a while (PROTOCOL.md §13.11).
    public mutating func noteFailedWork(_ work: NeighborWork, from neighbor: NodeID, now: RouterInstant) {
        guard live[neighbor] != nil else { return }
        budgets.noteFailed(work, from: neighbor, now: now)
    }

    // MARK: - Link events

    /// A link to a neighbour came up (or, for a known neighbour, its latency was measured again).
    ///
    /// The new neighbour is sent every advert in the database so it learns the topology at once;
    /// this node's advert changes (at once or batched).
    /// - Parameters:
    ///   - neighbor: the neighbour.
    ///   - latencyMicros: the measured latency in microseconds.
    ///   - now: the current time.
    /// - Returns: the actions.
    public mutating func neighborUp(_ neighbor: NodeID, latencyMicros: UInt32, now: RouterInstant) -> [RouterAction] {
        guard neighbor != localNode else { return [] }
        guard live[neighbor] == nil else { return neighborLatency(neighbor, micros: latencyMicros, now: now) }
        live[neighbor] = latencyMicros
        var actions: [RouterAction] = []
        let originated = requestAdvert(now: now, into: &actions)
        if !originated, let ownAdvert {
            actions.append(.send(advertPacket(ownAdvert), to: neighbor))
        }
        for origin in store.entries.keys.sorted() {
            if let packet = store.entries[origin]?.packet.relayed { actions.append(.send(packet, to: neighbor)) }
        }
        recompute(now: now, into: &actions)
        return actions
    }

    /// A link to a neighbour went down.
    /// - Parameters:
    ///   - neighbor: the neighbour.
    ///   - now: the current time.
    /// - Returns: the actions (this node's new advert, reachability changes).
    public mutating func neighborDown(_ neighbor: NodeID, now: RouterInstant) -> [RouterAction] {
        guard live.removeValue(forKey: neighbor) != nil else { return [] }
        budgets.forget(neighbor)
        var actions: [RouterAction] = []
        requestAdvert(now: now, into: &actions)
        recompute(now: now, into: &actions)
        return actions
    }

    /// A neighbour's latency was measured again. The advert changes only when the value differs
    /// from the advertised one by more than 25 % and more than 1 ms (still rate-limited).
    /// - Parameters:
    ///   - neighbor: the neighbour.
    ///   - micros: the latency in microseconds.
    ///   - now: the current time.
    /// - Returns: the actions.
    public mutating func neighborLatency(_ neighbor: NodeID, micros: UInt32, now: RouterInstant) -> [RouterAction] {
        guard live[neighbor] != nil else { return [] }
        live[neighbor] = micros
        guard let current = advertised[neighbor] else { return [] }
        let difference = micros > current ? micros - current : current - micros
        guard difference > 1000, UInt64(difference) * 4 > UInt64(current) else { return [] }
        var actions: [RouterAction] = []
        requestAdvert(now: now, into: &actions)
        recompute(now: now, into: &actions)
        return actions
    }

    /// What this node's advert carries besides its neighbours (the signed attachment: its display
    /// name, for instance) changed: a new advert goes out at once, or when the rate limit allows
    /// (``RoutingConfiguration/minAdvertInterval``).
    /// - Parameter now: the current time.
    /// - Returns: the actions (the new advert for every neighbour, or none while it waits).
    public mutating func attachmentChanged(now: RouterInstant) -> [RouterAction] {
        var actions: [RouterAction] = []
        requestAdvert(now: now, into: &actions)
        return actions
    }

    // MARK: - Timers

    /// The time in ``nextDeadline`` came: sends a pending or refresh advert, expires old adverts.
    /// - Parameter now: the current time.
    /// - Returns: the actions.
    public mutating func timerFired(now: RouterInstant) -> [RouterAction] {
        var actions: [RouterAction] = []
        if let last = lastOriginatedAt {
            if advertPending, now >= last + configuration.minAdvertInterval {
                originate(now: now, into: &actions)
            } else if now >= last + configuration.advertRefreshInterval {
                originate(now: now, into: &actions)
            }
        }
        _ = store.expire(now: now)
        duplicates.expire(now: now)
        recompute(now: now, into: &actions)
        return actions
    }

    // MARK: - Own adverts

    /// Originates an advert now if the rate limit allows, else marks one pending.
    /// - Returns: whether it originated.
    @discardableResult
    mutating func requestAdvert(now: RouterInstant, into actions: inout [RouterAction]) -> Bool {
        if let last = lastOriginatedAt, now < last + configuration.minAdvertInterval {
            advertPending = true
            return false
        }
        originate(now: now, into: &actions)
        return true
    }

    /// Builds, signs and floods this node's advert.
    mutating func originate(now: RouterInstant, into actions: inout [RouterAction]) {
        let chosen = live.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            .prefix(configuration.maxNeighborsPerAdvert)
            .sorted { $0.key < $1.key }
        var advert = LinkStateAdvert(
            origin: localNode,
            sequence: nextSequence,
            neighbors: chosen.map { AdvertNeighbor(id: $0.key, latencyMicros: $0.value) }
        )
        advert.attachment = signAdvert(advert)
        nextSequence &+= 1
        ownAdvert = advert
        advertised = Dictionary(uniqueKeysWithValues: chosen.map { ($0.key, $0.value) })
        lastOriginatedAt = now
        advertPending = false
        _ = duplicates.insert(.advert(localNode, advert.sequence), now: now)
        let packet = advertPacket(advert)
        for neighbor in live.keys.sorted() { actions.append(.send(packet, to: neighbor)) }
    }

    /// The packet that carries an own advert.
    func advertPacket(_ advert: LinkStateAdvert) -> RoutedPacket {
        RoutedPacket(
            origin: advert.origin,
            packetID: .advert(origin: advert.origin, sequence: advert.sequence),
            hopLimit: RoutingConfiguration.maxHopLimit,
            kind: .advert(advert)
        )
    }

    // MARK: - Routes

    /// Rebuilds the graph and the routes; reports what changed.
    mutating func recompute(now: RouterInstant, into actions: inout [RouterAction]) {
        var localLinks: [NodeID: UInt32] = [:]
        for (neighbor, latency) in live { localLinks[neighbor] = advertised[neighbor] ?? latency }
        let graph = Topology(local: localNode, localLinks: localLinks, database: store)
        guard graph != topology else { return }
        topology = graph
        lastTopologyChange = now
        plans = [:]
        let tree = graph.shortestPathTree(from: localNode)
        var next: [NodeID: Route] = [:]
        for route in tree.routes { next[route.destination] = route }
        var changes: [ReachabilityChange] = []
        for destination in Set(next.keys).union(routes.keys).sorted() {
            switch (routes[destination], next[destination]) {
            case (nil, let route?):
                changes.append(.reachable(route))
            case (let old?, let route?):
                if old.nextHop != route.nextHop || old.hops != route.hops || old.path != route.path {
                    changes.append(.changed(route))
                }
            case (_?, nil):
                changes.append(.unreachable(destination))
            case (nil, nil):
                break
            }
        }
        routes = next
        if !changes.isEmpty { actions.append(.reachabilityChanged(changes)) }
    }
}
