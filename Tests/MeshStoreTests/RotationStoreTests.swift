import Foundation
import MeshStore
import MeshTestSupport
import MeshCore
import Testing

/// A conversation handed to a peer's new key after a verified rotation (PROTOCOL.md §20.2).
@Suite("MessageStore key rotation")
struct RotationStoreTests {
    typealias F = Fixture

    @Test("history, queued lines (in order, the counter going on) and the sender's sequence move to the new node")
    func moved() throws {
        let store = try MessageStore.inMemory()
        let newBob = try NodeID(hex: "000000000000000000000000000000b1")
        let one = try store.enqueue(text: "one", to: F.bob, author: F.me, authorName: "me", now: F.t0)
        let two = try store.enqueue(text: "two", to: F.bob, author: F.me, authorName: "me", now: F.at(1))
        _ = try store.delivered(ids: [one.message.id], from: F.bob, now: F.at(2))
        // bob's own lines: 1 delivered, 3 held waiting for 2.
        _ = try store.receive(F.incoming(10, from: F.bob, sequence: 1), now: F.at(3))
        _ = try store.receive(F.incoming(11, from: F.bob, sequence: 3, floor: 2), now: F.at(3))
        _ = try store.enqueue(text: "for alice", to: F.alice, author: F.me, authorName: "me", now: F.at(4))

        let moved = try store.moveConversation(from: F.bob, to: newBob)
        #expect(moved.history == 3 && moved.queued == 1)
        #expect(try store.pending(to: F.bob).isEmpty)
        #expect(try store.pending(to: newBob).map(\.message.id) == [two.message.id])
        #expect(try store.history(limit: 10, conversation: .direct(newBob)).map(\.text) == ["one", "two", F.incoming(10, from: F.bob, sequence: 1).text])
        #expect(try store.history(limit: 10, conversation: .direct(F.bob)).isEmpty)
        #expect(try store.pending(to: F.alice).count == 1)
        #expect(try store.floor(for: newBob) == 2)
        // The counter goes on: the next line to the new key is 3, after "two".
        #expect(try store.enqueue(text: "three", to: newBob, author: F.me, authorName: "me", now: F.at(5)).sequence == 3)
        // The new key's line 2 releases the held 3: its sequence went on too.
        let released = try store.receive(F.incoming(12, from: newBob, sequence: 2, floor: 2), now: F.at(6))
        #expect(released.deliver.count == 2)
        let again = try store.moveConversation(from: F.bob, to: newBob)
        #expect(again.history == 0 && again.queued == 0)
    }
}
