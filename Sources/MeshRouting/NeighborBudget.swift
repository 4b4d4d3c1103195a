import MeshWire

/// A token bucket: at most ``burst`` tokens, refilled at ``perSecond`` tokens a second; each unit of
/// work takes one. Time is injected (``RouterInstant``), so the bucket is a pure value.
public struct TokenBucket: Sendable, Hashable {
    /// The most tokens the bucket holds (and holds at first).
    public let burst: Int
    /// Tokens added per second.
    public let perSecond: Int
    private var tokens: Double
    private var updatedAt: RouterInstant

    /// Creates a full bucket.
    /// - Parameters:
    ///   - burst: the capacity, at least 1.
    ///   - perSecond: the refill rate, at least 0.
    ///   - now: the current time.
    public init(burst: Int, perSecond: Int, now: RouterInstant) {
        self.burst = max(1, burst)
        self.perSecond = max(0, perSecond)
        self.tokens = Double(self.burst)
        self.updatedAt = now
    }

    /// How long until a token is due, or `nil` when one is there now (nothing is taken).
    /// - Parameter now: the current time.
    /// - Returns: the wait, or `nil`.
    public func wait(now: RouterInstant) -> Duration? {
        var tokens = self.tokens
        if now > updatedAt {
            let elapsed = now - updatedAt
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(Double(burst), tokens + seconds * Double(perSecond))
        }
        guard tokens < 1 else { return nil }
        guard perSecond > 0 else { return .seconds(1) }
        return .microseconds(Int64(((1 - tokens) / Double(perSecond) * 1e6).rounded(.up)) + 1)
    }

    /// Whether the bucket has refilled to its capacity (a new bucket would be the same).
    /// - Parameter now: the current time.
    public func isFull(now: RouterInstant) -> Bool {
        guard now > updatedAt else { return tokens >= Double(burst) }
        let elapsed = now - updatedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return tokens + seconds * Double(perSecond) >= Double(burst)
    }

    /// Takes one token if there is one.
    /// - Parameter now: the current time (an earlier time than the last one adds nothing).
    /// - Returns: whether a token was taken.
    public mutating func take(now: RouterInstant) -> Bool {
        if now > updatedAt {
            let elapsed = now - updatedAt
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(Double(burst), tokens + seconds * Double(perSecond))
            updatedAt = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// The kinds of work one neighbour's packets make this node do, each with its own per-neighbour
/// budget (PROTOCOL.md §10, §13.11). Over budget, the packet is dropped (counted, logged at debug),
/// except a broadcast, whose link waits; the link stays up, so a flood costs only the flooding
/// neighbour's own traffic.
public enum NeighborWork: String, Sendable, Hashable, CaseIterable {
    /// Verifying a link-state advert's signature.
    case verification
    /// Checking a broadcast's signature (§13.5). Over budget the link *waits* (the node stops
    /// reading it until a token is due, and TCP slows the neighbour) instead of dropping: a
    /// broadcast has no receipt, so a dropped one would be lost.
    case broadcast
    /// Opening a sealed packet addressed to this node (a Diffie-Hellman and a decryption).
    case opening
    /// Relaying a sealed packet addressed to another node.
    case relaying
    /// Storing an advert from an origin the link-state database does not hold yet.
    case newOrigin

    /// The budget of one neighbour for this work: the constants, in one place (PROTOCOL.md §10).
    ///
    /// - verification: 256 at once, then 100 a second (a 1,024-node mesh refreshes 34 adverts a
    ///   second; a new neighbour's whole database, up to 1,024 adverts, comes in over its refreshes).
    ///   A larger burst let one neighbour's advert flood (each verified, stored and passed on) hold
    ///   the victim and its neighbours busy past their keepalive.
    /// - broadcast: 1,024 at once, then 1,000 a second (about 60 µs of Ed25519 each: 6 % of a core),
    ///   waited for, not dropped: 10,000 lines pasted at once arrive, at the budget's pace.
    /// - opening: 1,024 at once, then 1,024 a second (about 0.1 ms of X25519 each: a tenth of a core).
    /// - relaying: 512 at once, then 512 a second (30 MB/s of 60,000-byte file chunks): half the
    ///   next hop's opening budget, so that what one flooding neighbour gets relayed leaves the next
    ///   hop budget to open the honest packets that come the same way. It also caps one honest
    ///   neighbour's packets through this node at 512 a second.
    /// - newOrigin: 64 at once, then 4 a second: a node joining a mesh of 64 nodes learns them at
    ///   once; a larger mesh fills in at the refreshes (every 30 s, §13.2.3). An advert flood of
    ///   invented nodes costs the victim (and the nodes behind it) 4 new nodes a second.
    public var budget: (burst: Int, perSecond: Int) {
        switch self {
        case .verification: (256, 100)
        case .broadcast: (1_024, 1_000)
        case .opening: (1_024, 1_024)
        case .relaying: (512, 512)
        case .newOrigin: (64, 4)
        }
    }
}

/// Per-neighbour token buckets for each ``NeighborWork``, and how many packets each kind dropped.
///
/// Bounded: a neighbour's buckets are made on its first packet and forgotten when its link goes
/// down (``forget(_:)``); a neighbour is admitted (a live link) before any of its packets count.
public struct NeighborBudgets: Sendable {
    private var buckets: [NodeID: [NeighborWork: TokenBucket]] = [:]
    /// Packets dropped for want of budget since this node started, per kind of work.
    public private(set) var dropped: [NeighborWork: Int] = [:]

    /// Creates empty budgets.
    public init() {}

    /// Takes one unit of `work` from `neighbor`'s budget.
    /// - Returns: whether the work may be done; `false` counts a drop.
    public mutating func take(_ work: NeighborWork, from neighbor: NodeID, now: RouterInstant) -> Bool {
        var bucket = buckets[neighbor]?[work]
            ?? TokenBucket(burst: work.budget.burst, perSecond: work.budget.perSecond, now: now)
        let taken = bucket.take(now: now)
        buckets[neighbor, default: [:]][work] = bucket
        if !taken { dropped[work, default: 0] += 1 }
        return taken
    }

    /// Forgets a neighbour whose link went down (a reconnect starts with full buckets).
    /// How long `neighbor`'s packet must wait for `work`, or `nil` when a token is there (nothing taken).
    /// - Parameters:
    ///   - work: the kind of work.
    ///   - neighbor: the neighbour the packet came from.
    ///   - now: the current time.
    /// - Returns: the wait, or `nil`.
    public func wait(_ work: NeighborWork, from neighbor: NodeID, now: RouterInstant) -> Duration? {
        buckets[neighbor]?[work]?.wait(now: now)
    }

    public mutating func forget(_ neighbor: NodeID) {
        buckets[neighbor] = nil
    }
}
