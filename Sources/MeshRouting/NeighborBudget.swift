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

    /// How long until `units` tokens are due, or `nil` when they are there now (nothing is taken).
    /// - Parameters:
    ///   - units: the tokens wanted (one by default; more than ``burst`` counts as ``burst``).
    ///   - now: the current time.
    /// - Returns: the wait, or `nil`.
    public func wait(units: Int = 1, now: RouterInstant) -> Duration? {
        let units = Double(min(max(1, units), burst))
        var tokens = self.tokens
        if now > updatedAt {
            let elapsed = now - updatedAt
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(Double(burst), tokens + seconds * Double(perSecond))
        }
        guard tokens < units else { return nil }
        guard perSecond > 0 else { return .seconds(1) }
        return .microseconds(Int64(((units - tokens) / Double(perSecond) * 1e6).rounded(.up)) + 1)
    }

    /// Whether the bucket has refilled to its capacity (a new bucket would be the same).
    /// - Parameter now: the current time.
    public func isFull(now: RouterInstant) -> Bool {
        guard now > updatedAt else { return tokens >= Double(burst) }
        let elapsed = now - updatedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return tokens + seconds * Double(perSecond) >= Double(burst)
    }

    /// Takes every token there is (a charge let past an empty bucket, ``NeighborBudgets``): the
    /// neighbour's own share starts again from nothing.
    /// - Parameter now: the current time.
    public mutating func empty(now: RouterInstant) {
        if now > updatedAt { updatedAt = now }
        tokens = 0
    }

    /// Takes one token if there is one.
    /// - Parameter now: the current time (an earlier time than the last one adds nothing).
    /// - Returns: whether a token was taken.
    public mutating func take(now: RouterInstant) -> Bool {
        take(1, now: now)
    }

    /// Takes `count` tokens if there are that many (none are taken otherwise).
    /// - Parameters:
    ///   - count: the tokens, at least 1 (a larger count than ``burst`` is never granted).
    ///   - now: the current time (an earlier time than the last one adds nothing).
    /// - Returns: whether they were taken.
    public mutating func take(_ count: Int, now: RouterInstant) -> Bool {
        if now > updatedAt {
            let elapsed = now - updatedAt
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(Double(burst), tokens + seconds * Double(perSecond))
            updatedAt = now
        }
        let wanted = Double(max(1, count))
        guard tokens >= wanted else { return false }
        tokens -= wanted
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
    /// Opening a sealed packet addressed to this node that makes it do Diffie-Hellman (§19.6): a
    /// prekey message (an X3DH agreement), or a session message that turns the ratchet or whose
    /// session is not in memory. One unit per packet.
    case opening
    /// Opening a session message addressed to this node (§19.6): one unit per message key it makes
    /// this node derive (a chain step; skipped keys included) and per started 16 KiB it authenticates,
    /// counted from its visible header before any of that work.
    case derivation
    /// Relaying a sealed packet addressed to another node that is not a session message (a prekey
    /// message, or a kind this node does not know). One unit per packet.
    case relaying
    /// Relaying a session message addressed to another node: one unit per packet and per started
    /// 16 KiB.
    case sessionRelaying
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
    /// - opening: 1,024 at once, then 1,024 a second (about 0.1–0.2 ms of X25519 each: a tenth to a
    ///   fifth of a core).
    /// - derivation: 16,384 at once, then 16,384 a second: a 60,000-byte chunk costs 5 units (one
    ///   key, four 16 KiB blocks), so one neighbour's honest chunks open at up to 3,276 a second
    ///   (196 MB/s); a forged header asking for the most skipped keys (2 × 128 + 1) costs 257 units,
    ///   so forgeries cost at most about 16,384 chain steps (two HMACs each) and 256 MiB of
    ///   authentication a second, a few percent of a core.
    /// - relaying: 512 at once, then 512 a second: half the next hop's opening budget, so that what
    ///   one flooding neighbour gets relayed leaves the next hop budget to open the honest packets
    ///   that come the same way.
    /// - derivation and sessionRelaying are work-conserving (``isWorkConserving``): these are each
    ///   neighbour's guaranteed share while another neighbour competes, not a cap on an idle node.
    /// - sessionRelaying: 8,192 at once, then 8,192 a second, in derivation's units: half the next
    ///   hop's derivation budget, for the same reason; 1,638 chunks of 60,000 bytes a second (98 MB/s)
    ///   through this node from one neighbour. A relay cannot tell a session message that will turn
    ///   the next hop's ratchet from one that will not, so a neighbour relaying forged ones can use up
    ///   the next hop's opening budget for the relay's link; chain steps through it still pass.
    /// - newOrigin: 64 at once, then 4 a second: a node joining a mesh of 64 nodes learns them at
    ///   once; a larger mesh fills in at the refreshes (every 30 s, §13.2.3). An advert flood of
    ///   invented nodes costs the victim (and the nodes behind it) 4 new nodes a second.
    /// Whether the budget is work-conserving (§13.11): a neighbour over it may go on while no other
    /// neighbour has been charged this kind of work for ``NeighborBudgets/contentionWindow``, so one
    /// neighbour alone can use an idle node fully; once another one is, the fixed budget binds each
    /// of them again, and each keeps its own share. A neighbour whose sealed packet for this node
    /// failed to open within that window borrows no derivation (``NeighborBudgets/noteFailed(_:from:now:)``).
    /// The kinds an honest bulk transfer uses (relaying and opening session messages); the others
    /// bound public-key work and stay fixed.
    public var isWorkConserving: Bool {
        switch self {
        case .sessionRelaying, .derivation: true
        case .verification, .broadcast, .opening, .relaying, .newOrigin: false
        }
    }

    public var budget: (burst: Int, perSecond: Int) {
        switch self {
        case .verification: (256, 100)
        case .broadcast: (1_024, 1_000)
        case .opening: (1_024, 1_024)
        case .derivation: (16_384, 16_384)
        case .relaying: (512, 512)
        case .sessionRelaying: (8_192, 8_192)
        case .newOrigin: (64, 4)
        }
    }
}

/// Per-neighbour token buckets for each ``NeighborWork``, and how many packets each kind dropped.
///
/// Bounded: a neighbour's buckets are made on its first packet and forgotten when its link goes
/// down (``forget(_:)``); a neighbour is admitted (a live link) before any of its packets count.
///
/// Work-conserving kinds (``NeighborWork/isWorkConserving``) also remember when each neighbour was
/// last charged for them, to tell whether another neighbour competes (``contentionWindow``).
public struct NeighborBudgets: Sendable {
    /// How recently another neighbour must have been charged a work-conserving kind of work for the
    /// fixed budget to bind (§13.11).
    public static let contentionWindow: Duration = .seconds(1)

    private var buckets: [NodeID: [NeighborWork: TokenBucket]] = [:]
    /// Per work-conserving kind: when each neighbour was last charged for it (bounded by the live
    /// neighbours, like ``buckets``).
    private var charged: [NeighborWork: [NodeID: RouterInstant]] = [:]
    /// Packets dropped for want of budget since this node started, per kind of work.
    public private(set) var dropped: [NeighborWork: Int] = [:]
    /// Charges let past an empty work-conserving budget because no other neighbour competed, per kind.
    public private(set) var borrowed: [NeighborWork: Int] = [:]
    /// Per work-conserving kind: when each neighbour last sent work of that kind that failed (a sealed
    /// packet for this node that did not open, ``noteFailed(_:from:now:)``). A neighbour that did may
    /// not borrow that kind for ``contentionWindow`` (bounded by the live neighbours).
    private var failed: [NeighborWork: [NodeID: RouterInstant]] = [:]

    /// Whether the work-conserving kinds may borrow while uncontended (``NeighborWork/isWorkConserving``).
    public let workConserving: Bool

    /// Creates empty budgets.
    /// - Parameter workConserving: whether the work-conserving kinds may go past an empty bucket
    ///   while no other neighbour competes (`false`: every budget is a fixed rate).
    public init(workConserving: Bool = true) {
        self.workConserving = workConserving
    }

    /// Whether a neighbour other than `neighbor` was charged `work` within ``contentionWindow``.
    /// - Parameters:
    ///   - work: the kind of work.
    ///   - neighbor: the neighbour asking.
    ///   - now: the current time.
    public func isContended(_ work: NeighborWork, by neighbor: NodeID, now: RouterInstant) -> Bool {
        guard let recent = charged[work] else { return false }
        return recent.contains { $0.key != neighbor && now - $0.value < Self.contentionWindow }
    }

    /// Whether `neighbor` may go past its empty `work` budget now: the kind is work-conserving, this
    /// node lets it borrow, no other neighbour competes, and none of `neighbor`'s own work of that kind
    /// failed within ``contentionWindow``.
    private func mayBorrow(_ work: NeighborWork, by neighbor: NodeID, now: RouterInstant) -> Bool {
        guard workConserving, work.isWorkConserving, !isContended(work, by: neighbor, now: now) else { return false }
        if let at = failed[work]?[neighbor], now - at < Self.contentionWindow { return false }
        return true
    }

    /// Notes that work of `neighbor`'s that this node did failed (a sealed packet for this node whose
    /// tag did not verify, or that named a session this node does not hold): for
    /// ``contentionWindow`` that neighbour gets only its fixed `work` budget, even on an idle node
    /// (§13.11). Work conservation is for senders whose work succeeds; a neighbour relaying
    /// forgeries keeps a fixed share of this node's CPU instead of all of it. Does nothing for a
    /// kind that is not work-conserving.
    /// - Parameters:
    ///   - work: the kind of work that failed.
    ///   - neighbor: the neighbour the packet came from.
    ///   - now: the current time.
    public mutating func noteFailed(_ work: NeighborWork, from neighbor: NodeID, now: RouterInstant) {
        guard work.isWorkConserving else { return }
        failed[work, default: [:]][neighbor] = now
    }

    private mutating func noteCharged(_ work: NeighborWork, by neighbor: NodeID, now: RouterInstant) {
        guard work.isWorkConserving else { return }
        charged[work, default: [:]][neighbor] = now
    }

    /// Takes `units` of `work` (one unless the kind counts more, ``NeighborWork``) from `neighbor`'s budget.
    /// - Returns: whether the work may be done; `false` counts a drop.
    public mutating func take(_ work: NeighborWork, units: Int = 1, from neighbor: NodeID, now: RouterInstant) -> Bool {
        var bucket = buckets[neighbor]?[work]
            ?? TokenBucket(burst: work.budget.burst, perSecond: work.budget.perSecond, now: now)
        var taken = bucket.take(units, now: now)
        if !taken, mayBorrow(work, by: neighbor, now: now) {
            bucket.empty(now: now)
            borrowed[work, default: 0] += 1
            taken = true
        }
        buckets[neighbor, default: [:]][work] = bucket
        if taken { noteCharged(work, by: neighbor, now: now) } else { dropped[work, default: 0] += 1 }
        return taken
    }

    /// Takes several kinds of work for one packet, all or none (``take(_:units:from:now:)``).
    /// - Parameters:
    ///   - charges: the kinds of work and their units.
    ///   - neighbor: the neighbour the packet came from.
    ///   - now: the current time.
    /// - Returns: `nil` when every charge was taken, else the first kind over budget (a drop is
    ///   counted for it, and nothing is taken).
    public mutating func take(all charges: [(NeighborWork, Int)], from neighbor: NodeID, now: RouterInstant) -> NeighborWork? {
        var mine = buckets[neighbor] ?? [:]
        var borrowing: [NeighborWork] = []
        for (work, units) in charges {
            var bucket = mine[work] ?? TokenBucket(burst: work.budget.burst, perSecond: work.budget.perSecond, now: now)
            if !bucket.take(units, now: now) {
                guard mayBorrow(work, by: neighbor, now: now) else {
                    dropped[work, default: 0] += 1
                    return work
                }
                bucket.empty(now: now)
                borrowing.append(work)
            }
            mine[work] = bucket
        }
        buckets[neighbor] = mine
        for work in borrowing { borrowed[work, default: 0] += 1 }
        for (work, _) in charges { noteCharged(work, by: neighbor, now: now) }
        return nil
    }

    /// How long `neighbor`'s packet must wait for `units` of `work`, or `nil` when they are there
    /// (nothing taken).
    /// - Parameters:
    ///   - work: the kind of work.
    ///   - units: the units the packet costs (one unless the kind counts more).
    ///   - neighbor: the neighbour the packet came from.
    ///   - now: the current time.
    /// - Returns: the wait, or `nil`.
    public func wait(_ work: NeighborWork, units: Int = 1, from neighbor: NodeID, now: RouterInstant) -> Duration? {
        guard let wait = buckets[neighbor]?[work]?.wait(units: units, now: now) else { return nil }
        if mayBorrow(work, by: neighbor, now: now) { return nil }
        return wait
    }

    /// Forgets a neighbour whose link went down (a reconnect starts with full buckets).
    public mutating func forget(_ neighbor: NodeID) {
        buckets[neighbor] = nil
        for work in charged.keys { charged[work]?[neighbor] = nil }
        for work in failed.keys { failed[work]?[neighbor] = nil }
    }
}
