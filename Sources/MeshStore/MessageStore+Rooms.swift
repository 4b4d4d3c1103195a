import Foundation
import GRDB

/// A room this node has joined, as the store keeps it (PROTOCOL.md §15).
public struct JoinedRoom: Sendable, Hashable {
    /// The normalised name (`#lunch`).
    public var name: String
    /// The 32-byte room key.
    public var key: Data
    /// Whether the key comes from a password.
    public var hasPassword: Bool
    /// When it was joined.
    public var joinedAt: Date

    /// Which room this is.
    public var ref: RoomRef { RoomRef(name: name, hasPassword: hasPassword) }

    /// Creates a room entry.
    /// - Parameters:
    ///   - name: the normalised name.
    ///   - key: the key.
    ///   - hasPassword: whether the key comes from a password.
    ///   - joinedAt: when it was joined.
    public init(name: String, key: Data, hasPassword: Bool, joinedAt: Date) {
        self.name = name
        self.key = key
        self.hasPassword = hasPassword
        self.joinedAt = joinedAt
    }
}

extension MessageStore {
    /// Joins a room (or replaces its key, when its password room is joined again with another
    /// password), durably. The public and the password room of one name are two entries.
    /// - Parameter room: the room.
    /// - Throws: ``StoreError`` when the write fails.
    public func joinRoom(_ room: JoinedRoom) throws(StoreError) {
        try write("joining a room") { db in
            try db.execute(sql: """
                INSERT INTO room (name, key, has_password, joined_at) VALUES (?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET key = excluded.key, has_password = excluded.has_password
                """, arguments: [room.ref.storageKey, room.key, room.hasPassword, Schema.column(room.joinedAt)])
        }
    }

    /// Leaves a room: its key is forgotten; its history stays.
    /// - Parameter room: the room.
    /// - Returns: whether it was joined.
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func leaveRoom(_ room: RoomRef) throws(StoreError) -> Bool {
        try write("leaving a room") { db in
            try db.execute(sql: "DELETE FROM room WHERE name = ?", arguments: [room.storageKey])
            return db.changesCount > 0
        }
    }

    /// The joined rooms, in the order they were joined.
    /// - Throws: ``StoreError`` when the read fails.
    public func rooms() throws(StoreError) -> [JoinedRoom] {
        try read("reading rooms") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM room ORDER BY joined_at, name").map { row in
                let ref = RoomRef(storageKey: row["name"])
                return JoinedRoom(name: ref.name, key: row["key"], hasPassword: row["has_password"], joinedAt: Schema.date(row["joined_at"]))
            }
        }
    }
}
