/// The waits between dials of a link kept to an address (``Session/connect(host:port:redial:)``).
///
/// The first wait is ``initial`` (1 s); each failed dial doubles it up to ``cap`` (30 s). Each
/// wait is jittered to 75–100 % of its value so that the nodes of a cut mesh do not all dial
/// at the same instant. A link that stayed up for at least ``stable`` (5 s, longer than the
/// keepalive's 3.25 s) resets the waits (the next dial comes after about a second); a link that
/// dropped sooner counts as a failure, so a peer that accepts and closes at once is not dialled in
/// a tight loop.
///
/// A pure value: the randomness is a parameter.
public struct RedialBackoff: Sendable, Hashable {
    /// The first wait.
    public static let initial: Duration = .seconds(1)
    /// The longest wait.
    public static let cap: Duration = .seconds(30)
    /// How long a link must have lasted to reset the waits.
    public static let stable: Duration = .seconds(5)

    /// Failed dials (or short-lived links) since the last link that lasted.
    public private(set) var failures = 0

    /// Creates the schedule of a new address.
    public init() {}

    /// A dial failed (no link, or no handshake).
    public mutating func dialFailed() {
        failures = min(failures + 1, 32)
    }

    /// A link to the address ended after it was established.
    /// - Parameter lasted: how long it was up.
    public mutating func linkEnded(lasted: Duration) {
        failures = lasted >= Self.stable ? 0 : min(failures + 1, 32)
    }

    /// The wait before the next dial.
    /// - Parameter generator: the source of jitter.
    /// - Returns: between 75 % and 100 % of `initial · 2^(failures − 1)`, at most ``cap``
    ///   (no wait before the very first dial after a lasting link: about ``initial``).
    public func delay(using generator: inout some RandomNumberGenerator) -> Duration {
        let capMs = Self.cap.components.seconds * 1000
        var baseMs = Self.initial.components.seconds * 1000
        var doublings = max(failures - 1, 0)
        while doublings > 0, baseMs < capMs {
            baseMs *= 2
            doublings -= 1
        }
        baseMs = min(baseMs, capMs)
        let jittered = Int64.random(in: (baseMs * 3 / 4)...baseMs, using: &generator)
        return .milliseconds(jittered)
    }
}
