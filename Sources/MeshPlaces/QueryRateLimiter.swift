import MeshSession

/// Token buckets that bound the lookups this node answers: per asking node and in total
/// (``PlacesLimits/queriesPerNodePerSecond`` and friends). Time is injected; a pure value.
public struct QueryRateLimiter: Sendable {
    struct Bucket: Sendable {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let perNodeBurst: Double
    let perNodeRate: Double
    let totalBurst: Double
    let totalRate: Double
    var nodes: [NodeID: Bucket] = [:]
    var total: Bucket?

    /// Creates a limiter.
    /// - Parameters:
    ///   - perNodeBurst: lookups one node may make at once.
    ///   - perNodeRate: lookups per second one node may make in the long run.
    ///   - totalBurst: lookups all nodes may make at once.
    ///   - totalRate: lookups per second all nodes may make in the long run.
    public init(perNodeBurst: Double = PlacesLimits.queriesPerNodeBurst, perNodeRate: Double = PlacesLimits.queriesPerNodePerSecond,
                totalBurst: Double = PlacesLimits.queriesTotalBurst, totalRate: Double = PlacesLimits.queriesTotalPerSecond) {
        self.perNodeBurst = perNodeBurst
        self.perNodeRate = perNodeRate
        self.totalBurst = totalBurst
        self.totalRate = totalRate
    }

    /// Takes a token for one lookup from `node`.
    /// - Parameters:
    ///   - node: the asking node.
    ///   - now: the current time.
    /// - Returns: `nil` when it may be answered, else why not.
    public mutating func admit(_ node: NodeID, now: ContinuousClock.Instant) -> String? {
        var all = Self.refilled(total ?? Bucket(tokens: totalBurst, updated: now), burst: totalBurst, rate: totalRate, now: now)
        var mine = Self.refilled(nodes[node] ?? Bucket(tokens: perNodeBurst, updated: now), burst: perNodeBurst, rate: perNodeRate, now: now)
        defer {
            total = all
            nodes[node] = mine
            if nodes.count > 4096 { nodes = nodes.filter { $0.value.tokens < perNodeBurst } }
        }
        guard mine.tokens >= 1 else { return "rate limited: more than \(Int(perNodeRate)) lookups per second from one node" }
        guard all.tokens >= 1 else { return "rate limited: more than \(Int(totalRate)) lookups per second in all" }
        mine.tokens -= 1
        all.tokens -= 1
        return nil
    }

    private static func refilled(_ bucket: Bucket, burst: Double, rate: Double, now: ContinuousClock.Instant) -> Bucket {
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Bucket(tokens: min(burst, bucket.tokens + max(0, seconds) * rate), updated: max(now, bucket.updated))
    }
}
