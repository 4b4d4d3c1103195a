import Crypto
import struct Foundation.Data
import MeshTransport
import NIOConcurrencyHelpers

/// The SHA-256 of a resource's chunks received in order from the first (PROTOCOL.md §16.5),
/// taken on NIO's blocking pool: the shell, on an event loop, only queues the chunks it wrote
/// (``submit(_:)``) and goes on reading while another thread hashes them, in order.
///
/// What is queued and not hashed yet is bounded (``maxQueuedBytes``): past it ``submit(_:)``
/// says so and the shell waits for ``drained()``, so a slow hash holds the link back instead of
/// holding the resource in memory. This type is thread-safe.
final class ResourceDigest: Sendable {
    /// Bytes queued and not hashed at most before the shell waits.
    static let maxQueuedBytes = 16 << 20

    private struct State {
        var queued: [Data] = []
        var queuedBytes = 0
        /// A worker runs on the pool (one at a time: the chunks are hashed in order).
        var working = false
        /// Waiting for the queue to be empty.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())
    /// Touched only by the one worker at a time (``State/working``), or after ``drained()``.
    private let hasher = NIOLockedValueBox(SHA256())

    init() {}

    /// Queues chunks to be hashed after those queued before.
    /// - Returns: `false` when the queue holds more than ``maxQueuedBytes``: the caller waits
    ///   for ``drained()`` before it reads more.
    func submit(_ chunks: [Data]) -> Bool {
        guard !chunks.isEmpty else { return true }
        let (start, withinBound) = state.withLockedValue { state -> (Bool, Bool) in
            state.queued.append(contentsOf: chunks)
            state.queuedBytes += chunks.reduce(0) { $0 + $1.count }
            let start = !state.working
            state.working = true
            return (start, state.queuedBytes <= Self.maxQueuedBytes)
        }
        if start {
            Task {
                do {
                    try await EventLoops.runBlocking { self.work() }
                } catch {
                    // The pool has stopped (the process ends): hash here rather than lose a waiter.
                    self.work()
                }
            }
        }
        return withinBound
    }

    /// Returns once every chunk queued so far is hashed.
    func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLockedValue { state -> Bool in
                guard state.working else { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The hash of every chunk queued, once they are hashed.
    func finalize() async -> [UInt8] {
        await drained()
        return hasher.withLockedValue { Array($0.finalize()) }
    }

    /// On the pool: hashes what is queued until nothing is, then wakes the waiters.
    private func work() {
        while true {
            let (chunks, waiters) = state.withLockedValue { state -> ([Data], [CheckedContinuation<Void, Never>]) in
                guard !state.queued.isEmpty else {
                    state.working = false
                    defer { state.waiters = [] }
                    return ([], state.waiters)
                }
                defer {
                    state.queued = []
                    state.queuedBytes = 0
                }
                return (state.queued, [])
            }
            guard !chunks.isEmpty else {
                waiters.forEach { $0.resume() }
                return
            }
            hasher.withLockedValue { hasher in
                for chunk in chunks { hasher.update(data: chunk) }
            }
        }
    }
}
