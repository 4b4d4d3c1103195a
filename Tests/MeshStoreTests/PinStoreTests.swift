import Foundation
import MeshStore
import MeshTestSupport
import MeshCore
import Testing

/// Pins and settings in the store (schema v2): durable, deduplicated, withdrawn only by their
/// author and never revived, bounded per author and in total, replaced by an author's catch-up.
@Suite("MessageStore pins and settings")
struct PinStoreTests {
    typealias F = Fixture

    static func pin(_ n: Int, by author: NodeID = F.alice, at time: Double = 0, lifetime: TimeInterval = 3600) -> StoredPin {
        StoredPin(id: F.id(n), author: author, authorName: author == F.alice ? "alice" : "bob", latitude: 51.5, longitude: -0.12,
                  label: "pin \(n)", note: "", createdAt: F.at(time), expiresAt: F.at(time).addingTimeInterval(lifetime), receivedAt: F.at(time))
    }

    @Test("a pin is stored once; copies change nothing; expired pins are not listed and are pruned")
    func storeAndExpire() throws {
        let store = try MessageStore.inMemory()
        #expect(try store.savePin(Self.pin(1), now: F.at(0)) == .added)
        #expect(try store.savePin(Self.pin(1), now: F.at(1)) == .unchanged)
        #expect(try store.savePin(Self.pin(2, lifetime: 10), now: F.at(0)) == .added)
        #expect(try store.pins(now: F.at(5)).map(\.label) == ["pin 1", "pin 2"])
        #expect(try store.pins(now: F.at(20)).map(\.label) == ["pin 1"])
        #expect(try store.savePin(Self.pin(3, lifetime: 10), now: F.at(20)) == .unchanged)
        #expect(try store.prunePins(now: F.at(20)) == 1)
        #expect(try store.pins(now: F.at(20), by: F.bob).isEmpty)
    }

    @Test("only the author withdraws a pin, and a late copy does not revive it")
    func withdraw() throws {
        let store = try MessageStore.inMemory()
        try store.savePin(Self.pin(1), now: F.at(0))
        #expect(try store.withdrawPin(id: F.id(1), by: F.bob, now: F.at(1)) == nil)
        #expect(try store.pins(now: F.at(1)).count == 1)
        #expect(try store.withdrawPin(id: F.id(1), by: F.alice, now: F.at(1))?.label == "pin 1")
        #expect(try store.withdrawPin(id: F.id(1), by: F.alice, now: F.at(2)) == nil)
        #expect(try store.savePin(Self.pin(1), now: F.at(3)) == .unchanged)
        #expect(try store.pins(now: F.at(3)).isEmpty)
    }

    @Test("limits: 64 live pins per author and 2,000 in all by default; a full store refuses with a message naming the limit")
    func limits() throws {
        let store = try MessageStore.inMemory(limits: StoreLimits(maxPinsPerAuthor: 2, maxPinsTotal: 3))
        try store.savePin(Self.pin(1), now: F.at(0))
        try store.savePin(Self.pin(2), now: F.at(0))
        #expect(throws: StoreError.self) { try store.savePin(Self.pin(3), now: F.at(0)) }
        do {
            try store.savePin(Self.pin(3), now: F.at(0))
        } catch {
            #expect(error.code == .pinsFull)
            #expect(error.message.contains("maximum per author is 2"))
        }
        try store.savePin(Self.pin(4, by: F.bob), now: F.at(0))
        #expect(throws: StoreError.self) { try store.savePin(Self.pin(5, by: F.bob), now: F.at(0)) }
        #expect(StoreLimits().maxPinsPerAuthor == 64 && StoreLimits().maxPinsTotal == 2000)
    }

    @Test("a catch-up makes an author's live pins exactly those listed: missing ones are withdrawn, new ones stored, others' untouched")
    func replace() throws {
        let store = try MessageStore.inMemory()
        try store.savePin(Self.pin(1), now: F.at(0))
        try store.savePin(Self.pin(2), now: F.at(0))
        try store.savePin(Self.pin(9, by: F.bob), now: F.at(0))
        let (added, withdrawn) = try store.replacePins(of: F.alice, with: [Self.pin(2), Self.pin(3), Self.pin(8, by: F.bob)], now: F.at(1))
        #expect(added.map(\.label) == ["pin 3"])
        #expect(withdrawn.map(\.label) == ["pin 1"])
        #expect(Set(try store.pins(now: F.at(1)).map(\.label)) == ["pin 2", "pin 3", "pin 9"])
    }

    /// The catch-up race of session 10: the author reads its pins, makes a new one and broadcasts
    /// it, and the receiver gets that broadcast before the catch-up that was read without it.
    @Test("a catch-up withdraws only pins created before its author read it: a newer pin whose broadcast overtook it stays")
    func replaceAsOf() throws {
        let store = try MessageStore.inMemory()
        try store.savePin(Self.pin(1), now: F.at(0))
        try store.savePin(Self.pin(2, at: 20), now: F.at(20))
        let (added, withdrawn) = try store.replacePins(of: F.alice, with: [], asOf: F.at(10), now: F.at(21))
        #expect(added.isEmpty)
        #expect(withdrawn.map(\.label) == ["pin 1"], "pin 1 predates the set; pin 2 (made at 20) does not")
        #expect(try store.pins(now: F.at(21)).map(\.label) == ["pin 2"])
        let later = try store.replacePins(of: F.alice, with: [], asOf: F.at(30), now: F.at(31))
        #expect(later.withdrawn.map(\.label) == ["pin 2"], "a set read after it withdraws it")
    }

    @Test("settings persist across reopening the file; nil forgets")
    func settings() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("messages.sqlite")
        do {
            let store = try MessageStore(path: path)
            try store.setSetting("places.here", to: "51.5,-0.12")
            try store.savePin(Self.pin(1, at: Date().timeIntervalSince(F.t0)), now: Date())
            try store.close()
        }
        let store = try MessageStore(path: path)
        #expect(try store.setting("places.here") == "51.5,-0.12")
        #expect(try store.pins(now: Date()).count == 1)
        try store.setSetting("places.here", to: nil)
        #expect(try store.setting("places.here") == nil)
    }
}
