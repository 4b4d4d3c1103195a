import Foundation

/// A benchmark step that did not happen before its deadline.
struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What was awaited, and for how long.
    let description: String
}

/// State that event pumps update, with waits for a condition on it that end at a deadline.
///
/// Pumps call ``update(_:)`` for every event; a waiter resumes on the update that makes its
/// condition true and learns when that update happened, so a measurement ends at the event that
/// completed it, not when the waiting task got to run. No polling and no sleeping.
///
/// This type is thread-safe (a lock guards the state and the waiters).
final class Watch<State: Sendable>: @unchecked Sendable {
    private struct Waiter {
        var condition: @Sendable (State) -> Bool
        var continuation: CheckedContinuation<ContinuousClock.Instant, any Error>
    }

    private let lock = NSLock()
    private var state: State
    private var waiters: [Int: Waiter] = [:]
    private var expired: Set<Int> = []
    private var nextWaiter = 0

    /// Creates a watch over an initial state.
    /// - Parameter state: the initial state.
    init(_ state: State) {
        self.state = state
    }

    /// Changes the state and resumes every waiter whose condition now holds.
    /// - Parameter body: the change.
    func update(_ body: (inout State) -> Void) {
        let now = ContinuousClock.now
        lock.lock()
        body(&state)
        let ready = waiters.filter { $0.value.condition(state) }
        for id in ready.keys { waiters[id] = nil }
        lock.unlock()
        for waiter in ready.values { waiter.continuation.resume(returning: now) }
    }

    /// Reads the state.
    /// - Parameter body: what to read.
    /// - Returns: what `body` returned.
    func read<T>(_ body: (State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(state)
    }

    /// Waits until a condition holds.
    /// - Parameters:
    ///   - what: what is awaited, for the error.
    ///   - timeout: the deadline, from now.
    ///   - condition: the condition on the state.
    /// - Returns: when the update that made the condition true happened (now, if it already held).
    /// - Throws: ``DeadlineExceeded`` when the deadline passes first.
    @discardableResult
    func wait(for what: String, timeout: Duration, until condition: @escaping @Sendable (State) -> Bool) async throws -> ContinuousClock.Instant {
        let id = lock.withLock {
            nextWaiter += 1
            return nextWaiter - 1
        }
        return try await withThrowingTaskGroup(of: ContinuousClock.Instant?.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    self.lock.lock()
                    if self.expired.remove(id) != nil {
                        self.lock.unlock()
                        continuation.resume(throwing: DeadlineExceeded(description: "\(what): not within \(timeout)"))
                    } else if condition(self.state) {
                        self.lock.unlock()
                        continuation.resume(returning: ContinuousClock.now)
                    } else {
                        self.waiters[id] = Waiter(condition: condition, continuation: continuation)
                        self.lock.unlock()
                    }
                }
            }
            group.addTask {
                // The deadline: on expiry, fail the waiter (or mark it, if it is not installed yet).
                guard (try? await Task.sleep(for: timeout)) != nil else { return nil }
                let waiter = self.lock.withLock {
                    let waiter = self.waiters.removeValue(forKey: id)
                    if waiter == nil { self.expired.insert(id) }
                    return waiter
                }
                waiter?.continuation.resume(throwing: DeadlineExceeded(description: "\(what): not within \(timeout)"))
                return nil
            }
            while let result = try await group.next() {
                if let instant = result {
                    group.cancelAll()
                    _ = lock.withLock { expired.remove(id) }
                    return instant
                }
            }
            throw DeadlineExceeded(description: "\(what): not within \(timeout)")
        }
    }
}

/// Seconds in a duration.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
