import Foundation
import GRDB
import MeshCore

extension MessageStore {
    /// Hands everything kept for one node to its successor, after a verified key rotation
    /// (PROTOCOL.md §20.2): the private conversation's history, the lines still queued for it (in
    /// their order, with the destination's sequence counter, so the receiver's ordering goes on,
    /// §17.3), and what is known of its own sequence (the counter and held lines). One transaction.
    /// - Parameters:
    ///   - old: the node whose key was retired.
    ///   - new: the node holding the new key.
    /// - Returns: how many history rows and queued lines moved.
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func moveConversation(from old: NodeID, to new: NodeID) throws(StoreError) -> (history: Int, queued: Int) {
        guard old != new else { return (0, 0) }
        return try write("moving a conversation to a rotated key") { db in
            try db.execute(sql: "UPDATE message SET peer = ? WHERE peer = ?", arguments: [new.hex, old.hex])
            let history = db.changesCount
            try db.execute(sql: "UPDATE outbox SET destination = ? WHERE destination = ?", arguments: [new.hex, old.hex])
            let queued = db.changesCount
            // Counters: the higher of the two goes on (a line to either key never reuses a sequence).
            try db.execute(sql: """
                INSERT INTO outbound_counter (destination, next_sequence)
                SELECT ?, next_sequence FROM outbound_counter WHERE destination = ?
                ON CONFLICT(destination) DO UPDATE SET next_sequence = MAX(next_sequence, excluded.next_sequence)
                """, arguments: [new.hex, old.hex])
            try db.execute(sql: "DELETE FROM outbound_counter WHERE destination = ?", arguments: [old.hex])
            try db.execute(sql: """
                INSERT INTO inbound_sender (sender, next_expected)
                SELECT ?, next_expected FROM inbound_sender WHERE sender = ?
                ON CONFLICT(sender) DO UPDATE SET next_expected = MAX(next_expected, excluded.next_expected)
                """, arguments: [new.hex, old.hex])
            try db.execute(sql: "DELETE FROM inbound_sender WHERE sender = ?", arguments: [old.hex])
            try db.execute(sql: "UPDATE OR IGNORE held SET sender = ? WHERE sender = ?", arguments: [new.hex, old.hex])
            try db.execute(sql: "DELETE FROM held WHERE sender = ?", arguments: [old.hex])
            return (history, queued)
        }
    }
}
