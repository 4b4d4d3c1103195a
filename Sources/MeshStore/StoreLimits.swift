/// The bounds of a ``MessageStore``: queue sizes, ages and retention.
///
/// Every table the store keeps is bounded by one of these: the outbox by
/// ``maxQueuedPerDestination`` and ``maxQueuedTotal`` (refusing new messages) and by
/// ``maxMessageAge`` (expiring old ones); held-back messages by ``maxHeldPerSender`` and
/// ``holdTimeout``; seen ids by ``seenRetention`` and ``maxSeen``; history by ``maxHistory``.
public struct StoreLimits: Sendable, Hashable {
    /// The most outbox entries for one destination (the mesh broadcast counts as one): 1000.
    public var maxQueuedPerDestination: Int
    /// The most outbox entries in all: 10,000.
    public var maxQueuedTotal: Int
    /// How long an outgoing message is retried before it expires; incoming private messages
    /// sent longer ago than this plus ``clockSkewAllowance`` are refused as stale: 7 days.
    public var maxMessageAge: Duration
    /// How far the sender's clock may differ from ours: 1 day. Incoming messages dated further
    /// in the future than this are refused too.
    public var clockSkewAllowance: Duration
    /// How long a seen message id is remembered to recognise duplicates: 8 days
    /// (``maxMessageAge`` + ``clockSkewAllowance``). Keep it at least that long, or a
    /// retransmission arriving after its id was forgotten but before it is stale is delivered twice.
    public var seenRetention: Duration
    /// The most seen ids remembered; the oldest are forgotten beyond it by
    /// ``MessageStore/prune(now:)``: 1,000,000.
    public var maxSeen: Int
    /// The most messages held back from one sender waiting for a gap: 1000 (then all are
    /// delivered in order; see ``InboundSequencer``).
    public var maxHeldPerSender: Int
    /// How long a held-back message waits for its gap to fill: 120 s.
    public var holdTimeout: Duration
    /// The most history rows kept; the oldest are pruned beyond it by ``MessageStore/prune(now:)``
    /// (messages still in the outbox are kept): 100,000.
    public var maxHistory: Int
    /// The most live pins kept from one author (this node included): 64. A new pin beyond it is refused.
    public var maxPinsPerAuthor: Int
    /// The most live pins kept in all: 2,000. A new pin beyond it is refused.
    public var maxPinsTotal: Int

    /// Creates limits; every argument defaults to the value documented on its property.
    /// - Parameters:
    ///   - maxQueuedPerDestination: see ``maxQueuedPerDestination``.
    ///   - maxQueuedTotal: see ``maxQueuedTotal``.
    ///   - maxMessageAge: see ``maxMessageAge``.
    ///   - clockSkewAllowance: see ``clockSkewAllowance``.
    ///   - seenRetention: see ``seenRetention``; `nil` means ``maxMessageAge`` + ``clockSkewAllowance``.
    ///   - maxSeen: see ``maxSeen``.
    ///   - maxHeldPerSender: see ``maxHeldPerSender``.
    ///   - holdTimeout: see ``holdTimeout``.
    ///   - maxHistory: see ``maxHistory``.
    ///   - maxPinsPerAuthor: see ``maxPinsPerAuthor``.
    ///   - maxPinsTotal: see ``maxPinsTotal``.
    public init(
        maxQueuedPerDestination: Int = 1000,
        maxQueuedTotal: Int = 10_000,
        maxMessageAge: Duration = .seconds(7 * 24 * 3600),
        clockSkewAllowance: Duration = .seconds(24 * 3600),
        seenRetention: Duration? = nil,
        maxSeen: Int = 1_000_000,
        maxHeldPerSender: Int = 1000,
        holdTimeout: Duration = .seconds(120),
        maxHistory: Int = 100_000,
        maxPinsPerAuthor: Int = 64,
        maxPinsTotal: Int = 2000
    ) {
        self.maxQueuedPerDestination = maxQueuedPerDestination
        self.maxQueuedTotal = maxQueuedTotal
        self.maxMessageAge = maxMessageAge
        self.clockSkewAllowance = clockSkewAllowance
        self.seenRetention = seenRetention ?? maxMessageAge + clockSkewAllowance
        self.maxSeen = maxSeen
        self.maxHeldPerSender = maxHeldPerSender
        self.holdTimeout = holdTimeout
        self.maxHistory = maxHistory
        self.maxPinsPerAuthor = maxPinsPerAuthor
        self.maxPinsTotal = maxPinsTotal
    }
}
