import Foundation
import MeshStore
import MeshTestSupport
import MeshCore
import Testing

@Suite("MessageStore history")
struct HistoryTests {
    typealias F = Fixture

    /// a1 (out, alice), m1 (in, mesh), b1 (in, bob), a2 (in, alice), m2 (out, mesh).
    static func filled() throws -> MessageStore {
        let store = try MessageStore.inMemory()
        _ = try store.enqueue(text: "a1", to: F.alice, author: F.me, authorName: "me", now: F.at(1))
        _ = try store.receiveBroadcast(id: F.id(1), from: F.bob, fromName: "bob", text: "m1", sentAt: F.at(2), hops: 1, now: F.at(2))
        var fromBob = F.incoming(2, from: F.bob, sequence: 1)
        fromBob.text = "b1"
        _ = try store.receive(fromBob, now: F.at(3))
        var fromAlice = F.incoming(3, sequence: 1)
        fromAlice.text = "a2"
        _ = try store.receive(fromAlice, now: F.at(4))
        _ = try store.enqueue(text: "m2", to: nil, author: F.me, authorName: "me", now: F.at(5))
        return store
    }

    @Test("history returns the most recent messages, oldest first")
    func orderAndLimit() throws {
        let store = try Self.filled()
        #expect(try store.history(limit: 10).map(\.text) == ["a1", "m1", "b1", "a2", "m2"])
        #expect(try store.history(limit: 2).map(\.text) == ["a2", "m2"])
        #expect(try store.history(limit: 0).isEmpty)
    }

    @Test("history filters by conversation")
    func perConversation() throws {
        let store = try Self.filled()
        #expect(try store.history(limit: 10, conversation: .direct(F.alice)).map(\.text) == ["a1", "a2"])
        #expect(try store.history(limit: 1, conversation: .direct(F.alice)).map(\.text) == ["a2"])
        #expect(try store.history(limit: 10, conversation: .direct(F.bob)).map(\.text) == ["b1"])
        #expect(try store.history(limit: 10, conversation: .mesh).map(\.text) == ["m1", "m2"])
        let outgoing = try store.history(limit: 10, conversation: .mesh).last
        #expect(outgoing?.isOutgoing == true && outgoing?.author == F.me && outgoing?.status == .queued)
    }

    @Test("prune drops the oldest history beyond maxHistory but keeps messages still in the outbox")
    func pruneHistory() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxHistory: 2))
        let queued = try store.enqueue(text: "queued", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        for n in 1...3 {
            _ = try store.receiveBroadcast(id: F.id(n), from: F.bob, fromName: "bob", text: "m\(n)", sentAt: F.t0, hops: 1, now: F.t0)
        }
        try store.prune(now: F.t0)
        #expect(try store.history(limit: 10).map(\.text) == ["queued", "m3"])
        #expect(try store.pending(to: F.alice).map(\.message.id) == [queued.message.id])
        // Pruned history does not make old ids new again: the seen ids still know them.
        #expect(try store.receiveBroadcast(id: F.id(1), from: F.bob, fromName: "bob", text: "m1", sentAt: F.t0, hops: 1, now: F.t0) == nil)
    }

    @Test("prune forgets seen ids past the retention; by then such a message is stale")
    func pruneSeen() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxHistory: 0))
        _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
        let later = F.at(8 * 24 * 3600 + 1)
        try store.prune(now: later)
        #expect(try store.history(limit: 10).isEmpty)
        let replay = try store.receive(F.incoming(1, sequence: 1), now: later)
        #expect(!replay.duplicate && replay.refused?.contains("is stale") == true && replay.deliver.isEmpty)
    }

    @Test("prune keeps at most maxSeen ids, forgetting the oldest")
    func pruneSeenBound() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxSeen: 2, maxHistory: 0))
        for n in 1...3 {
            _ = try store.receiveBroadcast(id: F.id(n), from: F.bob, fromName: "bob", text: "m", sentAt: F.at(Double(n)),
                                           hops: 1, now: F.at(Double(n)))
        }
        try store.prune(now: F.at(10))
        #expect(try store.receiveBroadcast(id: F.id(3), from: F.bob, fromName: "bob", text: "m", sentAt: F.at(3), hops: 1, now: F.at(10)) == nil)
        #expect(try store.receiveBroadcast(id: F.id(1), from: F.bob, fromName: "bob", text: "m", sentAt: F.at(1), hops: 1, now: F.at(10)) != nil)
    }
}
