import Crypto
import Foundation
@testable import MeshSession
import MeshTestSupport
import Testing

/// Streams (PROTOCOL.md §18) on real sessions over loopback: a pair, and A—B—C in a line.
@Suite("Streams over loopback", .serialized)
struct StreamTests {
    static func random(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        let words = (0..<(count + 7) / 8).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// Reads one whole stream, failing at the deadline.
    static func readAll(_ stream: MeshInputStream, timeout: Duration = .seconds(60)) async throws -> Data {
        try await deadline(timeout, "the stream's end") {
            var data = Data()
            for try await chunk in stream { data.append(chunk) }
            return data
        }
    }

    /// The next incoming stream, failing at the deadline.
    static func nextStream(_ queue: EventQueue<MeshInputStream>, timeout: Duration = .seconds(10)) async throws -> MeshInputStream {
        try await deadline(timeout, "an incoming stream") {
            var iterator = queue.makeAsyncIterator()
            guard let stream = await iterator.next() else { throw TimeoutError(description: "the queue ended") }
            return stream
        }
    }

    static func deadline<T: Sendable>(_ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw TimeoutError(description: "no \(what) within \(timeout)")
            }
            return value
        }
    }

    /// Sends `content` on a new stream and finishes it.
    static func send(_ content: Data, from session: Session, to peer: PeerID, name: String = "test", writes: Int = 100_000) async throws {
        let stream = try await session.startStream(withName: name, to: peer)
        var offset = 0
        while offset < content.count {
            let end = min(content.count, offset + writes)
            try await stream.write(content[offset..<end])
            offset = end
        }
        try await stream.finish()
    }

    @Test("two linked sessions: 2 MB in one write (twice the window) arrive whole (SHA-256 equal), finish() returns once read, name and sender known")
    func pair() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        let incoming = try await b.session.acceptStreams()
        let content = Self.random(2_000_000, seed: 1)
        async let sent: Void = Self.send(content, from: a.session, to: bob, name: "pair", writes: content.count)
        let stream = try await Self.nextStream(incoming)
        #expect(stream.name == "pair" && stream.peer.id == a.id.id)
        let received = try await Self.readAll(stream)
        try await sent
        #expect(SHA256.hash(data: received) == SHA256.hash(data: content))
    }

    @Test("a reader that comes late takes the chunks waiting together as elements of at most maxElementBytes (1 MiB), each with indices from 0")
    func joinedChunks() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        var limits = StreamLimits()
        limits.chunkSize = 16 * 1024
        limits.window = 1 << 20
        let incoming = try await b.session.acceptStreams(limits: limits)
        let content = Self.random(1 << 20, seed: 7)
        let stream = try await a.session.startStream(withName: "late", to: bob, limits: limits)
        try await stream.write(content)
        let reader = try await Self.nextStream(incoming)
        let receiver = try #require(b.session.startedStreamShell)
        try await Self.waitUntil("the reader's window full") { await receiver.heldBytes.incoming.first == limits.window }
        async let finished: Void = stream.finish()
        var received = Data()
        var sizes: [Int] = []
        for try await chunk in reader {
            #expect(chunk.startIndex == 0)
            sizes.append(chunk.count)
            received.append(chunk)
        }
        try await finished
        #expect(received == content)
        #expect(sizes.allSatisfy { $0 <= MeshInputStream.maxElementBytes }, "\(sizes)")
        #expect(sizes.first == MeshInputStream.maxElementBytes, "the first element joins the 64 waiting chunks: \(sizes)")
    }

    @Test("across the relay: A's 4 MB stream reaches C two hops away, SHA-256 equal")
    func acrossTheRelay() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let incoming = try await c.session.acceptStreams()
        let content = Self.random(4_000_000, seed: 2)
        async let sent: Void = Self.send(content, from: a.session, to: c.id)
        let received = try await Self.readAll(try await Self.nextStream(incoming))
        try await sent
        #expect(received.count == content.count)
        #expect(SHA256.hash(data: received) == SHA256.hash(data: content))
    }

    @Test("a node that does not accept streams refuses them, with a reason")
    func refused() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        await #expect(throws: SessionError.self) { _ = try await a.session.startStream(withName: "x", to: bob) }
        do {
            _ = try await a.session.startStream(withName: "x", to: bob)
        } catch {
            #expect(error.code == .streamRefused)
            #expect(error.message.contains("does not accept streams"))
        }
    }

    @Test("a reader holds at most maxStreamsPerPeer streams from one node; the next open is refused busy, and a slot frees when one ends")
    func streamsPerPeer() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        var limits = StreamLimits()
        limits.maxStreamsPerPeer = 2
        let incoming = try await b.session.acceptStreams(limits: limits)
        let first = try await a.session.startStream(withName: "1", to: bob)
        _ = try await a.session.startStream(withName: "2", to: bob)
        do {
            _ = try await a.session.startStream(withName: "3", to: bob)
            Issue.record("a third stream was accepted")
        } catch {
            #expect(error.code == .streamRefused && error.message.contains("busy"), "\(error)")
        }
        let reader = try await Self.nextStream(incoming)
        #expect(reader.name == "1")
        try await first.finish()  // an empty stream: done once its end arrives, with no byte to read
        _ = try await Self.readAll(reader)
        _ = try await a.session.startStream(withName: "4", to: bob)
    }

    @Test("a reader that never reads: the writer waits, and each side holds at most the window")
    func neverReads() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        var limits = StreamLimits()
        limits.window = 256 * 1024
        let incoming = try await b.session.acceptStreams(limits: limits)
        let stream = try await a.session.startStream(withName: "slow", to: bob, limits: limits)
        let written = ManagedCounter()
        let writer = Task {
            let chunk = Data(count: 64 * 1024)
            for _ in 0..<160 {  // 10 MiB
                try await stream.write(chunk)
                written.add(chunk.count)
            }
        }
        let reader = try await Self.nextStream(incoming)
        let sender = try #require(a.session.startedStreamShell)
        let receiver = try #require(b.session.startedStreamShell)
        // Both windows fill; then nothing moves.
        try await Self.waitUntil("the reader's window full") { await receiver.heldBytes.incoming.first == limits.window }
        try await Self.waitUntil("the writer's window full") { await sender.heldBytes.outgoing.first == UInt64(limits.window) }
        // Nothing more moves while the reader does not read, through two rounds of probes.
        let probes = ContinuousClock.now + limits.keepaliveInterval * 2
        try await Self.waitUntil("two keepalive intervals", timeout: .seconds(10)) { ContinuousClock.now >= probes }
        #expect(written.value <= 2 * limits.window, "the writer went on past both windows: \(written.value)")
        #expect(await receiver.heldBytes.incoming.first ?? 0 <= limits.window)
        #expect(await sender.heldBytes.outgoing.first ?? 0 <= UInt64(limits.window))
        // The reader gives up: the blocked writer learns why.
        await reader.cancel(reason: "not reading today")
        let error = await #expect(throws: StreamError.self) { try await writer.value }
        #expect(error?.code == .cancelled && error?.byPeer == true && error?.reason == "not reading today")
    }

    /// Waits until an async condition holds (bounded polling), or fails.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "\(what) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("cancelling the task of a writer that waits for credit cancels the stream on both sides")
    func writerTaskCancelled() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop(); await b.stop() } }
        var limits = StreamLimits()
        limits.window = 64 * 1024
        let incoming = try await b.session.acceptStreams(limits: limits)
        let stream = try await a.session.startStream(withName: "cut", to: bob, limits: limits)
        let writer = Task { try await stream.write(Data(count: 1 << 20)) }  // far more than both windows
        let reader = try await Self.nextStream(incoming)
        let sender = try #require(a.session.startedStreamShell)
        try await Self.waitUntil("the writer waiting for credit") { await sender.heldBytes.outgoing.first == UInt64(limits.window) }
        writer.cancel()
        let error = await #expect(throws: StreamError.self) { try await writer.value }
        #expect(error?.code == .cancelled && error?.byPeer == false)
        let readError = await #expect(throws: StreamError.self) {
            try await Self.deadline(.seconds(10), "the reader's end") { for try await _ in reader {} }
        }
        #expect(readError?.code == .cancelled && readError?.byPeer == true && readError?.reason == "the writing task was cancelled")
    }

    @Test("the reader's session stops: both sides end, with a reason")
    func peerStops() async throws {
        let (a, b, _, _, bob) = try await MeshRelayTests.linkedPair()
        defer { Task { await a.stop() } }
        var limits = StreamLimits()
        limits.keepaliveInterval = .milliseconds(200)
        limits.peerTimeout = .seconds(2)
        let incoming = try await b.session.acceptStreams(limits: limits)
        let stream = try await a.session.startStream(withName: "doomed", to: bob, limits: limits)
        try await stream.write(Data(count: 1_000))
        let reader = try await Self.nextStream(incoming)
        async let readerEnd: StreamError? = {
            do {
                for try await _ in reader {}
                return nil
            } catch let error as StreamError {
                return error
            } catch {
                return nil
            }
        }()
        await b.stop()
        let readError = await readerEnd
        #expect(readError?.code == .closed)
        let error = await #expect(throws: StreamError.self) {
            try await Self.deadline(.seconds(10), "the writer's end") {
                while true { try await stream.write(Data(count: 60_000)) }
            }
        }
        #expect([.closed, .timedOut].contains(error?.code), "\(String(describing: error))")
    }
}

/// A counter shared between tasks.
final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ amount: Int) { lock.withLock { count += amount } }
    var value: Int { lock.withLock { count } }
}
