import struct Foundation.Date
import NIOCore

extension Session {
    /// Suspends the calling task for `duration` on the clock of the session's event loop: the
    /// one time source for the session's and its applications' timers (a messenger's outbox tick,
    /// the resource shell's tick).
    ///
    /// On a real event loop this is wall time; on a test loop
    /// (``Configuration/eventLoopGroup`` set to a `NIOAsyncTestingEventLoop`) it is virtual, so
    /// the wait ends only when the test advances the loop's time.
    /// - Parameter duration: how long to wait; negative counts as zero.
    /// - Throws: `CancellationError` when the task is cancelled (or the loop has shut down).
    package func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let amount = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        let timer = timerLoop.scheduleTask(in: .nanoseconds(max(0, amount))) {}
        do {
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: { [timerLoop] in
                // Cancelled on the loop: a cancel from elsewhere completes the timer's promise by a
                // hop that a loop shutting down drops (a test loop then reports a leaked promise).
                timerLoop.execute { timer.cancel() }
            }
        } catch {
            throw CancellationError()
        }
    }

    /// The current time of the session's event loop (virtual on a test loop).
    package var loopNow: NIODeadline { timerLoop.now }

    /// The wall clock as the session's loop moves it, for timing between two of its own readings
    /// (a messenger's retry backoff): `Date()` on a real event loop; on a test loop it moves only
    /// with virtual time (and reads as a date long past, so it is no stamp for people).
    package var loopDate: Date {
        Date().addingTimeInterval(Double((timerLoop.now - NIODeadline.now()).nanoseconds) / 1e9)
    }
}
