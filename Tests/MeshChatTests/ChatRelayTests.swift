import Foundation
import MeshChat
import MeshSession
import MeshStore
import Testing

/// The chat on channel 1 across a relay on loopback: A—B—C, messengers on A and C only (B relays
/// sealed and signed packets without knowing the chat), real sockets, signatures and sealing.
@Suite("Messenger across a relay", .serialized)
struct ChatRelayTests {
    /// A messenger on a peer, its store, and its run task.
    struct Chat {
        let peer: Peer
        let store: MessageStore
        let messenger: Messenger
        let runner: Task<Void, Never>

        init(_ name: String) async throws {
            peer = try await Peer(name)
            store = try MessageStore.inMemory()
            messenger = try Messenger(session: peer.session, store: store)
            let messenger = self.messenger
            runner = Task { await messenger.run() }
        }

        func stop() async {
            await peer.stop()
            await runner.value
        }
    }

    /// The next line a messenger reports as received and stored.
    static func nextLine(_ messenger: Messenger) async throws -> StoredMessage {
        try await next(messenger.events) { event -> StoredMessage? in
            if case .message(let message) = event { return message }
            return nil
        }
    }

    @Test("a private line from A reaches C through B sealed, in order, and C's receipt marks it delivered; a line to everyone reaches C with 2 hops")
    func privateLineAndReceipt() async throws {
        let a = try await Chat("alice"), c = try await Chat("carol")
        let b = try await Peer("bob")
        a.peer.session.connect(host: "127.0.0.1", port: b.port)
        c.peer.session.connect(host: "127.0.0.1", port: b.port)
        try await waitUntil("A and C reach each other") {
            a.peer.session.route(to: c.peer.id)?.hops == 2 && c.peer.session.route(to: a.peer.id)?.hops == 2
        }
        let sent = try await a.messenger.send(text: "only for carol", to: c.peer.id)
        let received = try await Self.nextLine(c.messenger)
        #expect(received.id == sent.id && received.text == "only for carol")
        #expect(received.author == a.peer.id.id && received.authorName == "alice")
        #expect(received.conversation == .direct(a.peer.id.id))
        #expect(received.hops == 2)
        let delivered = try await next(a.messenger.events) { event -> StoredMessage? in
            if case .status(let message) = event, message.status == .delivered { return message }
            return nil
        }
        #expect(delivered.id == sent.id)

        let line = try await a.messenger.send(text: "hello, mesh", to: nil)
        let everyone = try await Self.nextLine(c.messenger)
        #expect(everyone.id == line.id && everyone.text == "hello, mesh" && everyone.hops == 2)
        #expect(everyone.conversation == .mesh)
        await a.stop()
        await c.stop()
        await b.stop()
    }

    @Test("hostile chat payloads on channel 1 (garbage, a line sealed, a bad id) are dropped and the link stays: the next valid line arrives alone")
    func hostilePayloads() async throws {
        let bob = try await Chat("bob")
        let mallory = try await Peer("mallory")
        let channel = try mallory.session.register(channel: .chat, limits: ChatLimits.channel)
        mallory.session.connect(host: "127.0.0.1", port: bob.peer.port)
        try await waitUntil("mallory reaches bob") { mallory.session.route(to: bob.peer.id) != nil }
        let now = ChatPayload.milliseconds(Date())
        try await channel.send(Data([0xff, 0x01, 0x02]), to: bob.peer.id)
        try await channel.send(ChatPayload.line(id: NodeID.random(), text: "sealed line", sentAtMilliseconds: now).encoded, to: bob.peer.id)
        try await channel.send(Data([0x12, 0x05, 0x0a, 0x03, 1, 2, 3]), to: bob.peer.id)
        try await channel.broadcast(ChatPayload.privateLine(id: NodeID.random(), text: "broadcast private", sentAtMilliseconds: now,
                                                            sequence: 1, floor: 1).encoded)
        let valid = NodeID.random()
        try await channel.send(ChatPayload.privateLine(id: valid, text: "valid", sentAtMilliseconds: now, sequence: 1, floor: 1).encoded,
                               to: bob.peer.id)
        let first = try await Self.nextLine(bob.messenger)
        #expect(first.id == valid.hex && first.text == "valid")
        #expect(bob.peer.session.connectedPeers.contains { $0.id == mallory.id.id })
        // Bob acknowledged the valid line to mallory.
        let receipt = try await next(channel.messages) { message -> [NodeID]? in
            if case .receipt(let ids)? = try? ChatPayload.decode(message.payload, delivery: message.delivery) { return ids }
            return nil
        }
        #expect(receipt == [valid])
        await mallory.stop()
        await bob.stop()
    }
}
