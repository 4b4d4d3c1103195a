import NIOCore

/// One task's burst of writes on its link's event loop, for ``LinkWriter``: when the writer must
/// let the loop poll its sockets.
///
/// SwiftNIO runs every ready task before it polls, and an `await` that does not suspend keeps a
/// task running, so a task that sends without ever waiting would keep the loop from reading its
/// links (and their keepalives, PROTOCOL.md §7) for as long as it had data to send. A burst is the
/// writes between two runs of the writer's flush, which runs only once the writing task has given
/// the loop up; one that goes on for ``maxDuration`` or ``maxBytes`` pauses. A task that sends a
/// message and then waits for the answer starts a new burst with each message and never pauses.
///
/// A pure value: the clock is passed in.
struct WriteBurst {
    /// How long a burst may go on before the writer pauses: 1 ms, half the share of its loop a
    /// link's inbound path takes per turn.
    static let maxDuration = TimeAmount.milliseconds(1)
    /// Bytes a burst may write before the writer pauses.
    static let maxBytes = 4 * 1024 * 1024

    /// When the burst's first write was made; `nil` before it.
    private var started: NIODeadline?
    private var bytes = 0

    /// A write of `size` bytes at `now`.
    /// - Returns: whether the writer pauses after it (the next write then starts a new burst).
    mutating func wrote(_ size: Int, now: NIODeadline) -> Bool {
        let started = self.started ?? now
        self.started = started
        bytes += size
        guard now - started >= Self.maxDuration || bytes >= Self.maxBytes else { return false }
        ended()
        return true
    }

    /// The burst's flush ran (the writing task gave the loop up), or the writer paused.
    mutating func ended() {
        started = nil
        bytes = 0
    }
}
