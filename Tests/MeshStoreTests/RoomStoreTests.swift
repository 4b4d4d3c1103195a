import Foundation
import GRDB
@testable import MeshStore
import MeshTestSupport
import MeshCore
import Testing

/// Rooms in the store (PROTOCOL.md §15.1): the public and the password room of one name are two
/// rooms, with their own keys and their own lines.
@Suite("MessageStore rooms")
struct RoomStoreTests {
    typealias F = Fixture
    static let publicDev = RoomRef(name: "#dev", hasPassword: false)
    static let secretDev = RoomRef(name: "#dev", hasPassword: true)

    @Test("the public and the password #dev are two rooms: both listed, each left alone, each with its own lines and history")
    func twoRoomsOfOneName() throws {
        let store = try MessageStore.inMemory()
        try store.joinRoom(JoinedRoom(name: "#dev", key: Data(repeating: 1, count: 32), hasPassword: true, joinedAt: F.at(1)))
        try store.joinRoom(JoinedRoom(name: "#dev", key: Data(repeating: 2, count: 32), hasPassword: false, joinedAt: F.at(2)))
        #expect(try store.rooms().map(\.ref) == [Self.secretDev, Self.publicDev])
        #expect(try store.rooms().map(\.key) == [Data(repeating: 1, count: 32), Data(repeating: 2, count: 32)])

        _ = try store.enqueue(text: "secret", to: nil, room: Self.secretDev, author: F.me, authorName: "me", now: F.at(3))
        _ = try store.receiveBroadcast(id: F.id(1), from: F.bob, fromName: "bob", text: "public", sentAt: F.at(4), hops: 1,
                                       room: Self.publicDev, now: F.at(4))
        #expect(try store.history(limit: 10, conversation: .room(Self.secretDev)).map(\.text) == ["secret"])
        #expect(try store.history(limit: 10, conversation: .room(Self.publicDev)).map(\.text) == ["public"])
        #expect(try store.history(limit: 10).map(\.conversation) == [.room(Self.secretDev), .room(Self.publicDev)])

        #expect(try store.leaveRoom(Self.publicDev))
        #expect(try store.rooms().map(\.ref) == [Self.secretDev])
        #expect(try !store.leaveRoom(Self.publicDev))
    }

    @Test("a store from before v4 (rooms keyed by name alone) keeps its password room apart: the room and its lines move to #dev+, a public room's stay")
    func migrationSeparatesPasswordRooms() throws {
        let directory = TemporaryDirectory("meshstore")
        let path = directory.appending("messages.sqlite")
        do {
            let store = try MessageStore(path: path)
            try store.joinRoom(JoinedRoom(name: "#dev", key: Data(repeating: 1, count: 32), hasPassword: true, joinedAt: F.at(1)))
            try store.joinRoom(JoinedRoom(name: "#ops", key: Data(repeating: 2, count: 32), hasPassword: false, joinedAt: F.at(2)))
            _ = try store.enqueue(text: "secret", to: nil, room: Self.secretDev, author: F.me, authorName: "me", now: F.at(3))
            _ = try store.enqueue(text: "ops", to: nil, room: RoomRef(name: "#ops", hasPassword: false), author: F.me, authorName: "me", now: F.at(4))
            // Back to what v3 wrote: rooms and lines under the bare name.
            try store.queue.write { db in
                try db.execute(sql: """
                    UPDATE room SET name = '#dev' WHERE name = '#dev+';
                    UPDATE message SET room = '#dev' WHERE room = '#dev+';
                    DELETE FROM grdb_migrations WHERE identifier = 'v4';
                    """)
            }
            try store.close()
        }
        let store = try MessageStore(path: path)
        #expect(try store.rooms().map(\.ref) == [Self.secretDev, RoomRef(name: "#ops", hasPassword: false)])
        #expect(try store.history(limit: 10, conversation: .room(Self.secretDev)).map(\.text) == ["secret"])
        #expect(try store.history(limit: 10, conversation: .room(Self.publicDev)).isEmpty)
        #expect(try store.history(limit: 10, conversation: .room(RoomRef(name: "#ops", hasPassword: false))).map(\.text) == ["ops"])
    }

    @Test("RoomRef: shown as #dev and #dev 🔒, stored as #dev and #dev+, read back as itself")
    func roomRef() {
        #expect(Self.publicDev.description == "#dev")
        #expect(Self.secretDev.description == "#dev 🔒")
        for room in [Self.publicDev, Self.secretDev] { #expect(RoomRef(storageKey: room.storageKey) == room) }
        #expect(Self.secretDev.storageKey == "#dev+")
    }
}
