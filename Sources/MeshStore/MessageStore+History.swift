import Foundation
import GRDB
import MeshCore

extension MessageStore {
    /// The most recent messages the application has seen, oldest first.
    ///
    /// History is in the order messages were recorded: outgoing when enqueued, incoming when
    /// delivered (held messages appear once released).
    /// - Parameters:
    ///   - limit: how many at most (the most recent ones).
    ///   - conversation: one chat only, or `nil` for all.
    /// - Returns: the messages, oldest first.
    /// - Throws: ``StoreError`` when the read fails.
    public func history(limit: Int, conversation: Conversation? = nil) throws(StoreError) -> [StoredMessage] {
        let filter: String
        var arguments: StatementArguments = []
        switch conversation {
        case nil:
            filter = ""
        case .mesh?:
            filter = "WHERE m.peer IS NULL AND m.room IS NULL"
        case .room(let room)?:
            filter = "WHERE m.room = ?"
            arguments += [room.storageKey]
        case .direct(let peer)?:
            filter = "WHERE m.peer = ?"
            arguments += [peer.hex]
        }
        arguments += [max(0, limit)]
        return try read("reading history") { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM (SELECT \(Schema.messageColumns), m.position FROM message m \(filter)
                               ORDER BY m.position DESC LIMIT ?)
                ORDER BY position
                """, arguments: arguments).map(Schema.message)
        }
    }

    /// One message from history.
    /// - Parameter id: its id.
    /// - Returns: the message, or `nil` when unknown (or pruned, or still held).
    /// - Throws: ``StoreError`` when the read fails.
    public func message(id: String) throws(StoreError) -> StoredMessage? {
        try read("reading a message") { db in
            try Schema.fetchMessage(id: id, db)
        }
    }
}
