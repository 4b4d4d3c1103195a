import Foundation
@testable import MeshSession
import MeshTestSupport
import MeshTransport
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A relay whose link to the next hop is full (PROTOCOL.md §13.11): the input link whose packets
/// fill its share of that link is held, so TCP slows the sender, instead of the relay dropping
/// what it cannot queue. In-memory tier, virtual time.
@Suite("Relay back-pressure")
struct RelayBackPressureTests {
    static let appID = ChannelID(rawValue: 0x5EED_0016)!
    static let replyID = ChannelID(rawValue: 0x5EED_0017)!

    /// Alice, bob and carol on a line, with an established end-to-end session alice → carol (so what
    /// follows are session messages, which a relay holds for rather than drops, §13.11), channels
    /// on which carol's queue holds 8 messages and waits when full, and alice's channel to bob.
    private struct Line {
        let a: TestNode, b: TestNode, c: TestNode
        let ca: MeshChannel, cc: MeshChannel, cb: MeshChannel, ba: MeshChannel
        let limits: ChannelLimits
    }

    private func line(_ mesh: TestMesh) async throws -> Line {
        let nodes = try await mesh.line(["alice", "bob", "carol"])
        let (a, b, c) = (nodes[0], nodes[1], nodes[2])
        try await mesh.advance(until: "A and C reach each other") {
            a.session.route(to: c.peer)?.hops == 2 && c.session.route(to: a.peer)?.hops == 2
        }
        var limits = ChannelLimits()
        limits.overflow = .wait
        limits.inboundCapacity = 8
        limits.messagesPerSecond = 100_000
        limits.burst = 100_000
        let ca = try a.session.register(channel: Self.appID, limits: limits)
        let cc = try c.session.register(channel: Self.appID, limits: limits)
        let ba = try b.session.register(channel: Self.appID)
        // Carol answers once, so that alice's session with her is established.
        try await ca.send(Data("hello".utf8), to: c.peer)
        _ = try await mesh.next(cc.messages) { $0 }
        let cb = try c.session.register(channel: Self.replyID)
        let ab = try a.session.register(channel: Self.replyID)
        try await cb.send(Data("hi".utf8), to: a.peer)
        _ = try await mesh.next(ab.messages) { $0 }
        return Line(a: a, b: b, c: c, ca: ca, cc: cc, cb: cb, ba: ba, limits: limits)
    }

    /// Sends `count` numbered payloads of 4,000 bytes sealed for carol, as the library's shells send
    /// (streams, resources): a congested first hop says so and the packet goes again when it has
    /// room, so alice herself drops nothing. 8 MB: twice bob's 4 MiB high-water mark to carol and
    /// eight times alice's share of it (1 MiB), beside the fabric's buffers.
    private func spawnBulk(_ mesh: TestMesh, _ line: Line, count: Int, sent: NIOLockedValueBox<Int>) {
        let (ca, peer) = (line.ca, line.c.peer)
        mesh.spawn {
            for index in 0..<count {
                var payload = Data(count: 4_000)
                withUnsafeBytes(of: UInt32(index).bigEndian) { payload.replaceSubrange(0..<4, with: $0) }
                while true {
                    guard let outcome = try? ca.sendNow(payload, to: peer) else { return }
                    guard case .congested(let writer) = outcome else { break }
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.whenRoom { done.resume() } }
                }
                sent.withLockedValue { $0 += 1 }
            }
        }
    }

    private func spawnReader(_ mesh: TestMesh, _ channel: MeshChannel, into received: NIOLockedValueBox<[UInt32]>) {
        mesh.spawn {
            for await message in channel.messages {
                let index = message.payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                received.withLockedValue { $0.append(index) }
            }
        }
    }

    @Test("a far end that pauses reading for less than the hold limit holds the relay's link to it; the relay holds the sender's link instead of dropping, and everything sealed across it arrives in order",
          .timeLimit(.minutes(1)))
    func relayHoldsTheSender() async throws {
        try await withTestMesh { mesh in
            let line = try await line(mesh)
            let count = 2_000
            let sent = NIOLockedValueBox(0)
            spawnBulk(mesh, line, count: count, sent: sent)
            try await mesh.advance(until: "carol's queue is full and bob holds alice's link") {
                line.cc.messages.count == line.limits.inboundCapacity && mesh.fabric.queued(from: line.a.host, to: line.b.host).buffered > 0
                    && sent.withLockedValue { $0 } < count
            }
            await mesh.advance(by: .nanoseconds(LinkWriter.relayHoldLimit.nanoseconds / 2))
            #expect(sent.withLockedValue { $0 } < count, "alice's sends wait for room")
            let received = NIOLockedValueBox<[UInt32]>([])
            spawnReader(mesh, line.cc, into: received)
            try await mesh.advance(until: "carol has everything alice sent") {
                received.withLockedValue { $0.count } == count
            }
            let indices = received.withLockedValue { $0 }
            #expect(indices == (0..<UInt32(count)).map { $0 }, "all of them, in order, none twice: the relay dropped nothing")
            #expect(mesh.fabric.isLinked(line.a.host, line.b.host) && mesh.fabric.isLinked(line.b.host, line.c.host))
        }
    }

    @Test("a far end that stops reading holds the sender's link at the relay for at most the hold limit: then the relay drops what the sender relays to it and reads on, so the sender's other traffic through the relay still arrives",
          .timeLimit(.minutes(1)))
    func holdIsBounded() async throws {
        try await withTestMesh { mesh in
            let line = try await line(mesh)
            let count = 2_000
            let sent = NIOLockedValueBox(0)
            spawnBulk(mesh, line, count: count, sent: sent)
            try await mesh.advance(until: "carol's queue is full and bob holds alice's link") {
                line.cc.messages.count == line.limits.inboundCapacity && mesh.fabric.queued(from: line.a.host, to: line.b.host).buffered > 0
                    && sent.withLockedValue { $0 } < count
            }
            // Carol never reads. Past the hold limit bob reads alice's link on: her sends complete
            // (what bob cannot queue to carol is dropped) and her line to bob himself arrives.
            try await mesh.advance(until: "alice sent everything", limit: .seconds(5)) { sent.withLockedValue { $0 } == count }
            try await line.ca.send(Data("to bob".utf8), to: line.b.peer)
            let toBob = try await mesh.next(line.ba.messages) { $0 }
            #expect(toBob.payload == Data("to bob".utf8))
            let writer = try #require(line.b.session.registry.withLockedValue { $0.entries[line.c.peer.id]?.writer })
            #expect(writer.relayDropped > 0, "bob dropped what did not fit carol's link")
            #expect(mesh.fabric.isLinked(line.a.host, line.b.host) && mesh.fabric.isLinked(line.b.host, line.c.host))
            // What bob had queued before still arrives, in order, none twice; the rest was dropped.
            let received = NIOLockedValueBox<[UInt32]>([])
            spawnReader(mesh, line.cc, into: received)
            try await mesh.advance(until: "carol read what bob had queued") {
                received.withLockedValue { $0.count } > Int(line.limits.inboundCapacity) && line.b.session.registry.withLockedValue { $0.entries[line.c.peer.id]?.writer }?.bytesInFlight == 0
            }
            let indices = received.withLockedValue { $0 }
            #expect(indices.count < count)
            #expect(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "in order, none twice")
        }
    }
}
