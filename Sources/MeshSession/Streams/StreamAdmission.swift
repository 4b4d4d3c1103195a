/// Whether a node may open one more stream here (PROTOCOL.md §17.2, §17.7), as a value: the
/// per-node open rate (a token bucket) and the stream counts. No I/O; the clock is passed in.
struct StreamAdmission: Sendable {
    /// Nodes whose open rate is remembered at most; a full bucket is forgotten first, else the oldest.
    static let maxTrackedNodes = 1_024

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let limits: StreamLimits
    private var buckets: [NodeID: Bucket] = [:]

    init(limits: StreamLimits) { self.limits = limits }

    /// Decides on an open from `node`.
    /// - Parameters:
    ///   - node: the opener.
    ///   - fromNode: streams this node holds from it.
    ///   - inAll: incoming streams this node holds.
    ///   - pending: streams the application has not taken yet.
    ///   - now: the time.
    /// - Returns: `nil` to accept, else the close code and reason to refuse with (`busy`).
    mutating func admit(_ node: NodeID, fromNode: Int, inAll: Int, pending: Int, now: ContinuousClock.Instant) -> (StreamCloseCode, String)? {
        if fromNode >= limits.maxStreamsPerPeer { return (.busy, "\(fromNode) streams from this node already (limit \(limits.maxStreamsPerPeer))") }
        if inAll >= limits.maxIncomingStreams { return (.busy, "\(inAll) incoming streams already (limit \(limits.maxIncomingStreams))") }
        if pending >= limits.pendingCapacity { return (.busy, "\(pending) streams wait for the application (limit \(limits.pendingCapacity))") }
        var bucket = buckets[node] ?? Bucket(tokens: Double(limits.openBurst), updated: now)
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(Double(limits.openBurst), bucket.tokens + max(0, seconds) * Double(limits.opensPerSecond))
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            buckets[node] = bucket
            return (.busy, "more than \(limits.openBurst) opens, then \(limits.opensPerSecond) a second")
        }
        bucket.tokens -= 1
        if buckets[node] == nil, buckets.count >= Self.maxTrackedNodes { evict(now: now) }
        buckets[node] = bucket
        return nil
    }

    private mutating func evict(now: ContinuousClock.Instant) {
        let full = buckets.first { $0.value.tokens + 1 >= Double(limits.openBurst) }?.key
        if let victim = full ?? buckets.min(by: { $0.value.updated < $1.value.updated })?.key {
            buckets[victim] = nil
        }
    }
}

/// Streams that ended recently, so that a late packet of one is answered with how it ended (a
/// `finished` close again, which completes an opener whose first one was lost) rather than
/// `unknownStream` (PROTOCOL.md §17.5). Bounded: ``capacity`` entries for ``lifetime``.
struct RecentlyClosedStreams: Sendable {
    /// Entries kept at most; the oldest is forgotten first.
    static let capacity = 1_024
    /// How long an entry is kept.
    static let lifetime: Duration = .seconds(120)

    typealias Key = StreamKey

    private var entries: [Key: (code: StreamCloseCode, at: ContinuousClock.Instant)] = [:]
    private var order: [Key] = []

    /// Remembers how a stream ended.
    mutating func insert(_ key: Key, code: StreamCloseCode, now: ContinuousClock.Instant) {
        if entries[key] == nil { order.append(key) }
        entries[key] = (code, now)
        while order.count > Self.capacity {
            entries[order.removeFirst()] = nil
        }
    }

    /// How the stream ended, if it did recently.
    mutating func code(for key: Key, now: ContinuousClock.Instant) -> StreamCloseCode? {
        while let first = order.first, let entry = entries[first], now >= entry.at + Self.lifetime {
            entries[first] = nil
            order.removeFirst()
        }
        return entries[key]?.code
    }
}
