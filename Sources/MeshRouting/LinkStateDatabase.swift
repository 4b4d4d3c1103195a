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
    mutating func offer(_ advert: LinkStateAdvert, in packet: RoutedPacket, now: RouterInstant) -> Acceptance {
        let previous = entries[advert.origin]
        if let previous, advert.sequence <= previous.advert.sequence { return .duplicate }
        if previous == nil, entries.count >= maxNodes { return .full }
        var listed: [NodeID: UInt32] = [:]
        for neighbor in advert.neighbors where neighbor.id != advert.origin && listed[neighbor.id] == nil {
            listed[neighbor.id] = neighbor.latencyMicros
        }
        entries[advert.origin] = Entry(packet: packet, advert: advert, receivedAt: now, listed: listed)
        return .accepted(topologyChanged: previous?.listed != listed)
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
