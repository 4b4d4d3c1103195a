import struct Foundation.Date
import NIOConcurrencyHelpers
import NIOCore

/// The clock of a session's event loop: the one time source of the session's and its
/// applications' timers and timestamps (the mesh's timers, redial waits, a ping's timeout, the
/// streams' and resources' timers, an application's tick).
///
/// On a real event loop this is the machine's clock; on a test loop (``Session/Configuration/eventLoopGroup``
/// set to a `NIOAsyncTestingEventLoop`, as on `TestMesh`) it is virtual: it stands still until
/// the test advances the loop's time, and a ``sleep(for:)`` ends only when it does. A shell that
/// does not hold the session (the streams' actor, an application) keeps this value.
///
/// This type is thread-safe.
package struct SessionClock: Sendable {
    /// The loop whose time this is.
    let loop: any EventLoop

    /// One reading of both clocks, taken once per process, to map the loop's time onto
    /// `ContinuousClock` instants.
    private static let epoch = (instant: ContinuousClock.now, deadline: NIODeadline.now())

    /// The current time of the loop as a `ContinuousClock` instant, for the state machines that
    /// take `now` (streams, resources, rate limits). On a real loop it reads as
    /// `ContinuousClock.now`; on a test loop it moves only with virtual time. Compare it only
    /// with other readings of a session clock, never with `ContinuousClock.now`.
    package var now: ContinuousClock.Instant {
        Self.epoch.instant.advanced(by: .nanoseconds((loop.now - Self.epoch.deadline).nanoseconds))
    }

    /// The current time of the loop (virtual on a test loop).
    package var deadline: NIODeadline { loop.now }

    /// The wall clock as the loop moves it, for timing between two of its own readings (a
    /// messenger's retry backoff, a pin's lifetime): `Date()` on a real event loop; on a test loop it
    /// moves only with virtual time (and reads as a date long past, so it is no stamp for people).
    package var date: Date {
        // The wall clock read between two readings of the monotonic one at most 1 ms apart (a few
        // tries): a thread preempted between the readings would otherwise shift the result.
        var (before, wall, after) = (NIODeadline.now(), Date(), NIODeadline.now())
        for _ in 0..<3 where after - before > .milliseconds(1) {
            (before, wall, after) = (NIODeadline.now(), Date(), NIODeadline.now())
        }
        return wall.addingTimeInterval(Double((loop.now - before).nanoseconds) / 1e9)
    }

    /// Suspends the calling task for `duration` on the loop's clock.
    ///
    /// The timer is made and cancelled on the loop, never from another thread: a promise completed
    /// from elsewhere is completed by a hop onto its loop, and a loop that has shut down drops the
    /// hop (a test loop then traps on the promise it leaks). Once the loop has shut down, this
    /// never returns.
    /// - Parameter duration: how long to wait; negative counts as zero.
    /// - Throws: `CancellationError` when the task is cancelled.
    package func sleep(for duration: Duration) async throws {
        let amount = TimeAmount.nanoseconds(Self.nanoseconds(duration))
        let timer = NIOLockedValueBox<(scheduled: Scheduled<Void>?, cancelled: Bool)>((nil, false))
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                loop.execute { [loop] in
                    guard !timer.withLockedValue({ $0.cancelled }) else {
                        return continuation.resume(throwing: CancellationError())
                    }
                    let scheduled = loop.scheduleTask(in: amount) {}
                    timer.withLockedValue { $0.scheduled = scheduled }
                    scheduled.futureResult.whenComplete { result in
                        continuation.resume(with: result.mapError { _ in CancellationError() })
                    }
                }
            }
        } onCancel: { [loop] in
            loop.execute {
                let scheduled = timer.withLockedValue { timer in
                    timer.cancelled = true
                    return timer.scheduled
                }
                scheduled?.cancel()
            }
        }
    }

    /// A duration in whole nanoseconds, clamped to `0...Int64.max`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, carry) = nanoseconds.addingReportingOverflow(max(0, attoseconds) / 1_000_000_000)
        return carry ? .max : total
    }
}

extension Session {
    /// The clock of the session's event loop (virtual on a test loop): see ``SessionClock``.
    package var clock: SessionClock { SessionClock(loop: timerLoop) }

    /// Suspends the calling task for `duration` on the session's clock (``SessionClock/sleep(for:)``).
    /// - Parameter duration: how long to wait; negative counts as zero.
    /// - Throws: `CancellationError` when the task is cancelled.
    package func sleep(for duration: Duration) async throws {
        try await clock.sleep(for: duration)
    }

    /// The current time of the session's event loop (virtual on a test loop).
    package var loopNow: NIODeadline { timerLoop.now }

    /// The wall clock as the session's loop moves it (``SessionClock/date``).
    package var loopDate: Date { clock.date }
}
