import Foundation
import MeshLink
import MeshSession
import MeshTestSupport
import MeshTransport
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// The in-memory tier itself (STYLE.md §5 item 5): real sessions on an `InMemoryFabric`, no
/// sockets, with virtual time that moves only when the test moves it.
@Suite("In-memory mesh tier")
struct InMemoryMeshTests {
    static let appID = ChannelID(rawValue: 0x5EED_0002)!

    @Test("two sessions complete the Noise handshake over the in-memory pipe with virtual time standing still")
    func handshake() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice"), b = try await mesh.node("bob")
            try await mesh.link(a, b)
            #expect(a.session.connectedPeers.map(\.id) == [b.peer.id])
            #expect(b.session.connectedPeers.first?.displayName == "alice")
            // Both ends name the suite their offers select (PROTOCOL.md §4.11); none for a stranger.
            let suite = try #require(CipherSuite.select(initiator: CipherSuite.localOffer, responder: CipherSuite.localOffer))
            #expect(a.session.cipherSuite(of: b.peer) == suite && b.session.cipherSuite(of: a.peer) == suite)
            #expect(a.session.cipherSuite(of: a.peer) == nil)
            #expect(mesh.fabric.isLinked(a.host, b.host))
            #expect(mesh.now == .uptimeNanoseconds(0), "no virtual time passes unless the test moves it")
            try await mesh.waitUntil("alice reports bob connected") {
                a.saw { if case .peerChanged(let peer, .connected) = $0 { peer.id == b.peer.id } else { false } }
            }
        }
    }

    @Test("a sealed channel message crosses a line A—B—C through the relay, and B delivers nothing")
    func lineRelay() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob", "carol"])
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A and C reach each other") {
                a.session.route(to: c.peer)?.hops == 2 && c.session.route(to: a.peer)?.hops == 2
            }
            let ca = try a.session.register(channel: Self.appID)
            let cb = try b.session.register(channel: Self.appID)
            let cc = try c.session.register(channel: Self.appID)
            try await ca.send(Data("for carol".utf8), to: c.peer)
            let received = try await mesh.next(cc.messages) { $0 }
            #expect(received.payload == Data("for carol".utf8))
            #expect(received.delivery == .sealed && received.hops == 2)
            #expect(received.sender.id == a.peer.id)
            #expect(cb.messages.count == 0, "the relay must not deliver a packet sealed for another node")
        }
    }

    @Test("cutting B—C in a line A—B—C makes C unreachable from A; healing it brings the route back")
    func partitionAndHeal() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob", "carol"])
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A reaches C") { a.session.route(to: c.peer) != nil }
            await mesh.cut(b, c)
            #expect(!mesh.fabric.isLinked(b.host, c.host))
            try await mesh.advance(until: "A loses C") { a.session.route(to: c.peer) == nil }
            #expect(a.session.route(to: b.peer)?.hops == 1, "the rest of the line stays")
            // A cut pair cannot link again until healed.
            c.session.connect(host: b.host, port: b.port)
            try await mesh.waitUntil("C's dial is refused") {
                c.saw { if case .connectFailed = $0 { true } else { false } }
            }
            try await mesh.link(b, c)
            try await mesh.advance(until: "A reaches C again") { a.session.route(to: c.peer)?.hops == 2 }
        }
    }

    @Test("timers run on virtual time: a silent dialer's handshake deadline fires only when time passes it")
    func handshakeDeadlineIsVirtual() async throws {
        try await withTestMesh { mesh in
            let b = try await mesh.node("bob")
            // A raw link that never says anything (no handshake message 1) and drops what it reads.
            let silent = try await mesh.fabric.attach("10.0.0.99").connect(host: b.host, port: b.port, group: mesh.loop) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Discard())
                    return try LinkChannel(wrappingChannelSynchronously: channel)
                }
            }
            let deadline = Duration.seconds(HandshakeStateMachine.timeoutSeconds)
            await mesh.advance(by: deadline - .milliseconds(1))
            #expect(mesh.fabric.isLinked("10.0.0.99", b.host), "the deadline has not passed yet")
            await mesh.advance(by: .milliseconds(2))
            #expect(!mesh.fabric.isLinked("10.0.0.99", b.host), "bob closes the link at the handshake deadline")
            try await silent.executeThenClose { _, _ in }
        }
    }

    @Test("Session.sleep waits on the loop's virtual clock: it wakes only once virtual time has moved 30 s")
    func sessionSleep() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice")
            let woke = NIOLockedValueBox<NIODeadline?>(nil)
            mesh.spawn {
                try? await a.session.sleep(for: .seconds(30))
                woke.withLockedValue { $0 = a.session.loopNow }
            }
            try await mesh.advance(until: "the sleeper wakes", step: .seconds(1), limit: .seconds(120)) {
                woke.withLockedValue { $0 } != nil
            }
            let at = try #require(woke.withLockedValue { $0 })
            #expect(at >= .uptimeNanoseconds(30_000_000_000))
        }
    }

    @Test("a consumer that stops under the wait policy holds its link's reads: bytes wait in the fabric, the sender's queued bytes stay bounded, and what was kept arrives in order once it reads")
    func readHoldsBoundTheSender() async throws {
        try await withTestMesh { mesh in
            let highWaterMark = 512 * 1024
            let a = try await mesh.node("alice") {
                $0.transport.writeHighWaterMark = highWaterMark
                $0.transport.writeLowWaterMark = highWaterMark / 4
            }
            let b = try await mesh.node("bob")
            try await mesh.link(a, b)
            var limits = ChannelLimits()
            limits.overflow = .wait
            limits.inboundCapacity = 8
            limits.messagesPerSecond = 100_000
            limits.burst = 100_000
            let ca = try a.session.register(channel: Self.appID, limits: limits)
            let cb = try b.session.register(channel: Self.appID, limits: limits)

            // 8 MB offered to a reader that takes nothing yet: 32 × the fabric's buffer.
            let size = 4_000, count = 2_000
            for index in 0..<count {
                var payload = Data(count: size)
                withUnsafeBytes(of: UInt32(index).bigEndian) { payload.replaceSubrange(0..<4, with: $0) }
                try await ca.send(payload, to: b.peer)
            }
            try await mesh.waitUntil("bob's queue is full and alice's writes wait for room") {
                cb.messages.count == limits.inboundCapacity && mesh.fabric.queued(from: a.host, to: b.host).held > 0
            }
            let slack = size + 1_024
            func check(_ when: String) {
                let queued = mesh.fabric.queued(from: a.host, to: b.host)
                #expect(queued.buffered > 0, "\(when): bytes wait in the fabric while bob holds reads")
                #expect(queued.buffered <= mesh.fabric.bufferBytes + slack, "\(when): the fabric holds at most its buffer (\(queued.buffered))")
                #expect(queued.held <= highWaterMark + slack, "\(when): alice queues at most her high-water mark (\(queued.held))")
                #expect(cb.messages.count == limits.inboundCapacity, "\(when): bob's queue holds its capacity")
            }
            check("at once")
            // Held reads are no silence (PROTOCOL.md §7.2): the link outlives its keepalive deadline.
            await mesh.advance(by: .seconds(20))
            check("20 s later")
            #expect(mesh.fabric.isLinked(a.host, b.host))

            let received = NIOLockedValueBox<[UInt32]>([])
            mesh.spawn {
                for await message in cb.messages {
                    let index = message.payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    received.withLockedValue { $0.append(index) }
                }
            }
            try await mesh.advance(until: "bob has read everything the fabric held") {
                let queued = mesh.fabric.queued(from: a.host, to: b.host)
                return queued.buffered == 0 && queued.held == 0 && cb.messages.count == 0
            }
            let indices = received.withLockedValue { $0 }
            #expect(indices.count * size >= mesh.fabric.bufferBytes, "what waited in the fabric arrived (\(indices.count) messages)")
            #expect(Array(indices.prefix(limits.inboundCapacity)) == (0..<UInt32(limits.inboundCapacity)).map { $0 }, "the first ones first")
            #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "in order, none twice")
        }
    }

    @Test("withTestMesh shuts its loop down, also when the body throws: a timer left pending fails at the teardown instead of pending forever")
    func teardownShutsTheLoopDown() async throws {
        struct Planned: Error {}
        for throwing in [false, true] {
            let ended = NIOLockedValueBox<Result<Void, any Error>?>(nil)
            do {
                try await withTestMesh { mesh in
                    let a = try await mesh.node("alice"), b = try await mesh.node("bob")
                    try await mesh.link(a, b)
                    // Watched from the start: once the loop is shut down, nothing can hop onto it.
                    mesh.loop.scheduleTask(in: .hours(1)) {}.futureResult.whenComplete { result in
                        ended.withLockedValue { $0 = result }
                    }
                    if throwing { throw Planned() }
                }
            } catch is Planned {}
            // The teardown returns after the loop's shutdown, which failed every timer left.
            let outcome = ended.withLockedValue { $0 }
            #expect(outcome != nil, "the hour-long timer ended with the loop (body threw: \(throwing))")
            if case .success = outcome { Issue.record("the timer fired instead of failing") }
        }
    }
}

/// Reads bytes and drops them.
private final class Discard: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
