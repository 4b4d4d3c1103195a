import Foundation
@testable import MeshSession
import MeshTestSupport
import MeshTransport
import NIOConcurrencyHelpers
import Testing

/// A relay whose link to the next hop is full (PROTOCOL.md §13.11): the input link whose packets
/// fill its share of that link is held, so TCP slows the sender, instead of the relay dropping
/// what it cannot queue. In-memory tier, virtual time.
@Suite("Relay back-pressure")
struct RelayBackPressureTests {
    static let appID = ChannelID(rawValue: 0x5EED_0016)!
    static let replyID = ChannelID(rawValue: 0x5EED_0017)!

    @Test("a far end that stops reading holds the relay's link to it; the relay holds the sender's link instead of dropping, and everything sealed across it arrives in order once the far end reads",
          .timeLimit(.minutes(1)))
    func relayHoldsTheSender() async throws {
        try await withTestMesh { mesh in
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

            // Carol answers once, so that alice's session with her is established and what follows
            // are session messages (§19.6), which a relay waits for rather than drops (§13.11).
            try await ca.send(Data("hello".utf8), to: c.peer)
            _ = try await mesh.next(cc.messages) { $0 }
            let cb = try c.session.register(channel: Self.replyID)
            let ab = try a.session.register(channel: Self.replyID)
            try await cb.send(Data("hi".utf8), to: a.peer)
            _ = try await mesh.next(ab.messages) { $0 }

            // 8 MB sealed for carol, who reads nothing yet: twice bob's 4 MiB high-water mark to
            // her and eight times alice's share of it (1 MiB), beside the fabric's buffers.
            let size = 4_000, count = 2_000
            let sent = NIOLockedValueBox(0)
            let peer = c.peer
            mesh.spawn {
                for index in 0..<count {
                    var payload = Data(count: size)
                    withUnsafeBytes(of: UInt32(index).bigEndian) { payload.replaceSubrange(0..<4, with: $0) }
                    // As the library's shells send (streams, resources): a congested first hop says
                    // so, and the packet goes again when it has room, so alice herself drops nothing.
                    while true {
                        guard let outcome = try? ca.sendNow(payload, to: peer) else { return }
                        guard case .congested(let writer) = outcome else { break }
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.whenRoom { done.resume() } }
                    }
                    sent.withLockedValue { $0 += 1 }
                }
            }
            try await mesh.advance(until: "carol's queue is full and bob holds alice's link") {
                cc.messages.count == limits.inboundCapacity && mesh.fabric.queued(from: a.host, to: b.host).buffered > 0
                    && sent.withLockedValue { $0 } < count
            }
            // Time passes: nothing is dropped meanwhile, and the links stay up (held reads are no silence, §7.2).
            await mesh.advance(by: .seconds(5))
            #expect(sent.withLockedValue { $0 } < count, "alice's sends wait for room")
            #expect(mesh.fabric.isLinked(a.host, b.host) && mesh.fabric.isLinked(b.host, c.host))

            let received = NIOLockedValueBox<[UInt32]>([])
            mesh.spawn {
                for await message in cc.messages {
                    let index = message.payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    received.withLockedValue { $0.append(index) }
                }
            }
            try await mesh.advance(until: "carol has everything alice sent") {
                received.withLockedValue { $0.count } == count
            }
            let indices = received.withLockedValue { $0 }
            #expect(indices == (0..<UInt32(count)).map { $0 }, "all of them, in order, none twice: the relay dropped nothing")
        }
    }
}
