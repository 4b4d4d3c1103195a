import NIOConcurrencyHelpers

/// A bounded, single-consumer event queue with back-pressure (PROTOCOL.md §10).
///
/// Producers ``push(_:)`` and wait while the queue holds ``capacity`` events; the consumer iterates.
/// Links push received messages and so stop reading their sockets while the application is behind,
/// which is how back-pressure reaches the sending peer. ``offer(_:)`` never waits and drops the
/// event when the queue is full (for unreliable datagrams). A consumer whose task is cancelled sees
/// the end of the sequence; the events stay queued for the next iteration.
///
/// This type is thread-safe.
public final class EventQueue<Element: Sendable>: AsyncSequence, Sendable {
    /// The most events held before producers wait.
    public let capacity: Int

    private struct State {
        var buffer: [Element] = []
        var head = 0
        var consumer: CheckedContinuation<Element?, Never>?
        var producers: [(CheckedContinuation<Void, Never>)] = []
        /// Callbacks of ``offer(_:orWhenRoom:)`` waiting for room, called once each.
        var roomWaiters: [@Sendable () -> Void] = []
        var finished = false
        var count: Int { buffer.count - head }

        /// The room waiters, all at once, once the queue is down to half its capacity: each
        /// retries (and registers again if it finds no room), so waking them all keeps none
        /// waiting forever, and waiting for half keeps a full queue from waking them per event.
        /// There are at most as many as links.
        mutating func takeRoomWaiters(capacity: Int) -> [@Sendable () -> Void] {
            guard !roomWaiters.isEmpty, count <= capacity / 2 else { return [] }
            defer { roomWaiters = [] }
            return roomWaiters
        }

        /// Hands `element` to the waiting consumer, behind any events queued before it (queued
        /// without waking it, ``offer(_:orWhenRoom:wakingConsumer:)``): the consumer to resume
        /// and what it gets, or `nil` when no consumer waits.
        mutating func handToConsumer(_ element: Element) -> (CheckedContinuation<Element?, Never>, Element)? {
            guard let consumer else { return nil }
            self.consumer = nil
            guard head < buffer.count else { return (consumer, element) }
            buffer.append(element)
            return (consumer, popFirst()!)
        }

        mutating func popFirst() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head > 1024 && head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = NIOLockedValueBox(State())

    /// Creates a queue.
    /// - Parameter capacity: the most events held before producers wait.
    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Adds an event, waiting while the queue is full. Does nothing after ``finish()``.
    /// - Parameter element: the event.
    public nonisolated(nonsending) func push(_ element: Element) async {
        while true {
            let outcome: Bool? = state.withLockedValue { state in
                if state.finished { return true }
                if let (consumer, first) = state.handToConsumer(element) {
                    consumer.resume(returning: first)
                    return true
                }
                if state.count < capacity {
                    state.buffer.append(element)
                    return true
                }
                return nil
            }
            if outcome != nil { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.finished || state.count < capacity { return true }
                    state.producers.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Adds an event without waiting.
    /// - Parameter element: the event.
    /// - Returns: `false` when the queue was full (or finished) and the event was dropped.
    @discardableResult
    public func offer(_ element: Element) -> Bool {
        state.withLockedValue { state in
            if state.finished { return false }
            if let (consumer, first) = state.handToConsumer(element) {
                consumer.resume(returning: first)
                return true
            }
            guard state.count < capacity else { return false }
            state.buffer.append(element)
            return true
        }
    }

    /// What ``offer(_:orWhenRoom:)`` did with an event.
    package enum Offer: Sendable {
        /// The event is queued (or taken by the waiting consumer).
        case queued
        /// The queue is finished: the event was dropped.
        case finished
        /// The queue is full: the event was not queued, and the callback will be called once
        /// when there is room (or when the queue finishes).
        case full
    }

    /// Adds an event without waiting, or, when the queue is full, arranges to be told when it has
    /// room (in one step, so that room made in between is not missed). For producers that run on
    /// an event loop and cannot wait: they stop reading their socket and retry from the callback.
    /// - Parameters:
    ///   - element: the event.
    ///   - callback: called once, on the thread that makes room (or finishes the queue), when the
    ///     result is ``Offer/full``; never called otherwise.
    ///   - wakingConsumer: `false` queues the event without resuming a waiting consumer, which
    ///     the producer then does once for a whole burst (``wakeConsumer()``).
    /// - Returns: what happened to the event.
    package func offer(_ element: Element, orWhenRoom callback: @escaping @Sendable () -> Void,
                       wakingConsumer: Bool = true) -> Offer {
        state.withLockedValue { state in
            if state.finished { return .finished }
            if wakingConsumer, let (consumer, first) = state.handToConsumer(element) {
                consumer.resume(returning: first)
                return .queued
            }
            guard state.count < capacity else {
                state.roomWaiters.append(callback)
                return .full
            }
            state.buffer.append(element)
            return .queued
        }
    }

    /// Resumes a consumer waiting while events were queued without waking it
    /// (``offer(_:orWhenRoom:wakingConsumer:)``) with the first of them; does nothing otherwise.
    package func wakeConsumer() {
        let (consumer, first, producer, waiters): (CheckedContinuation<Element?, Never>?, Element?, CheckedContinuation<Void, Never>?, [@Sendable () -> Void]) = state.withLockedValue { state in
            guard let consumer = state.consumer, let first = state.popFirst() else { return (nil, nil, nil, []) }
            state.consumer = nil
            return (consumer, first, state.producers.isEmpty ? nil : state.producers.removeFirst(), state.takeRoomWaiters(capacity: capacity))
        }
        producer?.resume()
        waiters.forEach { $0() }
        consumer?.resume(returning: first)
    }

    /// Ends the sequence after the events already queued; waiting producers are released.
    public func finish() {
        let (consumer, first, producers, waiters) = state.withLockedValue { state in
            state.finished = true
            let consumer = state.consumer
            state.consumer = nil
            // A consumer waits with events queued only when they were queued without waking it.
            let first = consumer == nil ? nil : state.popFirst()
            let producers = state.producers
            state.producers = []
            let waiters = state.roomWaiters
            state.roomWaiters = []
            return (consumer, first, producers, waiters)
        }
        consumer?.resume(returning: first)
        producers.forEach { $0.resume() }
        waiters.forEach { $0() }
    }

    /// The number of queued events.
    public var count: Int { state.withLockedValue { $0.count } }

    /// Whether the consumer waits for an event (for tests).
    package var consumerWaits: Bool { state.withLockedValue { $0.consumer != nil } }

    /// The next queued event without waiting, or `nil` when none is queued: for a consumer that
    /// takes what arrived together as one batch after ``AsyncIterator/next()``.
    package func poll() -> Element? {
        let (ready, producer, waiters): (Element?, CheckedContinuation<Void, Never>?, [@Sendable () -> Void]) = state.withLockedValue { state in
            guard let element = state.popFirst() else { return (nil, nil, []) }
            return (element, state.producers.isEmpty ? nil : state.producers.removeFirst(), state.takeRoomWaiters(capacity: capacity))
        }
        producer?.resume()
        waiters.forEach { $0() }
        return ready
    }

    fileprivate nonisolated(nonsending) func next() async -> Element? {
        // Fast path: an event is already queued, no suspension.
        if let ready = poll() { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let (result, ready, producer, waiters): (Element?, Bool, CheckedContinuation<Void, Never>?, [@Sendable () -> Void]) = state.withLockedValue { state in
                    if let element = state.popFirst() {
                        let producer = state.producers.isEmpty ? nil : state.producers.removeFirst()
                        return (element, true, producer, state.takeRoomWaiters(capacity: capacity))
                    }
                    if state.finished || Task.isCancelled { return (nil, true, nil, []) }
                    state.consumer = continuation
                    return (nil, false, nil, [])
                }
                producer?.resume()
                waiters.forEach { $0() }
                if ready { continuation.resume(returning: result) }
            }
        } onCancel: {
            // A cancelled consumer gets nil (the end of its iteration); queued events stay queued.
            let consumer = state.withLockedValue { state -> CheckedContinuation<Element?, Never>? in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    /// Iterates the events; one consumer at a time.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        fileprivate let queue: EventQueue<Element>
        /// The next event, or `nil` once the queue is finished and empty. It runs on the caller's
        /// executor (`nonisolated(nonsending)`), so an event that is already queued is taken
        /// without a hop to another executor (on SwiftNIO's loops, a re-enqueue of the task).
        public nonisolated(nonsending) mutating func next() async -> Element? { await queue.next() }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: self) }
}
