import Foundation
import MeshLink
import MeshSession
import MeshTestSupport
import MeshTransport
import MeshWire
import NIOCore
import Testing

/// A running session in this process, on loopback, torn down at the end of a test.
final class Node: Sendable {
    let session: Session
    let port: Int
    let name: String
    private let runner: Task<Void, Never>

    init(_ name: String, configure: (inout Session.Configuration) -> Void = { _ in }) async throws {
        var configuration = Session.Configuration()
        configuration.host = "127.0.0.1"
        configure(&configuration)
        let peer = try LocalPeer(displayName: name, identity: try LocalIdentity.generate())
        session = Session(peer: peer, configuration: configuration)
        port = try await session.start()
        self.name = name
        let session = self.session
        runner = Task { try? await session.run() }
    }

    var id: PeerID { session.peer.peerID }

    func stop() async {
        await session.disconnect()
        await runner.value
    }
}

/// Reads a session's events with deadlines.
struct EventReader {
    var iterator: EventQueue<SessionEvent>.AsyncIterator

    init(_ node: Node) { iterator = node.session.events.makeAsyncIterator() }

    /// The next event matching `predicate`, skipping others; fails at the deadline.
    mutating func next<T: Sendable>(timeout: Duration = .seconds(10), _ match: @escaping @Sendable (SessionEvent) -> T?) async throws -> T {
        var iterator = self.iterator
        defer { self.iterator = iterator }
        let result: T? = try await withThrowingTaskGroup(of: (T?, EventQueue<SessionEvent>.AsyncIterator)?.self) { group in
            group.addTask { [iterator] in
                var iterator = iterator
                while let event = await iterator.next() {
                    if let value = match(event) { return (value, iterator) }
                }
                return (nil, iterator)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let (value, advanced) = first else {
                throw TimeoutError(description: "no matching event within \(timeout)")
            }
            iterator = advanced
            return value
        }
        guard let result else { throw TimeoutError(description: "the event stream ended") }
        return result
    }

    mutating func connected(timeout: Duration = .seconds(10)) async throws -> PeerID {
        try await next(timeout: timeout) { event in
            if case .peerChanged(let peer, .connected) = event { return peer }
            return nil
        }
    }

    /// The reason of the next `notConnected` event that has one.
    mutating func disconnectReason(timeout: Duration = .seconds(10)) async throws -> DisconnectReason {
        try await next(timeout: timeout) { event in
            if case .peerChanged(_, .notConnected(let reason?)) = event { return reason }
            return nil
        }
    }

    mutating func data(timeout: Duration = .seconds(10)) async throws -> ReceivedMessage {
        try await next(timeout: timeout) { event in
            if case .received(let message) = event { return message }
            return nil
        }
    }
}

struct TimeoutError: Error, CustomStringConvertible { let description: String }

/// Two nodes, `b` dialled into `a`, both reporting connected.
struct ConnectedPair {
    let a: Node
    let b: Node
    var aEvents: EventReader
    var bEvents: EventReader
    /// `b` as `a` saw it connect.
    let bSeenByA: PeerID
    /// `a` as `b` saw it connect.
    let aSeenByB: PeerID

    init(configureA: (inout Session.Configuration) -> Void = { _ in }) async throws {
        a = try await Node("a", configure: configureA)
        b = try await Node("b")
        aEvents = EventReader(a)
        bEvents = EventReader(b)
        b.session.connect(host: "127.0.0.1", port: a.port)
        bSeenByA = try await aEvents.connected()
        aSeenByB = try await bEvents.connected()
    }
}

@Suite("Session over loopback sockets", .serialized)
struct SessionTests {
    @Test("reliable data and chat lines arrive with their sender; connectedPeers lists the peer")
    func reliable() async throws {
        var pair = try await ConnectedPair()
        let (a, b, bSeenByA, aSeenByB) = (pair.a, pair.b, pair.bSeenByA, pair.aSeenByB)
        #expect(bSeenByA == b.id && bSeenByA.displayName == "b")
        #expect(aSeenByB == a.id)
        #expect(a.session.connectedPeers == [b.id])
        try await b.session.send(Data([1, 2, 3]), to: [aSeenByB], mode: .reliable)
        let id = try await b.session.send(text: "hi", to: [aSeenByB])
        let first = try await pair.aEvents.data()
        #expect(first.content == .data(Data([1, 2, 3])) && first.sender == b.id && first.mode == .reliable)
        let second = try await pair.aEvents.data()
        guard case .text(let text) = second.content else { Issue.record("expected text"); return }
        #expect(text.text == "hi" && text.id == id)
        await b.stop()
        await a.stop()
    }

    @Test("the dialling side reports connecting, then connected; the listener reports connected")
    func states() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        b.session.connect(host: "127.0.0.1", port: a.port)
        let first = try await bEvents.next { event -> PeerState? in
            if case .peerChanged(_, let state) = event { return state }
            return nil
        }
        let second = try await bEvents.next { event -> (PeerID, PeerState)? in
            if case .peerChanged(let peer, let state) = event { return (peer, state) }
            return nil
        }
        #expect(first == .connecting)
        #expect(second.0 == a.id && second.1 == .connected)
        #expect(try await aEvents.connected() == b.id)
        await b.stop()
        #expect(try await aEvents.next { event -> PeerState? in
            if case .peerChanged(_, let state) = event { return state }
            return nil
        } != .connected)
        await a.stop()
    }

    @Test("unreliable datagrams arrive; an oversized one is a clear error; 1,198 bytes is the limit")
    func unreliable() async throws {
        let pair = try await ConnectedPair()
        let (a, b, peerA) = (pair.a, pair.b, pair.aSeenByB)
        var aEvents = pair.aEvents
        let payload = Data((0..<Session.maxUnreliablePayload).map { UInt8($0 % 251) })
        for i in 0..<20 {
            try await b.session.send(payload + Data(), to: [peerA], mode: .unreliable)
            if i == 0 {
                let first = try await aEvents.data()
                #expect(first.mode == .unreliable && first.content == .data(payload) && first.sender == b.id)
            }
        }
        await #expect(throws: SessionError.self) {
            try await b.session.send(payload + Data([0]), to: [peerA], mode: .unreliable)
        }
        do {
            try await b.session.send(payload + Data([0]), to: [peerA], mode: .unreliable)
        } catch {
            #expect(error.code == .payloadTooLarge)
            #expect(error.message.contains("1199") && error.message.contains("1198"))
        }
        await b.stop()
        await a.stop()
    }

    @Test("two sessions dialling each other at once end with exactly one link (PROTOCOL.md §4.7)")
    func simultaneousConnect() async throws {
        for _ in 0..<5 {
            let a = try await Node("a")
            let b = try await Node("b")
            var aEvents = EventReader(a)
            var bEvents = EventReader(b)
            a.session.connect(host: "127.0.0.1", port: b.port)
            b.session.connect(host: "127.0.0.1", port: a.port)
            do {
                _ = try await aEvents.connected()
                _ = try await bEvents.connected()
            } catch {
                await a.stop()
                await b.stop()
                throw error
            }
            // Both directions carry data over the surviving link. Known race: the side whose first
            // link was the loser can send on it after the peer's goodbye arrived and before its
            // winning link is registered; that message is dropped (1 run in ~10 under load).
            await withKnownIssue("a send during the §4.7 tie-break can go to the link the peer just retired", isIntermittent: true) {
                try await a.session.send(Data("from a".utf8), to: [b.id], mode: .reliable)
                try await b.session.send(Data("from b".utf8), to: [a.id], mode: .reliable)
                #expect(try await bEvents.data(timeout: .seconds(5)).content == .data(Data("from a".utf8)))
                #expect(try await aEvents.data(timeout: .seconds(5)).content == .data(Data("from b".utf8)))
            }
            #expect(a.session.connectedPeers.count == 1)
            #expect(b.session.connectedPeers.count == 1)
            await a.stop()
            await b.stop()
            // Only one connected event per side: the loser never surfaced.
            var extra = 0
            for await event in a.session.events {
                if case .peerChanged(_, .connected) = event { extra += 1 }
            }
            #expect(extra == 0)
        }
    }

    @Test("a slow consumer pushes back on the sender: buffered bytes stay bounded, then all arrive in order")
    func backPressure() async throws {
        let pair = try await ConnectedPair { $0.eventCapacity = 8 }
        let (a, b, peerA) = (pair.a, pair.b, pair.aSeenByB)
        var aEvents = pair.aEvents
        let count = 2_000
        let chunk = 64 * 1024
        let sent = SentCounter()
        let sender = Task {
            for i in 0..<count {
                var payload = Data(count: chunk)
                payload[0] = UInt8(i % 256)
                payload[1] = UInt8(i / 256)
                try await b.session.send(payload, to: [peerA], mode: .reliable)
                sent.increment()
            }
        }
        // a does not consume: wait until its queue is full, then until the sender stops advancing.
        while a.session.events.count < 8 { await Task.yield() }
        var stable = 0
        var last = -1
        while stable < 50 {
            try await Task.sleep(for: .milliseconds(10))  // sampling the sender's progress, not synchronising
            let now = sent.value
            stable = now == last ? stable + 1 : 0
            last = now
        }
        // Kernel socket buffers plus 1 MiB of link buffer plus a few events: far below the 125 MiB sent.
        #expect(sent.value * chunk < 48 * 1024 * 1024, "sender queued \(sent.value) messages while nobody read")
        #expect(sent.value < count)
        for i in 0..<count {
            let message = try await aEvents.data(timeout: .seconds(30))
            guard case .data(let payload) = message.content else { Issue.record("not data"); return }
            #expect(Int(payload[0]) + Int(payload[1]) * 256 == i)
            #expect(payload.count == chunk)
        }
        try await sender.value
        #expect(sent.value == count)
        await b.stop()
        await a.stop()
    }

    @Test("half a handshake and silence: the listener closes the connection at the handshake deadline")
    func handshakeTimeout() async throws {
        let a = try await Node("a") { $0.transport.timing.handshakeTimeout = 500_000_000 }
        let client = try RawTCPClient(port: a.port)
        let identity = try LocalIdentity.generate()
        var machine = try HandshakeStateMachine(role: .initiator, configuration: .init(identity: identity, displayName: "x"))
        guard case .send(let frame) = machine.start() else { Issue.record("no message 1"); return }
        var buffer = ByteBufferAllocator().buffer(capacity: 64)
        frame.encode(into: &buffer)
        client.send(Array(buffer.readableBytesView))
        let start = ContinuousClock.now
        let (answer, closed) = client.readUntilClosed(timeout: 5)
        #expect(closed)
        #expect(answer.count > 5 && answer[4] == FrameType.handshake.rawValue)
        #expect(ContinuousClock.now - start < .seconds(3))
        // The listener still accepts real peers.
        let b = try await Node("b")
        var bEvents = EventReader(b)
        b.session.connect(host: "127.0.0.1", port: a.port)
        _ = try await bEvents.connected()
        await b.stop()
        await a.stop()
    }

    @Test("a refused connection is a connectFailed event naming the address")
    func connectRefused() async throws {
        let a = try await Node("a")
        var events = EventReader(a)
        let closed = try await Node("closed")
        let port = closed.port
        await closed.stop()
        a.session.connect(host: "127.0.0.1", port: port)
        let (address, reason) = try await events.next { event -> (String, String)? in
            if case .connectFailed(let address, let reason) = event { return (address, reason) }
            return nil
        }
        #expect(address == "127.0.0.1:\(port)")
        #expect(reason == "connection refused", "in words, without NIO's wrapping (issue 17): \(reason)")
        await a.stop()
    }

    @Test("a peer on another service type is refused with a reason on both sides")
    func serviceMismatch() async throws {
        let a = try await Node("a") { $0.serviceType = "alpha" }
        let b = try await Node("b") { $0.serviceType = "beta" }
        var bEvents = EventReader(b)
        b.session.connect(host: "127.0.0.1", port: a.port)
        let reason = try await bEvents.next { event -> String? in
            if case .connectFailed(_, let reason) = event { return reason }
            return nil
        }
        #expect(reason.contains("serviceMismatch") && reason.contains("alpha") && reason.contains("beta"))
        #expect(a.session.connectedPeers.isEmpty)
        await a.stop()
        await b.stop()
    }
}

final class SentCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
