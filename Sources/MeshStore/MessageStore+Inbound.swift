import Foundation
import GRDB
import MeshCore

extension MessageStore {
    /// The largest sequence accepted from the wire (stored as a signed 64-bit integer, with room
    /// for the next one).
    static let maxIncomingSequence = UInt64(Int64.max - 1)

    /// Takes an incoming private message: refuses it when malformed or stale, recognises a
    /// duplicate by id, or orders it with the sender's ``InboundSequencer``.
    ///
    /// A new message is durable on return, delivered or held: acknowledge it. A duplicate (its id
    /// seen before, also across restarts) is acknowledged again but not delivered. A message sent
    /// longer ago than ``StoreLimits/maxMessageAge`` + ``StoreLimits/clockSkewAllowance``, or
    /// dated further than ``StoreLimits/clockSkewAllowance`` in the future, is refused and not
    /// acknowledged; so is one whose id is not 32 hex digits or whose sequence is 0 or above
    /// 2⁶³ − 2.
    /// - Parameters:
    ///   - incoming: the decrypted message.
    ///   - now: the current time.
    /// - Returns: what to deliver and whether to acknowledge.
    /// - Throws: ``StoreError`` when the write fails.
    public func receive(_ incoming: IncomingPrivate, now: Date) throws(StoreError) -> ReceiveOutcome {
        guard let id = Schema.normalizedID(incoming.id) else {
            return Self.refused("message id \"\(incoming.id.prefix(40))\" from \(incoming.from.shortHex) is not 32 hex digits")
        }
        guard incoming.sequence >= 1, incoming.sequence <= Self.maxIncomingSequence else {
            return Self.refused("message \(id) from \(incoming.from.shortHex) has sequence \(incoming.sequence); "
                                + "expected 1…\(Self.maxIncomingSequence)")
        }
        let limits = limits
        return try write("receiving a message") { db in
            if try Self.isKnown(id, db) {
                return ReceiveOutcome(deliver: [], acknowledge: true, duplicate: true, refused: nil)
            }
            if let why = Self.staleness(sentAt: incoming.sentAt, now: now, limits: limits) {
                return Self.refused("message \(id) from \(incoming.from.shortHex) \(why)")
            }
            var sequencer = try Self.loadSequencer(incoming.from, limits: limits, db)
            let decision = sequencer.received(sequence: incoming.sequence, floor: incoming.floor, now: now)
            try Self.remember(id, sentAt: incoming.sentAt, now: now, db)
            if decision.placement == .held {
                try db.execute(
                    sql: """
                        INSERT INTO held (id, sender, sender_name, text, sent_at, hops, sequence, held_at, action)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [id, incoming.from.hex, incoming.fromName, incoming.text, Schema.column(incoming.sentAt),
                                incoming.hops, Int64(incoming.sequence), Schema.column(now), incoming.isAction])
            }
            var deliver: [StoredMessage] = []
            for delivery in decision.deliveries {
                switch delivery {
                case .incoming:
                    let message = StoredMessage(
                        id: id, conversation: .direct(incoming.from), isOutgoing: false, author: incoming.from,
                        authorName: incoming.fromName, text: incoming.text, sentAt: incoming.sentAt, recordedAt: now,
                        hops: incoming.hops, status: .received, sequence: incoming.sequence, isAction: incoming.isAction)
                    try Schema.insert(message, db)
                    deliver.append(message)
                case .held(let sequence):
                    deliver.append(try Self.releaseHeld(from: incoming.from, sequence: sequence, db))
                }
            }
            try Self.saveSequencer(sequencer, for: incoming.from, db)
            return ReceiveOutcome(deliver: deliver, acknowledge: true, duplicate: false, refused: nil)
        }
    }

    /// Takes an incoming mesh broadcast: records it in history unless its id was seen before.
    ///
    /// Broadcasts are not ordered and have no receipts. Stale or future-dated ones (the same
    /// bounds as ``receive(_:now:)``) and ones whose id is not 32 hex digits are dropped.
    /// - Parameters:
    ///   - id: the message id.
    ///   - from: the author.
    ///   - fromName: the author's display name.
    ///   - text: the text.
    ///   - sentAt: when the author wrote it.
    ///   - hops: hops travelled.
    ///   - room: the room it was for, or `nil` for the whole mesh.
    ///   - isAction: whether it is an action line (PROTOCOL.md §17.8).
    ///   - now: the current time.
    /// - Returns: the new history row to show, or `nil` when already seen, stale or malformed.
    /// - Throws: ``StoreError`` when the write fails.
    public func receiveBroadcast(id: String, from: NodeID, fromName: String, text: String, sentAt: Date, hops: Int?,
                                 room: RoomRef? = nil, isAction: Bool = false, now: Date) throws(StoreError) -> StoredMessage? {
        guard let id = Schema.normalizedID(id) else { return nil }
        let limits = limits
        return try write("receiving a broadcast") { db in
            if try Self.isKnown(id, db) { return nil }
            if Self.staleness(sentAt: sentAt, now: now, limits: limits) != nil { return nil }
            try Self.remember(id, sentAt: sentAt, now: now, db)
            let message = StoredMessage(
                id: id, conversation: room.map { .room($0) } ?? .mesh, isOutgoing: false, author: from, authorName: fromName, text: text,
                sentAt: sentAt, recordedAt: now, hops: hops, status: .received, sequence: nil, isAction: isAction)
            try Schema.insert(message, db)
            return message
        }
    }

    /// Gives up waiting for gaps that held messages have waited ``StoreLimits/holdTimeout`` for
    /// (see ``InboundSequencer/timedOut(now:holdTimeout:)``).
    /// - Parameter now: the current time.
    /// - Returns: the released messages, each sender's in sequence order.
    /// - Throws: ``StoreError`` when the write fails.
    public func releaseHeld(now: Date) throws(StoreError) -> [StoredMessage] {
        let limits = limits
        return try write("releasing held messages") { db in
            let cutoff = now.addingTimeInterval(-limits.holdTimeout.timeInterval)
            let senders = try String.fetchAll(db, sql: "SELECT DISTINCT sender FROM held WHERE held_at <= ? ORDER BY sender",
                                              arguments: [Schema.column(cutoff)])
            var released: [StoredMessage] = []
            for hex in senders {
                let sender = try Schema.nodeID(hex, "held sender")
                var sequencer = try Self.loadSequencer(sender, limits: limits, db)
                for sequence in sequencer.timedOut(now: now, holdTimeout: limits.holdTimeout) {
                    released.append(try Self.releaseHeld(from: sender, sequence: sequence, db))
                }
                try Self.saveSequencer(sequencer, for: sender, db)
            }
            return released
        }
    }

    /// When the longest-held message times out, for scheduling ``releaseHeld(now:)``.
    /// - Returns: the time, or `nil` when nothing is held.
    /// - Throws: ``StoreError`` when the read fails.
    public func nextHoldDeadline() throws(StoreError) -> Date? {
        let timeout = limits.holdTimeout.timeInterval
        return try read("reading held messages") { db in
            try Double.fetchOne(db, sql: "SELECT MIN(held_at) FROM held").map { Schema.date($0).addingTimeInterval(timeout) }
        }
    }

    /// How many messages are held back from `sender`.
    /// - Parameter sender: the sender.
    /// - Returns: the count.
    /// - Throws: ``StoreError`` when the read fails.
    public func heldCount(from sender: NodeID) throws(StoreError) -> Int {
        try read("reading held messages") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM held WHERE sender = ?", arguments: [sender.hex]) ?? 0
        }
    }

    /// Forgets seen ids past ``StoreLimits/seenRetention`` (and the oldest beyond
    /// ``StoreLimits/maxSeen``), and the oldest history rows beyond ``StoreLimits/maxHistory``
    /// (messages still in the outbox are kept). Call it now and then (e.g. hourly).
    /// - Parameter now: the current time.
    /// - Throws: ``StoreError`` when the write fails.
    public func prune(now: Date) throws(StoreError) {
        let limits = limits
        try write("pruning") { db in
            let cutoff = now.addingTimeInterval(-limits.seenRetention.timeInterval)
            try db.execute(sql: "DELETE FROM seen WHERE keep_from < ?", arguments: [Schema.column(cutoff)])
            let seen = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM seen") ?? 0
            if seen > limits.maxSeen {
                try db.execute(sql: "DELETE FROM seen WHERE id IN (SELECT id FROM seen ORDER BY keep_from LIMIT ?)",
                               arguments: [seen - limits.maxSeen])
            }
            let history = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message") ?? 0
            if history > limits.maxHistory {
                try db.execute(
                    sql: """
                        DELETE FROM message WHERE position IN (
                            SELECT position FROM message WHERE id NOT IN (SELECT id FROM outbox)
                            ORDER BY position LIMIT ?)
                        """,
                    arguments: [history - limits.maxHistory])
            }
        }
    }

    // MARK: - Private

    private static func refused(_ why: String) -> ReceiveOutcome {
        ReceiveOutcome(deliver: [], acknowledge: false, duplicate: false, refused: why)
    }

    /// Why a message dated `sentAt` is out of the accepted window, or `nil`.
    static func staleness(sentAt: Date, now: Date, limits: StoreLimits) -> String? {
        let skew = limits.clockSkewAllowance.timeInterval
        let age = now.timeIntervalSince(sentAt)
        let maximum = limits.maxMessageAge.timeInterval + skew
        if age > maximum {
            return "is stale: sent \(ReceivedNumber.whole(age)) s ago, the maximum age is \(Int(maximum)) s"
        }
        if -age > skew {
            return "is dated \(ReceivedNumber.whole(-age)) s in the future, the allowed clock skew is \(Int(skew)) s"
        }
        return nil
    }

    /// Whether the id was seen: in the seen ids, the history, or held.
    static func isKnown(_ id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM seen WHERE id = ?1) OR EXISTS (SELECT 1 FROM message WHERE id = ?1)
                OR EXISTS (SELECT 1 FROM held WHERE id = ?1)
            """, arguments: [id]) ?? false
    }

    /// Records a seen id, kept from the later of now and its sending time.
    static func remember(_ id: String, sentAt: Date, now: Date, _ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO seen (id, keep_from) VALUES (?, ?)",
                       arguments: [id, Schema.column(max(now, sentAt))])
    }

    static func loadSequencer(_ sender: NodeID, limits: StoreLimits, _ db: Database) throws -> InboundSequencer {
        let next = try Int64.fetchOne(db, sql: "SELECT next_expected FROM inbound_sender WHERE sender = ?",
                                      arguments: [sender.hex])
        var held: [UInt64: Date] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT sequence, held_at FROM held WHERE sender = ?", arguments: [sender.hex]) {
            held[try Schema.sequence(row["sequence"], "held sequence")] = Schema.date(row["held_at"])
        }
        return InboundSequencer(nextExpected: try next.map { try Schema.sequence($0, "next expected sequence") },
                                held: held, maxHeld: limits.maxHeldPerSender)
    }

    static func saveSequencer(_ sequencer: InboundSequencer, for sender: NodeID, _ db: Database) throws {
        guard let next = sequencer.nextExpected else { return }
        try db.execute(sql: "INSERT OR REPLACE INTO inbound_sender (sender, next_expected) VALUES (?, ?)",
                       arguments: [sender.hex, Int64(clamping: next)])
    }

    /// Moves a held message into history.
    static func releaseHeld(from sender: NodeID, sequence: UInt64, _ db: Database) throws -> StoredMessage {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT id, sender_name, text, sent_at, hops, held_at, action FROM held WHERE sender = ? AND sequence = ?",
            arguments: [sender.hex, Int64(sequence)])
        else {
            throw Schema.BadRow(description: "held message \(sequence) from \(sender.shortHex) is missing")
        }
        let message = StoredMessage(
            id: row["id"], conversation: .direct(sender), isOutgoing: false, author: sender,
            authorName: row["sender_name"], text: row["text"], sentAt: Schema.date(row["sent_at"]),
            recordedAt: Schema.date(row["held_at"]), hops: row["hops"], status: .received, sequence: sequence,
            isAction: row["action"])
        try db.execute(sql: "DELETE FROM held WHERE sender = ? AND sequence = ?", arguments: [sender.hex, Int64(sequence)])
        try Schema.insert(message, db)
        return message
    }
}
