import Foundation
import MeshChat
import MeshSession
import MeshStore
import Testing

/// ``Messenger`` holds a receipt that finds no route back and sends it when a route to the line's
/// sender appears (PROTOCOL.md §17.4), instead of leaving the sender to its next retransmission.
@Suite("Messenger: receipts held until a route back", .serialized)
struct HeldReceiptTests {
    @Test("a private line stored while its sender is out of reach is acknowledged once a route to the sender appears, though the sender sends nothing again")
    func heldUntilRoute() async throws {
        let alice = try await Peer("alice")
        let bob = try await Peer("bob")
        let aliceChat = try alice.session.register(channel: .chat, limits: ChatLimits.channel)
        let bobStore = try MessageStore.inMemory()
        let bobMessenger = try Messenger(session: bob.session, store: bobStore)
        let runner = Task { await bobMessenger.run() }
        // A line from alice reaches bob (as if relayed) while bob has no route back to her: its
        // receipt cannot go out now.
        let id = NodeID.random()
        let line = ChatPayload.privateLine(id: id, text: "held", sentAtMilliseconds: ChatPayload.milliseconds(Date()), sequence: 1, floor: 1)
        #expect(bob.session.route(to: alice.id) == nil)
        await bobMessenger.channel.messages.push(ChannelMessage(sender: alice.id, payload: line.encoded, delivery: .sealed, hops: 2, sentAt: Date()))
        try await waitUntil("the line on bob's disk") { (try? bobStore.message(id: id.hex)) != nil }
        // A route appears: bob's held receipt reaches alice, who never sent the line again.
        alice.session.connect(host: "127.0.0.1", port: bob.port)
        let acknowledged = try await next(aliceChat.messages) { message -> [NodeID]? in
            if case .receipt(let ids)? = try? ChatPayload.decode(message.payload, delivery: message.delivery), ids.contains(id) { return ids }
            return nil
        }
        #expect(acknowledged == [id])
        await alice.stop()
        await bob.stop()
        await runner.value
    }
}
