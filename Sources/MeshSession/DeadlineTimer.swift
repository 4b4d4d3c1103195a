/// The one timer of a shell's state machines (streams, resources): armed for the earliest
/// deadline any machine has, and armed again only when a nearer one appears — no polling. A
/// timer that wakes to a deadline that moved later finds nothing due, and its owner arms it again.
///
/// Held by one actor and used only from its own turns: `fire` is called on that actor with the
/// generation it was armed with, and the owner first asks ``take(_:)`` whether that wake is still
/// the armed one (a replaced timer may already have been waking).
struct DeadlineTimer {
    private var armed: (task: Task<Void, Never>, deadline: ContinuousClock.Instant, generation: UInt64)?
    private var generation: UInt64 = 0

    /// Arms the timer for `earliest`, unless it is armed for that or earlier; disarms it when
    /// `earliest` is `nil`.
    /// - Parameters:
    ///   - earliest: the earliest deadline of the owner's machines, on `clock`.
    ///   - clock: the session's clock (virtual on a test loop).
    ///   - fire: called once the deadline has passed, with the timer's generation.
    mutating func arm(for earliest: ContinuousClock.Instant?, clock: SessionClock,
                      fire: @escaping @Sendable (UInt64) async -> Void) {
        guard let earliest else { return cancel() }
        if let armed, armed.deadline <= earliest { return }
        armed?.task.cancel()
        generation &+= 1
        let (generation, wait) = (generation, clock.now.duration(to: earliest))
        let task = Task {
            // Cancelled: a nearer deadline replaced this timer, or the owner stopped.
            do { try await clock.sleep(for: wait) } catch { return }
            await fire(generation)
        }
        armed = (task, earliest, generation)
    }

    /// Whether a wake of `generation` is the armed timer's; it is disarmed then.
    mutating func take(_ generation: UInt64) -> Bool {
        guard armed?.generation == generation else { return false }
        armed = nil
        return true
    }

    /// Disarms the timer.
    mutating func cancel() {
        armed?.task.cancel()
        armed = nil
    }
}
