import Foundation
import MeshChat
import MeshSession
import MeshStore
import MeshTestSupport
import Testing

/// The chat alone on the in-memory tier: A—B—C on an `InMemoryFabric` (no sockets, virtual time),
/// messengers on A and C only; B relays sealed packets without knowing the chat.
@Suite("Chat on the in-memory mesh")
struct ChatInMemoryTests {
    /// A messenger on a mesh node, run for the mesh's lifetime.
    static func messenger(on node: TestNode, in mesh: TestMesh) throws -> Messenger {
        let messenger = try Messenger(session: node.session, store: try MessageStore.inMemory(),
                                      logger: node.logs.logger(label: "\(node.name).chat"))
        mesh.spawn { await messenger.run() }
        return messenger
    }

    static func line(_ mesh: TestMesh) async throws -> (TestNode, TestNode, TestNode) {
        let a = try await mesh.node("alice", readsEvents: false)
        let b = try await mesh.node("bob")
        let c = try await mesh.node("carol", readsEvents: false)
        try await mesh.link(a, b)
        try await mesh.link(b, c)
        try await mesh.advance(until: "A and C reach each other") {
            a.session.route(to: c.peer)?.hops == 2 && c.session.route(to: a.peer)?.hops == 2
        }
        return (a, b, c)
    }

    static func status(_ wanted: DeliveryStatus, of id: String, at messenger: Messenger, in mesh: TestMesh) async throws {
        _ = try await mesh.next(messenger.events) { event -> Bool? in
            if case .status(let message) = event, message.id == id, message.status == wanted { return true }
            return nil
        }
    }

    static func nextLine(_ messenger: Messenger, in mesh: TestMesh) async throws -> StoredMessage {
        try await mesh.next(messenger.events) { event -> StoredMessage? in
            if case .message(let message) = event { return message }
            return nil
        }
    }

    @Test("a private line from A reaches C through B with 2 hops, and C's receipt marks it delivered at A")
    func privateLineAcrossRelay() async throws {
        try await withTestMesh { mesh in
            let (a, _, c) = try await Self.line(mesh)
            let alice = try Self.messenger(on: a, in: mesh), carol = try Self.messenger(on: c, in: mesh)
            let sent = try await alice.send(text: "only for carol", to: c.peer)
            let received = try await Self.nextLine(carol, in: mesh)
            #expect(received.id == sent.id && received.text == "only for carol")
            #expect(received.conversation == .direct(a.peer.id) && received.hops == 2)
            try await Self.status(.delivered, of: sent.id, at: alice, in: mesh)
        }
    }

    @Test("a private line to C while B—C is cut waits in A's outbox; once the link heals it is sent, received once and acknowledged")
    func outboxWhilePeerAway() async throws {
        try await withTestMesh { mesh in
            let (a, b, c) = try await Self.line(mesh)
            let alice = try Self.messenger(on: a, in: mesh), carol = try Self.messenger(on: c, in: mesh)
            await mesh.cut(b, c)
            try await mesh.advance(until: "A loses its route to C") { a.session.route(to: c.peer) == nil }
            let queued = try await alice.send(text: "while you were away", to: c.peer)
            #expect(queued.status == .queued, "no route: the line waits in the outbox")
            // Ticks pass (virtual time) with C away: the line stays queued, nothing is lost.
            await mesh.advance(by: .seconds(10))
            #expect(try alice.store.message(id: queued.id)?.status == .queued)

            try await mesh.link(b, c)
            try await mesh.advance(until: "the line reaches C") {
                (try? carol.store.message(id: queued.id)) != nil
            }
            let received = try await Self.nextLine(carol, in: mesh)
            #expect(received.id == queued.id && received.text == "while you were away" && received.hops == 2)
            try await mesh.advance(until: "A hears C's receipt") {
                (try? alice.store.message(id: queued.id))?.status == .delivered
            }
        }
    }
}

extension ChatInMemoryTests {
    @Test("a private line with no receipt is sent again on A's retry backoff, which runs on virtual time: the copy comes after 4 s of it, not of the wall clock")
    func retryOnVirtualTime() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice", readsEvents: false), b = try await mesh.node("bob"), c = try await mesh.node("carol")
            // C reads channel 1 raw and never acknowledges.
            let silent = try c.session.register(channel: .chat, limits: ChatLimits.channel)
            // The messenger runs before the links come up, so the route to C is news it has
            // acted on before the line is sent: what follows is the retry alone.
            let alice = try Self.messenger(on: a, in: mesh)
            try await mesh.link(a, b)
            try await mesh.link(b, c)
            try await mesh.advance(until: "A reaches C") { a.session.route(to: c.peer)?.hops == 2 }
            let cID = c.peer.id
            _ = try await mesh.next(alice.events) { event -> Bool? in
                if case .session(.reachabilityChanged(let peer, _?)) = event, peer.id == cID { return true }
                return nil
            }
            let sent = try await alice.send(text: "are you there?", to: c.peer)
            let first = try await mesh.next(silent.messages) { $0 }
            #expect(first.sender.id == a.peer.id && first.hops == 2)
            let before = mesh.elapsed
            // The first retry is due 4 s (virtual) after the attempt; the bound is 10 s of virtual
            // time taken in 100 ms steps, far less than 4 s of wall time.
            try await mesh.advance(until: "C receives the line again", limit: .seconds(10)) { silent.messages.count > 0 }
            let copy = try await mesh.next(silent.messages) { $0 }
            #expect(copy.payload == first.payload, "the same line, id \(sent.id)")
            #expect(mesh.elapsed - before >= .seconds(4), "not before the retry interval")
        }
    }
}
