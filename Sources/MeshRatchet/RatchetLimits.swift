/// Bounds on what a ratchet session stores for messages that have not arrived yet
/// (out of order or lost). They bind the receiver: a peer that claims a message number far ahead
/// cannot make this node derive or store more than these.
public struct RatchetLimits: Hashable, Sendable {
    /// The most message keys one received message may make this node skip (derive and keep):
    /// 1,000 by default (Signal's `MAX_SKIP`).
    public var maxSkip: UInt32 = 1_000
    /// The most skipped message keys kept in all; the oldest are forgotten first (their messages
    /// then fail as if tampered): 2,000 by default.
    public var maxStoredSkipped = 2_000

    /// The largest value either bound may have (a stored state with more is refused, and larger
    /// values set here are treated as this): 100,000.
    public static let ceiling = 100_000

    /// Creates the defaults.
    public init() {}
}
