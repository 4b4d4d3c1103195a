import Foundation
import MeshStore
import MeshTestSupport
import MeshCore
import Testing

@Suite("MessageStore inbox")
struct InboxTests {
    typealias F = Fixture

    @Test("in-order messages are delivered, recorded and acknowledged")
    func inOrder() throws {
        let store = try MessageStore.inMemory()
        let outcome = try store.receive(F.incoming(1, sequence: 1), now: F.at(1))
        #expect(outcome.acknowledge && !outcome.duplicate && outcome.refused == nil)
        let message = try #require(outcome.deliver.first)
        #expect(message.id == F.id(1) && message.conversation == .direct(F.alice) && !message.isOutgoing)
        #expect(message.author == F.alice && message.authorName == "alice" && message.hops == 2)
        #expect(message.status == .received && message.sequence == 1 && message.recordedAt == F.at(1))
        #expect(try store.message(id: F.id(1)) == message)
    }

    @Test("a duplicate after reopening the file is acknowledged but not delivered")
    func duplicateAfterReopen() throws {
        let directory = TemporaryDirectory("meshstore")
        do {
            let store = try F.open(directory)
            #expect(try store.receive(F.incoming(1, sequence: 1), now: F.t0).deliver.count == 1)
            #expect(try store.receive(F.incoming(1, sequence: 1), now: F.t0).duplicate)
            try store.close()
        }
        let store = try F.open(directory)
        let again = try store.receive(F.incoming(1, sequence: 1), now: F.at(60))
        #expect(again == ReceiveOutcome(deliver: [], acknowledge: true, duplicate: true, refused: nil))
        // Ids are compared case-insensitively.
        var upper = F.incoming(1, sequence: 1)
        upper.id = upper.id.uppercased()
        #expect(try store.receive(upper, now: F.at(60)).duplicate)
    }

    @Test("held messages survive reopening and are delivered when the gap fills")
    func heldSurvivesReopen() throws {
        let directory = TemporaryDirectory("meshstore")
        do {
            let store = try F.open(directory)
            _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
            let held = try store.receive(F.incoming(3, sequence: 3, floor: 2), now: F.t0)
            #expect(held.deliver.isEmpty && held.acknowledge && !held.duplicate)
            #expect(try store.message(id: F.id(3)) == nil)
            try store.close()
        }
        let store = try F.open(directory)
        #expect(try store.heldCount(from: F.alice) == 1)
        // A retransmission of the held message is a duplicate.
        #expect(try store.receive(F.incoming(3, sequence: 3, floor: 2), now: F.at(1)).duplicate)
        let fill = try store.receive(F.incoming(2, sequence: 2), now: F.at(2))
        #expect(fill.deliver.map(\.id) == [F.id(2), F.id(3)])
        #expect(fill.deliver[1].recordedAt == F.t0)
        #expect(try store.history(limit: 10).map(\.sequence) == [1, 2, 3])
        #expect(try store.heldCount(from: F.alice) == 0)
    }

    @Test("releaseHeld gives up on a gap after the hold timeout, also after reopening")
    func releaseHeld() throws {
        let directory = TemporaryDirectory("meshstore")
        do {
            let store = try F.open(directory)
            _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
            _ = try store.receive(F.incoming(3, sequence: 3, floor: 2), now: F.t0)
            _ = try store.receive(F.incoming(4, sequence: 4, floor: 2), now: F.at(10))
            _ = try store.receive(F.incoming(12, from: F.bob, sequence: 2, floor: 1), now: F.at(30))
            #expect(try store.nextHoldDeadline() == F.at(120))
            #expect(try store.releaseHeld(now: F.at(119)).isEmpty)
        }
        let store = try F.open(directory)
        #expect(try store.releaseHeld(now: F.at(120)).map(\.id) == [F.id(3), F.id(4)])
        #expect(try store.nextHoldDeadline() == F.at(150))
        #expect(try store.releaseHeld(now: F.at(150)).map(\.id) == [F.id(12)])
        #expect(try store.nextHoldDeadline() == nil)
        // The late message 2 from alice is still delivered (out of order), not lost.
        #expect(try store.receive(F.incoming(2, sequence: 2), now: F.at(200)).deliver.map(\.id) == [F.id(2)])
        // The order continues after the released ones.
        #expect(try store.receive(F.incoming(5, sequence: 5), now: F.at(201)).deliver.map(\.id) == [F.id(5)])
    }

    @Test("the sender's floor releases held messages past a gap it gave up")
    func floorReleases() throws {
        let store = try MessageStore.inMemory()
        _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
        _ = try store.receive(F.incoming(3, sequence: 3, floor: 2), now: F.t0)
        let outcome = try store.receive(F.incoming(4, sequence: 4, floor: 3), now: F.at(1))
        #expect(outcome.deliver.map(\.id) == [F.id(3), F.id(4)])
    }

    @Test("beyond maxHeldPerSender every held message is delivered in order")
    func heldBound() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxHeldPerSender: 2))
        _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
        #expect(try store.receive(F.incoming(3, sequence: 3, floor: 2), now: F.t0).deliver.isEmpty)
        #expect(try store.receive(F.incoming(5, sequence: 5, floor: 2), now: F.t0).deliver.isEmpty)
        let overflow = try store.receive(F.incoming(4, sequence: 4, floor: 2), now: F.t0)
        #expect(overflow.deliver.map(\.sequence) == [3, 4, 5] && overflow.acknowledge)
        #expect(try store.heldCount(from: F.alice) == 0)
        #expect(try store.receive(F.incoming(6, sequence: 6), now: F.t0).deliver.map(\.sequence) == [6])
    }

    @Test("stale and future-dated messages are refused, not acknowledged, not recorded")
    func stale() throws {
        let store = try MessageStore.inMemory()
        let now = F.at(9 * 24 * 3600)
        let old = try store.receive(F.incoming(1, sequence: 1, sentAt: F.t0), now: now)
        #expect(!old.acknowledge && old.deliver.isEmpty && !old.duplicate)
        #expect(old.refused == "message \(F.id(1)) from \(F.alice.shortHex) is stale: sent 777600 s ago, the maximum age is 691200 s")
        let future = try store.receive(F.incoming(2, sequence: 1, sentAt: now.addingTimeInterval(2 * 24 * 3600)), now: now)
        #expect(future.refused?.contains("in the future, the allowed clock skew is 86400 s") == true)
        // Just inside the window (7 days + 1 day of skew) is accepted.
        let edge = try store.receive(F.incoming(3, sequence: 1, sentAt: now.addingTimeInterval(-8 * 24 * 3600)), now: now)
        #expect(edge.deliver.count == 1)
        #expect(try store.message(id: F.id(1)) == nil)
    }

    @Test("malformed ids and sequences are refused")
    func malformed() throws {
        let store = try MessageStore.inMemory()
        var badID = F.incoming(1, sequence: 1)
        badID.id = "not-an-id"
        #expect(try store.receive(badID, now: F.t0).refused?.contains("is not 32 hex digits") == true)
        let zero = try store.receive(F.incoming(2, sequence: 0), now: F.t0)
        #expect(zero.refused?.contains("has sequence 0; expected 1…") == true)
        let huge = try store.receive(F.incoming(3, sequence: .max), now: F.t0)
        #expect(huge.refused != nil && !huge.acknowledge)
    }

    @Test("a restarted sender's sequences from 1 are delivered; dedupe is by id")
    func senderReset() throws {
        let store = try MessageStore.inMemory()
        for n in 1...3 { _ = try store.receive(F.incoming(n, sequence: UInt64(n)), now: F.t0) }
        let reset = try store.receive(F.incoming(100, sequence: 1), now: F.at(10))
        #expect(reset.deliver.map(\.id) == [F.id(100)] && !reset.duplicate)
    }

    @Test("broadcasts are recorded once; our own echoed back is a duplicate")
    func broadcastDedupe() throws {
        let store = try MessageStore.inMemory()
        let first = try store.receiveBroadcast(id: F.id(1), from: F.alice, fromName: "alice", text: "hello room",
                                               sentAt: F.t0, hops: 3, now: F.at(1))
        #expect(first?.conversation == .mesh && first?.status == .received && first?.hops == 3 && first?.sequence == nil)
        #expect(try store.receiveBroadcast(id: F.id(1), from: F.alice, fromName: "alice", text: "hello room",
                                           sentAt: F.t0, hops: 4, now: F.at(2)) == nil)
        let mine = try store.enqueue(text: "mine", to: nil, author: F.me, authorName: "me", now: F.t0)
        #expect(try store.receiveBroadcast(id: mine.message.id, from: F.me, fromName: "me", text: "mine",
                                           sentAt: F.t0, hops: 2, now: F.at(2)) == nil)
        #expect(try store.history(limit: 10, conversation: .mesh).count == 2)
    }
}

/// Action lines (`/me`, PROTOCOL.md §17.8) keep their flag on disk: sent, received, held.
@Suite("MessageStore action lines")
struct ActionLineStoreTests {
    typealias F = Fixture

    @Test("an action line is one in history after reopening: mine, a broadcast received, and a private line held then released")
    func actionKept() throws {
        let directory = TemporaryDirectory("meshstore")
        do {
            let store = try F.open(directory)
            _ = try store.enqueue(text: "waves", to: nil, author: F.me, authorName: "me", now: F.t0, id: F.id(10), isAction: true)
            _ = try store.enqueue(text: "plain", to: nil, author: F.me, authorName: "me", now: F.t0, id: F.id(11))
            _ = try store.receiveBroadcast(id: F.id(12), from: F.bob, fromName: "bob", text: "nods", sentAt: F.t0, hops: 1,
                                           isAction: true, now: F.t0)
            _ = try store.receive(F.incoming(1, sequence: 1), now: F.t0)
            var held = F.incoming(3, sequence: 3, floor: 2)
            held.isAction = true
            #expect(try store.receive(held, now: F.t0).deliver.isEmpty)
            try store.close()
        }
        let store = try F.open(directory)
        let fill = try store.receive(F.incoming(2, sequence: 2), now: F.at(1))
        #expect(fill.deliver.map(\.isAction) == [false, true])
        let byID = Dictionary(uniqueKeysWithValues: try store.history(limit: 10).map { ($0.id, $0.isAction) })
        #expect(byID[F.id(10)] == true && byID[F.id(11)] == false && byID[F.id(12)] == true)
        #expect(byID[F.id(1)] == false && byID[F.id(2)] == false && byID[F.id(3)] == true)
        #expect(try store.message(id: F.id(10))?.isAction == true)
    }
}
