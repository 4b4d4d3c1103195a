import NIOConcurrencyHelpers

/// Counts handshakes in progress on a listener and refuses new ones past a limit
/// (PROTOCOL.md §4.5: at most 128).
///
/// This type is thread-safe: links on every event loop share one budget.
public final class HandshakeBudget: Sendable {
    /// The default limit.
    public static let defaultLimit = 128

    /// The most handshakes allowed at once.
    public let limit: Int
    private let inProgress = NIOLockedValueBox(0)

    /// Creates a budget.
    /// - Parameter limit: the most handshakes at once.
    public init(limit: Int = HandshakeBudget.defaultLimit) {
        self.limit = limit
    }

    /// Takes one slot.
    /// - Returns: `false` when all slots are taken (the connection must be closed).
    public func acquire() -> Bool {
        inProgress.withLockedValue { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives a slot back.
    public func release() {
        inProgress.withLockedValue { $0 -= 1 }
    }

    /// The number of handshakes in progress.
    public var current: Int { inProgress.withLockedValue { $0 } }
}
