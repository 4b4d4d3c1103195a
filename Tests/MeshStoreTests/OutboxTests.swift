import Foundation
import MeshStore
import MeshTestSupport
import MeshCore
import Testing

@Suite("MessageStore outbox")
struct OutboxTests {
    typealias F = Fixture

    @Test("enqueue assigns increasing sequences per destination; the floor is the lowest undelivered")
    func sequences() throws {
        let store = try MessageStore.inMemory()
        let a1 = try store.enqueue(text: "a1", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        let a2 = try store.enqueue(text: "a2", to: F.alice, author: F.me, authorName: "me", now: F.at(1))
        let b1 = try store.enqueue(text: "b1", to: F.bob, author: F.me, authorName: "me", now: F.at(2))
        let m1 = try store.enqueue(text: "m1", to: nil, author: F.me, authorName: "me", now: F.at(3))
        #expect([a1.sequence, a2.sequence, b1.sequence] == [1, 2, 1])
        #expect(a1.message.sequence == 1 && m1.message.sequence == nil)
        #expect(a1.message.id.count == 32 && a1.message.id != a2.message.id)
        #expect(a1.message.status == .queued && a1.attempts == 0 && a1.lastAttemptAt == nil)
        #expect(a1.expiresAt == F.t0.addingTimeInterval(7 * 24 * 3600))
        #expect(try store.pending(to: F.alice) == [a1, a2])
        #expect(try store.pending(to: nil) == [m1])
        #expect(try store.pendingDestinations() == [F.alice, F.bob, nil])
        #expect(try store.floor(for: F.alice) == 1)
        _ = try store.delivered(ids: [a1.message.id], from: F.alice, now: F.at(4))
        #expect(try store.floor(for: F.alice) == 2)
        _ = try store.delivered(ids: [a2.message.id], from: F.alice, now: F.at(4))
        #expect(try store.floor(for: F.alice) == 3)
        #expect(try store.floor(for: try NodeID(hex: "000000000000000000000000000000cc")) == 1)
    }

    @Test("the outbox, history and next sequence survive closing and reopening the file")
    func reopen() throws {
        let directory = TemporaryDirectory("meshstore")
        var entries: [OutboxEntry] = []
        do {
            let store = try F.open(directory)
            entries.append(try store.enqueue(text: "one", to: F.alice, author: F.me, authorName: "me", now: F.t0))
            entries.append(try store.enqueue(text: "two", to: F.alice, author: F.me, authorName: "me", now: F.at(1)))
            try store.recordAttempt(ids: [entries[0].message.id], now: F.at(2))
            try store.close()
        }
        let store = try F.open(directory)
        let pending = try store.pending(to: F.alice)
        #expect(pending.map(\.message.id) == entries.map(\.message.id))
        #expect(pending[0].attempts == 1 && pending[0].lastAttemptAt == F.at(2) && pending[0].message.status == .sent)
        #expect(pending[1] == entries[1])
        #expect(try store.history(limit: 10).map(\.text) == ["one", "two"])
        let three = try store.enqueue(text: "three", to: F.alice, author: F.me, authorName: "me", now: F.at(3))
        #expect(three.sequence == 3)
    }

    @Test("recordAttempt counts attempts and moves queued to sent; unknown ids are ignored")
    func attempts() throws {
        let store = try MessageStore.inMemory()
        let entry = try store.enqueue(text: "x", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        try store.recordAttempt(ids: [entry.message.id, F.id(999)], now: F.at(5))
        try store.recordAttempt(ids: [entry.message.id], now: F.at(9))
        let pending = try #require(try store.pending(to: F.alice).first)
        #expect(pending.attempts == 2 && pending.lastAttemptAt == F.at(9))
        #expect(try store.message(id: entry.message.id)?.status == .sent)
    }

    @Test("a full outbox refuses per destination and in total, naming the limit and the count")
    func outboxFull() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxQueuedPerDestination: 2, maxQueuedTotal: 3))
        for _ in 0..<2 { _ = try store.enqueue(text: "a", to: F.alice, author: F.me, authorName: "me", now: F.t0) }
        let perDestination = #expect(throws: StoreError.self) {
            try store.enqueue(text: "a", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        }
        #expect(perDestination?.code == .outboxFull)
        #expect(perDestination?.description == "outbox for \(F.alice.hex) holds 2 messages, the maximum per destination is 2")
        _ = try store.enqueue(text: "b", to: F.bob, author: F.me, authorName: "me", now: F.t0)
        let total = #expect(throws: StoreError.self) {
            try store.enqueue(text: "m", to: nil, author: F.me, authorName: "me", now: F.t0)
        }
        #expect(total?.code == .outboxFull)
        #expect(total?.description == "outbox holds 3 messages in all, the maximum total is 3")
        // A refused message left nothing behind.
        #expect(try store.history(limit: 10).count == 3)
    }

    @Test("a receipt removes the message and marks it delivered; one from another peer changes nothing")
    func receipts() throws {
        let store = try MessageStore.inMemory()
        let entry = try store.enqueue(text: "hi", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        #expect(try store.delivered(ids: [entry.message.id], from: F.bob, now: F.at(1)).isEmpty)
        #expect(try store.pending(to: F.alice).count == 1)
        #expect(try store.message(id: entry.message.id)?.status == .queued)
        let changed = try store.delivered(ids: [entry.message.id.uppercased(), F.id(7), "junk"], from: F.alice, now: F.at(2))
        #expect(changed.map(\.id) == [entry.message.id] && changed.first?.status == .delivered)
        #expect(try store.pending(to: F.alice).isEmpty)
        #expect(try store.message(id: entry.message.id)?.status == .delivered)
        // A second receipt (the first reached us twice), in upper case, changes nothing more.
        #expect(try store.delivered(ids: [entry.message.id.uppercased()], from: F.alice, now: F.at(3)).isEmpty)
        #expect(try store.delivered(ids: [entry.message.id], from: F.alice, now: F.at(3)).isEmpty)
    }

    @Test("expire removes entries past their expiry and marks them expired; a late receipt still marks delivery")
    func expiry() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxMessageAge: .seconds(100)))
        let old = try store.enqueue(text: "old", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        let broadcast = try store.enqueue(text: "room", to: nil, author: F.me, authorName: "me", now: F.at(10))
        let young = try store.enqueue(text: "young", to: F.alice, author: F.me, authorName: "me", now: F.at(50))
        #expect(try store.nextExpiry() == F.at(100))
        #expect(try store.expire(now: F.at(99)).isEmpty)
        let expired = try store.expire(now: F.at(110))
        #expect(expired.map(\.id) == [old.message.id, broadcast.message.id])
        #expect(expired.allSatisfy { $0.status == .expired })
        #expect(try store.pending(to: F.alice).map(\.message.id) == [young.message.id])
        #expect(try store.pending(to: nil).isEmpty)
        #expect(try store.message(id: old.message.id)?.status == .expired)
        // The floor moved past the given-up message.
        #expect(try store.floor(for: F.alice) == 2)
        #expect(try store.delivered(ids: [old.message.id], from: F.alice, now: F.at(120)).map(\.status) == [.delivered])
    }

    @Test("a broadcast waits in the outbox until it is sent once")
    func broadcast() throws {
        let store = try MessageStore.inMemory()
        let entry = try store.enqueue(text: "room", to: nil, author: F.me, authorName: "me", now: F.t0)
        try store.broadcastSent(id: entry.message.id, now: F.at(1))
        #expect(try store.pending(to: nil).isEmpty)
        #expect(try store.pendingDestinations().isEmpty)
        #expect(try store.message(id: entry.message.id)?.status == .sent)
        #expect(try store.message(id: entry.message.id)?.conversation == .mesh)
        // A private message is not removed by broadcastSent.
        let direct = try store.enqueue(text: "hi", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        try store.broadcastSent(id: direct.message.id, now: F.at(1))
        #expect(try store.pending(to: F.alice).count == 1)
    }
}
