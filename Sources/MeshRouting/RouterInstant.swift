/// A point in time for the router: a monotonic offset from an origin the shell chooses.
///
/// The router never reads a clock. The shell passes the current instant to every input (for
/// example the time since its start from a `ContinuousClock`); tests drive it by hand.
public struct RouterInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The time since the shell's origin.
    public var offset: Duration

    /// The shell's origin.
    public static let zero = RouterInstant(offset: .zero)

    /// Creates an instant.
    /// - Parameter offset: the time since the shell's origin.
    public init(offset: Duration) {
        self.offset = offset
    }

    /// The instant `duration` later.
    /// - Parameter duration: how much later (negative for earlier).
    /// - Returns: the new instant.
    public func advanced(by duration: Duration) -> RouterInstant {
        RouterInstant(offset: offset + duration)
    }

    /// The time from `self` to `other` (negative when `other` is earlier).
    /// - Parameter other: the later instant.
    /// - Returns: the duration.
    public func duration(to other: RouterInstant) -> Duration {
        other.offset - offset
    }

    /// The instant `rhs` after `lhs`.
    public static func + (lhs: RouterInstant, rhs: Duration) -> RouterInstant { lhs.advanced(by: rhs) }

    /// The time from `rhs` to `lhs`.
    public static func - (lhs: RouterInstant, rhs: RouterInstant) -> Duration { lhs.offset - rhs.offset }

    /// Earlier first.
    public static func < (lhs: RouterInstant, rhs: RouterInstant) -> Bool { lhs.offset < rhs.offset }

    /// The offset, e.g. "1.5 seconds".
    public var description: String { "\(offset)" }
}
