import Foundation
import MeshMessaging
@testable import MeshSession
import MeshStore
import MeshWire
import Testing

/// ``Messenger`` holds a receipt that finds no route back and sends it when a route to the line's
/// sender appears (PROTOCOL.md §13.8), instead of leaving the sender to its next retransmission.
@Suite("Messenger: receipts held until a route back", .serialized)
struct HeldReceiptTests {
    @Test("a private line stored while its sender is out of reach is acknowledged once a route to the sender appears, though the sender sends nothing again")
    func heldUntilRoute() async throws {
        let alice = try await Peer("alice")
        let bob = try await Peer("bob")
        let bobStore = try MessageStore.inMemory()
        let bobMessenger = Messenger(session: bob.session, store: bobStore)
        let runner = Task { await bobMessenger.run() }
        // A line from alice reaches bob (as if relayed) while bob has no route back to her: its
        // receipt cannot go out now.
        let id = NodeID.random().hex
        let text = TextMessage(id: id, text: "held", sentAt: Date(), order: MessageOrder(sequence: 1, floor: 1))
        #expect(bob.session.route(to: alice.id) == nil)
        await bob.session.events.push(.received(ReceivedMessage(sender: alice.id, mode: .reliable, content: .text(text),
                                                                hops: 2, isPrivate: true)))
        try await waitUntil("the line on bob's disk") { (try? bobStore.message(id: id)) != nil }
        // A route appears: bob's held receipt reaches alice, who never sent the line again.
        alice.session.connect(host: "127.0.0.1", port: bob.port)
        let acknowledged = try await next(alice.session.events) { event -> [String]? in
            if case .receipt(_, let ids) = event, ids.contains(id) { return ids }
            return nil
        }
        #expect(acknowledged == [id])
        await alice.stop()
        await bob.stop()
        await runner.value
    }
}
