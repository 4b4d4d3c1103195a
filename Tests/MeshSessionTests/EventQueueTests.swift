import MeshSession
import Testing

/// ``EventQueue``'s held wake-ups (``EventQueue/offer(_:orWhenRoom:wakingConsumer:)`` without
/// waking, then ``EventQueue/wakeConsumer()``): a producer delivers a burst and wakes its consumer
/// once, and nothing is lost or reordered meanwhile.
@Suite("EventQueue held wake-ups")
struct EventQueueTests {
    /// A consumer that collects every event until the queue ends.
    static func consume(_ queue: EventQueue<Int>) -> Task<[Int], Never> {
        Task {
            var values: [Int] = []
            for await value in queue { values.append(value) }
            return values
        }
    }

    /// Waits (bounded polling) until the consumer waits for an event.
    static func waitForConsumer(_ queue: EventQueue<Int>) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !queue.consumerWaits {
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "the consumer never waited") }
            await Task.yield()
        }
    }

    @Test("an event queued without waking the waiting consumer stays queued until wakeConsumer()")
    func heldUntilWoken() async throws {
        let queue = EventQueue<Int>(capacity: 4)
        let consumer = Self.consume(queue)
        try await Self.waitForConsumer(queue)
        guard case .queued = queue.offer(1, orWhenRoom: {}, wakingConsumer: false) else { Issue.record("not queued"); return }
        guard case .queued = queue.offer(2, orWhenRoom: {}, wakingConsumer: false) else { Issue.record("not queued"); return }
        #expect(queue.consumerWaits && queue.count == 2, "the consumer was not woken")
        queue.wakeConsumer()
        try await Self.waitForConsumer(queue)
        #expect(queue.count == 0, "the woken consumer took both")
        queue.finish()
        #expect(await consumer.value == [1, 2])
    }

    @Test("an event that wakes the consumer comes after those queued before it without waking")
    func orderKept() async throws {
        let queue = EventQueue<Int>(capacity: 4)
        let consumer = Self.consume(queue)
        try await Self.waitForConsumer(queue)
        _ = queue.offer(1, orWhenRoom: {}, wakingConsumer: false)
        #expect(queue.offer(2))
        try await Self.waitForConsumer(queue)
        queue.finish()
        #expect(await consumer.value == [1, 2])
    }

    @Test("finish() hands a waiting consumer the events queued without waking it, then ends")
    func finishWakes() async throws {
        let queue = EventQueue<Int>(capacity: 4)
        let consumer = Self.consume(queue)
        try await Self.waitForConsumer(queue)
        _ = queue.offer(7, orWhenRoom: {}, wakingConsumer: false)
        queue.finish()
        #expect(await consumer.value == [7])
    }
}
