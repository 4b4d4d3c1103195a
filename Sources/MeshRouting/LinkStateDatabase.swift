import MeshWire

/// The adverts received from other nodes, at most one per origin (ROUTING-SPEC §3–§4).
///
/// Bounded by `maxNodes` origins; each advert expires `lifetime` after its receipt unless a newer
/// one replaces it. This node's own advert is not stored here.
struct LinkStateDatabase: Sendable {
    /// A stored advert with what the router needs to pass it on to a new neighbour.
    struct Entry: Sendable {
        var packet: RoutedPacket
        var advert: LinkStateAdvert
        var receivedAt: RouterInstant
        /// The neighbours the advert lists (itself excluded; the first entry wins on repeats).
        var listed: [NodeID: UInt32]
        /// The neighbour whose packet first brought this origin into the database.
        var introducedBy: NodeID
    }

    /// The outcome of offering an advert.
    enum Acceptance: Equatable {
        /// Stored; `topologyChanged` is false when it only refreshed the same neighbour list.
        case accepted(topologyChanged: Bool)
        /// Same or older sequence than the stored one.
        case duplicate
        /// A new origin while the database is full.
        case full
    }

    let maxNodes: Int
    let lifetime: Duration
    private(set) var entries: [NodeID: Entry] = [:]

    init(maxNodes: Int, lifetime: Duration) {
        self.maxNodes = maxNodes
        self.lifetime = lifetime
    }

    /// The stored sequence of `origin`, if any.
    func sequence(of origin: NodeID) -> UInt64? { entries[origin]?.advert.sequence }

    /// Offers a received advert.
    ///
    /// A new origin while the database is full takes the place of another (PROTOCOL.md §13.11):
    /// first of an origin that is unreachable (it contributes no route), else of the neighbour that
    /// introduced the most origins, when that is another neighbour holding at least two more than
    /// `neighbor` (so no neighbour keeps more than a fair share at the others' expense): its
    /// farthest origin goes. Else the advert is refused.
    /// - Parameters:
    ///   - advert: the verified advert.
    ///   - packet: the packet that carried it.
    ///   - neighbor: the neighbour it came from.
    ///   - now: the current time.
    ///   - hops: an origin's hop count in the current graph, `nil` when it is unreachable.
    mutating func offer(_ advert: LinkStateAdvert, in packet: RoutedPacket, from neighbor: NodeID, now: RouterInstant,
                        hops: (NodeID) -> Int?) -> Acceptance {
        let previous = entries[advert.origin]
        if let previous, advert.sequence <= previous.advert.sequence { return .duplicate }
        if previous == nil, entries.count >= maxNodes {
            guard let evicted = evictionCandidate(for: neighbor, hops: hops) else { return .full }
            entries[evicted] = nil
        }
        var listed: [NodeID: UInt32] = [:]
        for neighbor in advert.neighbors where neighbor.id != advert.origin && listed[neighbor.id] == nil {
            listed[neighbor.id] = neighbor.latencyMicros
        }
        entries[advert.origin] = Entry(packet: packet, advert: advert, receivedAt: now, listed: listed,
                                       introducedBy: previous?.introducedBy ?? neighbor)
        return .accepted(topologyChanged: previous?.listed != listed)
    }

    /// The origin a new one from `neighbor` may replace in a full database, or `nil` (see ``offer``).
    private func evictionCandidate(for neighbor: NodeID, hops: (NodeID) -> Int?) -> NodeID? {
        // Farthest first (unreachable is farthest of all), then oldest.
        let ranked = entries.map { (origin: $0.key, entry: $0.value, hops: hops($0.key) ?? .max) }
            .sorted { ($1.hops, $0.entry.receivedAt, $0.origin) < ($0.hops, $1.entry.receivedAt, $1.origin) }
        if let unreachable = ranked.first, unreachable.hops == .max { return unreachable.origin }
        var held: [NodeID: Int] = [:]
        for entry in entries.values { held[entry.introducedBy, default: 0] += 1 }
        guard let (largest, count) = held.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }),
              largest != neighbor, count > held[neighbor, default: 0] + 1 else { return nil }
        return ranked.first { $0.entry.introducedBy == largest && $0.origin != largest }?.origin
    }

    /// Removes the adverts received `lifetime` ago or earlier.
    /// - Returns: whether any was removed.
    mutating func expire(now: RouterInstant) -> Bool {
        let expired = entries.filter { $0.value.receivedAt + lifetime <= now }.keys
        for origin in expired { entries[origin] = nil }
        return !expired.isEmpty
    }

    /// When the next advert expires.
    var nextExpiry: RouterInstant? {
        entries.values.map { $0.receivedAt + lifetime }.min()
    }
}
