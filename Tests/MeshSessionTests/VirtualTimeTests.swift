import Foundation
import MeshSession
import MeshTestSupport
import NIOConcurrencyHelpers
import Testing

/// The session's timers on virtual time (the in-memory tier): each test moves the mesh's clock
/// through a timeout that takes real seconds on a real loop and asserts on what it ends in, with
/// no real-time wait.
@Suite("Session timers on virtual time")
struct VirtualTimeTests {
    @Test("a kept link dropped by a cut is dialled again after each redial backoff of virtual time (about 1 s, then 2 s), not at once")
    func redialAfterBackoff() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice"), b = try await mesh.node("bob")
            a.session.connect(host: b.host, port: b.port, redial: true)
            try await mesh.waitUntil("alice keeps a link to bob") { a.session.connectedPeers.contains { $0.id == b.peer.id } }
            await mesh.cut(a, b)
            let cut = mesh.elapsed
            // The link lasted less than RedialBackoff.stable: the first wait is 0.75–1 s.
            try await mesh.advance(until: "alice dials during the cut and is refused", step: .milliseconds(50), limit: .seconds(5)) {
                a.saw { if case .connectFailed = $0 { true } else { false } }
            }
            let firstWait = mesh.elapsed - cut
            #expect(firstWait >= .milliseconds(700) && firstWait <= .milliseconds(1_100), "the first redial waited its backoff (\(firstWait))")
            #expect(!a.session.connectedPeers.contains { $0.id == b.peer.id })

            mesh.fabric.heal(a.host, b.host)
            let healed = mesh.elapsed
            // One more failure: the next wait is 1.5–2 s.
            try await mesh.advance(until: "alice redials bob", step: .milliseconds(50), limit: .seconds(10)) {
                a.session.connectedPeers.contains { $0.id == b.peer.id } && b.session.connectedPeers.contains { $0.id == a.peer.id }
            }
            let secondWait = mesh.elapsed - healed
            #expect(secondWait >= .milliseconds(1_400) && secondWait <= .milliseconds(2_100), "the second redial waited its doubled backoff (\(secondWait))")
        }
    }

    @Test("what a packet carries of the wall clock moves with virtual time: two broadcasts 5 min of virtual time apart are stamped 5 min apart")
    func wallClockIsVirtual() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob"])
            let (a, b) = (nodes[0], nodes[1])
            let id = try #require(ChannelID(rawValue: 0x5EED_0002))
            let sending = try a.session.register(channel: id), receiving = try b.session.register(channel: id)
            try await mesh.advance(until: "A reaches B") { a.session.route(to: b.peer) != nil }
            _ = try await sending.broadcast(Data("first".utf8))
            let first = try await mesh.next(receiving.messages) { $0 }
            for _ in 0..<300 { await mesh.advance(by: .seconds(1)) }
            _ = try await sending.broadcast(Data("second".utf8))
            let second = try await mesh.next(receiving.messages) { $0 }
            let apart = second.sentAt.timeIntervalSince(first.sentAt)
            // On the machine's clock they would be the few real seconds of this test apart.
            #expect(apart >= 299 && apart <= 302, "stamped \(apart) s apart")
        }
    }

    @Test("a ping whose pong cannot come (the relay lost the target, and has not told yet) returns nil at its 5 s timeout of virtual time")
    func pingTimesOut() async throws {
        try await withTestMesh { mesh in
            // Adverts at most every 10 s: B's news of the cut reaches A only after the ping's timeout.
            let nodes = try await mesh.line(["alice", "bob", "carol"]) { $0.routing.minAdvertInterval = .seconds(10) }
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A reaches C", step: .milliseconds(500)) { a.session.route(to: c.peer)?.hops == 2 }
            let carol = try #require(a.session.route(to: c.peer)?.peer)
            #expect(try await a.session.ping(carol) != nil, "a ping through an intact line is answered")

            await mesh.cut(b, c)
            let started = mesh.elapsed
            let outcome = NIOLockedValueBox<Result<Duration?, SessionError>?>(nil)
            mesh.spawn {
                do throws(SessionError) {
                    let rtt = try await a.session.ping(carol, timeout: .seconds(5))
                    outcome.withLockedValue { $0 = .success(rtt) }
                } catch {
                    outcome.withLockedValue { $0 = .failure(error) }
                }
            }
            try await mesh.advance(until: "the ping ends", step: .milliseconds(250), limit: .seconds(9)) {
                outcome.withLockedValue { $0 } != nil
            }
            let result = try #require(outcome.withLockedValue { $0 })
            #expect(try result.get() == nil, "no pong came")
            #expect(mesh.elapsed - started >= .seconds(5), "it waited its timeout of virtual time")
        }
    }

    @Test("a stream across B whose B—C link is cut ends on both sides as timed out, the reader after its 20 s peer timeout of virtual time")
    func streamTimesOut() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob", "carol"])
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A reaches C") { a.session.route(to: c.peer)?.hops == 2 }
            let carol = try #require(a.session.route(to: c.peer)?.peer)
            let accepted = try await c.session.acceptStreams()
            let stream = try await a.session.startStream(withName: "log", to: carol)
            let input = try await mesh.next(accepted) { $0 }
            #expect(input.name == "log")

            let read = NIOLockedValueBox<(bytes: Int, end: StreamError??)>((0, nil))
            mesh.spawn {
                do {
                    for try await chunk in input { read.withLockedValue { $0.bytes += chunk.count } }
                    read.withLockedValue { $0.end = .some(nil) }
                } catch {
                    read.withLockedValue { $0.end = .some(error as? StreamError) }
                }
            }
            try await stream.write(Data(repeating: 7, count: 1_000))
            try await mesh.advance(until: "carol reads the first bytes") { read.withLockedValue { $0.bytes } == 1_000 }

            await mesh.cut(b, c)
            let cut = mesh.elapsed
            let finished = NIOLockedValueBox<StreamError??>(nil)
            mesh.spawn {
                do throws(StreamError) {
                    try await stream.finish()
                    finished.withLockedValue { $0 = .some(nil) }
                } catch {
                    finished.withLockedValue { $0 = .some(error) }
                }
            }
            try await mesh.advance(until: "both sides end", step: .milliseconds(500), limit: .seconds(60)) {
                finished.withLockedValue { $0 } != nil && read.withLockedValue { $0.end } != nil
            }
            #expect(finished.withLockedValue { $0 }??.code == .timedOut, "the writer's finish fails: \(String(describing: finished.withLockedValue { $0 }))")
            #expect(read.withLockedValue { $0.end }??.code == .timedOut, "the reader's sequence throws")
            #expect(mesh.elapsed - cut >= StreamLimits().peerTimeout, "the reader waited its peer timeout of virtual time")
        }
    }
}
