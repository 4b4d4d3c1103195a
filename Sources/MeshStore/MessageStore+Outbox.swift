import Foundation
import GRDB
import MeshCore

extension MessageStore {
    /// Accepts an outgoing message: assigns its id and the next sequence for its destination,
    /// and writes the history row and the outbox row in one transaction, durable on return.
    /// - Parameters:
    ///   - text: the text.
    ///   - destination: the destination node, or `nil` for a mesh broadcast.
    ///   - room: for a broadcast, the room it is for (`nil`: the whole mesh).
    ///   - author: this node.
    ///   - authorName: this node's display name.
    ///   - now: the current time (`sentAt`, `recordedAt`; expiry runs from it).
    ///   - id: the message id (32 hex digits) when the caller chose it, else a new random one.
    ///   - isAction: whether it is an action line (`/me`, PROTOCOL.md §17.8).
    /// - Returns: the outbox entry, status ``DeliveryStatus/queued``.
    /// - Throws: ``StoreError`` `outboxFull` naming the limit (per destination or total) when
    ///   the outbox is full, `io` when the write fails.
    public func enqueue(text: String, to destination: NodeID?, room: RoomRef? = nil, author: NodeID, authorName: String,
                        now: Date, id chosen: String? = nil, isAction: Bool = false) throws(StoreError) -> OutboxEntry {
        let id = chosen.flatMap(Schema.normalizedID) ?? Schema.newID()
        let limits = limits
        return try write("enqueuing a message") { db in
            let queued = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE destination IS ?",
                                          arguments: [destination?.hex]) ?? 0
            if queued >= limits.maxQueuedPerDestination {
                throw StoreError.outboxFull(destination: destination?.hex ?? "the mesh", count: queued,
                                            limit: limits.maxQueuedPerDestination)
            }
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0
            if total >= limits.maxQueuedTotal {
                throw StoreError.outboxFull(total: total, limit: limits.maxQueuedTotal)
            }
            let key = Schema.counterKey(destination)
            let stored = try Int64.fetchOne(db, sql: "SELECT next_sequence FROM outbound_counter WHERE destination = ?",
                                            arguments: [key])
            let sequence = try Schema.sequence(stored ?? 1, "next sequence for \(key)")
            try db.execute(sql: "INSERT OR REPLACE INTO outbound_counter (destination, next_sequence) VALUES (?, ?)",
                           arguments: [key, Int64(sequence) + 1])
            let message = StoredMessage(
                id: id, conversation: destination.map { .direct($0) } ?? room.map { .room($0) } ?? .mesh, isOutgoing: true,
                author: author, authorName: authorName, text: text, sentAt: now, recordedAt: now, hops: nil,
                status: .queued, sequence: destination == nil ? nil : sequence, isAction: isAction)
            let expiresAt = now.addingTimeInterval(limits.maxMessageAge.timeInterval)
            try Schema.insert(message, db)
            try db.execute(
                sql: "INSERT INTO outbox (id, destination, sequence, attempts, expires_at) VALUES (?, ?, ?, 0, ?)",
                arguments: [id, destination?.hex, Int64(sequence), Schema.column(expiresAt)])
            // An echo of our own message (a relayed broadcast) is then a duplicate.
            try db.execute(sql: "INSERT OR REPLACE INTO seen (id, keep_from) VALUES (?, ?)",
                           arguments: [id, Schema.column(now)])
            return OutboxEntry(message: message, destination: destination, sequence: sequence, attempts: 0,
                               lastAttemptAt: nil, expiresAt: expiresAt)
        }
    }

    /// The outbox entries for one destination: private ones in sequence order, broadcasts in
    /// enqueue order.
    /// - Parameter destination: the destination, or `nil` for broadcasts.
    /// - Returns: the entries.
    /// - Throws: ``StoreError`` when the read fails.
    public func pending(to destination: NodeID?) throws(StoreError) -> [OutboxEntry] {
        try read("reading the outbox") { db in
            try Row.fetchAll(db, sql: Schema.outboxSelect + " WHERE o.destination IS ? ORDER BY o.sequence",
                             arguments: [destination?.hex]).map(Schema.outboxEntry)
        }
    }

    /// Every destination with outbox entries (`nil` for broadcasts), the one waiting longest first.
    /// - Returns: the destinations.
    /// - Throws: ``StoreError`` when the read fails.
    public func pendingDestinations() throws(StoreError) -> [NodeID?] {
        try read("reading the outbox") { db in
            let keys = try Row.fetchAll(db, sql: """
                SELECT o.destination FROM outbox o JOIN message m ON m.id = o.id
                GROUP BY o.destination ORDER BY MIN(m.position)
                """)
            return try keys.map { row -> NodeID? in
                let hex: String? = row["destination"]
                return try hex.map { try Schema.nodeID($0, "outbox destination") }
            }
        }
    }

    /// The floor for a destination: the lowest sequence still in its outbox, or the next
    /// sequence it will be given when none is.
    /// - Parameter destination: the destination.
    /// - Returns: the floor (at least 1).
    /// - Throws: ``StoreError`` when the read fails.
    public func floor(for destination: NodeID) throws(StoreError) -> UInt64 {
        try read("reading the outbox floor") { db in
            if let lowest = try Int64.fetchOne(db, sql: "SELECT MIN(sequence) FROM outbox WHERE destination = ?",
                                               arguments: [destination.hex]) {
                return try Schema.sequence(lowest, "outbox sequence")
            }
            let next = try Int64.fetchOne(db, sql: "SELECT next_sequence FROM outbound_counter WHERE destination = ?",
                                          arguments: [destination.hex])
            return try Schema.sequence(next ?? 1, "next sequence")
        }
    }

    /// Records a transmission: attempts + 1, the attempt time, and status queued → sent.
    /// Ids not in the outbox are ignored.
    /// - Parameters:
    ///   - ids: the transmitted messages.
    ///   - now: the current time.
    /// - Throws: ``StoreError`` when the write fails.
    public func recordAttempt(ids: [String], now: Date) throws(StoreError) {
        try write("recording a transmission") { db in
            for id in ids {
                try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1, last_attempt_at = ? WHERE id = ?",
                               arguments: [Schema.column(now), id])
                if db.changesCount > 0 {
                    try db.execute(sql: "UPDATE message SET status = 'sent' WHERE id = ? AND status = 'queued'",
                                   arguments: [id])
                }
            }
        }
    }

    /// A broadcast went out (once; broadcasts have no receipts): removes it from the outbox,
    /// status sent. Unknown ids and private messages are ignored.
    /// - Parameters:
    ///   - id: the broadcast.
    ///   - now: the current time.
    /// - Throws: ``StoreError`` when the write fails.
    public func broadcastSent(id: String, now: Date) throws(StoreError) {
        try write("recording a broadcast") { db in
            try db.execute(sql: "DELETE FROM outbox WHERE id = ? AND destination IS NULL", arguments: [id])
            if db.changesCount > 0 {
                try Schema.setStatus(.sent, id: id, db)
            }
        }
    }

    /// An end-to-end receipt arrived from `peer`: its messages leave the outbox, status delivered.
    ///
    /// Only outgoing messages addressed to `peer` are marked (a receipt from another node
    /// changes nothing). A late receipt for an expired message still marks it delivered. Ids are
    /// compared case-insensitively; ids that are not 32 hex digits are ignored.
    /// - Parameters:
    ///   - ids: the acknowledged message ids.
    ///   - peer: the node that sent the receipt.
    ///   - now: the current time.
    /// - Returns: the messages whose status changed, in the order of `ids`.
    /// - Throws: ``StoreError`` when the write fails.
    public func delivered(ids: [String], from peer: NodeID, now: Date) throws(StoreError) -> [StoredMessage] {
        try write("recording a receipt") { db in
            var changed: [StoredMessage] = []
            for id in ids.compactMap(Schema.normalizedID) {
                guard var message = try Row.fetchOne(
                    db, sql: "SELECT \(Schema.messageColumns) FROM message m WHERE m.id = ? AND m.outgoing = 1 AND m.peer = ?",
                    arguments: [id, peer.hex]).map(Schema.message) else { continue }
                try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id])
                guard message.status != .delivered else { continue }
                message.status = .delivered
                try Schema.setStatus(.delivered, id: id, db)
                changed.append(message)
            }
            return changed
        }
    }

    /// Gives up on outbox entries past their expiry: removed, status expired.
    /// - Parameter now: the current time.
    /// - Returns: the expired messages, oldest expiry first.
    /// - Throws: ``StoreError`` when the write fails.
    public func expire(now: Date) throws(StoreError) -> [StoredMessage] {
        try write("expiring the outbox") { db in
            let entries = try Row.fetchAll(db, sql: Schema.outboxSelect + " WHERE o.expires_at <= ? ORDER BY o.expires_at, m.position",
                                           arguments: [Schema.column(now)]).map(Schema.outboxEntry)
            return try entries.map { entry in
                try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [entry.message.id])
                try Schema.setStatus(.expired, id: entry.message.id, db)
                var message = entry.message
                message.status = .expired
                return message
            }
        }
    }

    /// When the oldest outbox entry expires, for scheduling ``expire(now:)``.
    /// - Returns: the time, or `nil` when the outbox is empty.
    /// - Throws: ``StoreError`` when the read fails.
    public func nextExpiry() throws(StoreError) -> Date? {
        try read("reading the outbox") { db in
            try Double.fetchOne(db, sql: "SELECT MIN(expires_at) FROM outbox").map(Schema.date)
        }
    }
}
