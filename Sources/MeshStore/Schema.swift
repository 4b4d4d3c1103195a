import Foundation
import GRDB
import MeshCore

/// The database schema (GRDB migrations) and the mapping between rows and values.
///
/// Tables:
/// - `message`: the history, one row per message the application has seen (outgoing from
///   enqueue on, incoming once delivered); `position` is the order it was recorded in;
///   `peer` is the other node of a private chat, `NULL` for the mesh room.
/// - `outbox`: outgoing messages not yet delivered (private) or sent (broadcast), with the
///   sequence and retry bookkeeping; `destination` `NULL` is a broadcast.
/// - `outbound_counter`: the next sequence per destination (`mesh` for broadcasts).
/// - `inbound_sender`: each sender's ``InboundSequencer/nextExpected``.
/// - `held`: incoming private messages held back by the sequencer (its ``InboundSequencer/held``).
/// - `seen`: ids of every message received or sent, for duplicate detection; `keep_from` is the
///   later of the receive time and the sender's time, from which ``StoreLimits/seenRetention`` runs.
/// - `pin` (v2): place pins shared in the mesh, this node's and others'; `withdrawn_at` is set
///   when the author withdrew it (the row stays until it expires, so a late copy is not revived).
/// - `setting` (v2): small values the application remembers (such as its location), by key.
/// - `room` (v3): the rooms this node has joined with their keys; `message.room` (v3) names the
///   room of a room line (`peer` is then `NULL`).
/// - `name_record` (v5): the chat's name book, one row (JSON) per node, by its id.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE message (
                    position INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    peer TEXT,
                    outgoing INTEGER NOT NULL,
                    author TEXT NOT NULL,
                    author_name TEXT NOT NULL,
                    text TEXT NOT NULL,
                    sent_at REAL NOT NULL,
                    recorded_at REAL NOT NULL,
                    hops INTEGER,
                    status TEXT NOT NULL,
                    sequence INTEGER
                );
                CREATE INDEX message_peer ON message(peer, position);
                CREATE TABLE outbox (
                    id TEXT PRIMARY KEY REFERENCES message(id),
                    destination TEXT,
                    sequence INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_attempt_at REAL,
                    expires_at REAL NOT NULL
                );
                CREATE INDEX outbox_destination ON outbox(destination, sequence);
                CREATE INDEX outbox_expiry ON outbox(expires_at);
                CREATE TABLE outbound_counter (
                    destination TEXT PRIMARY KEY,
                    next_sequence INTEGER NOT NULL
                );
                CREATE TABLE inbound_sender (
                    sender TEXT PRIMARY KEY,
                    next_expected INTEGER NOT NULL
                );
                CREATE TABLE held (
                    id TEXT PRIMARY KEY,
                    sender TEXT NOT NULL,
                    sender_name TEXT NOT NULL,
                    text TEXT NOT NULL,
                    sent_at REAL NOT NULL,
                    hops INTEGER,
                    sequence INTEGER NOT NULL,
                    held_at REAL NOT NULL,
                    UNIQUE (sender, sequence)
                );
                CREATE INDEX held_age ON held(held_at);
                CREATE TABLE seen (
                    id TEXT PRIMARY KEY,
                    keep_from REAL NOT NULL
                );
                CREATE INDEX seen_age ON seen(keep_from);
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE pin (
                    id TEXT PRIMARY KEY,
                    author TEXT NOT NULL,
                    author_name TEXT NOT NULL,
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    label TEXT NOT NULL,
                    note TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    received_at REAL NOT NULL,
                    withdrawn_at REAL
                );
                CREATE INDEX pin_author ON pin(author);
                CREATE INDEX pin_expiry ON pin(expires_at);
                CREATE TABLE setting (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                ALTER TABLE message ADD COLUMN room TEXT;
                CREATE INDEX message_room ON message(room, position);
                CREATE TABLE room (
                    name TEXT PRIMARY KEY,
                    key BLOB NOT NULL,
                    has_password INTEGER NOT NULL,
                    joined_at REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v4") { db in
            // A public and a password room of one name are two rooms (§15.1): the password room's
            // key gets a `+` (RoomRef.storageKey), in `room` and in the lines stored for it.
            try db.execute(sql: """
                UPDATE message SET room = room || '+' WHERE room IN (SELECT name FROM room WHERE has_password = 1);
                UPDATE room SET name = name || '+' WHERE has_password = 1;
                """)
        }
        migrator.registerMigration("v5 name book") { db in
            // One row per node of the chat's name book (PROTOCOL.md §20.3), so that a save writes
            // only the nodes that changed.
            try db.execute(sql: "CREATE TABLE name_record (node TEXT PRIMARY KEY, record TEXT NOT NULL)")
        }
        migrator.registerMigration("v6 actions") { db in
            // Action lines (`/me`, PROTOCOL.md §17.8), in history and among held private lines.
            try db.execute(sql: """
                ALTER TABLE message ADD COLUMN action INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE held ADD COLUMN action INTEGER NOT NULL DEFAULT 0;
                """)
        }
        return migrator
    }

    /// The `outbound_counter` key of a destination.
    static func counterKey(_ destination: NodeID?) -> String { destination?.hex ?? "mesh" }

    // MARK: - Values ↔ columns

    static func column(_ date: Date) -> Double { date.timeIntervalSinceReferenceDate }
    static func date(_ value: Double) -> Date { Date(timeIntervalSinceReferenceDate: value) }

    /// Thrown inside a transaction when a row cannot be read back; mapped to ``StoreError/Code/corrupt``.
    struct BadRow: Error, CustomStringConvertible {
        var description: String
    }

    static func nodeID(_ hex: String, _ what: String) throws -> NodeID {
        do {
            return try NodeID(hex: hex)
        } catch {
            throw BadRow(description: "\(what) \"\(hex.prefix(40))\" is not a node id")
        }
    }

    static func sequence(_ value: Int64, _ what: String) throws -> UInt64 {
        guard value >= 1 else { throw BadRow(description: "\(what) \(value) is not a sequence") }
        return UInt64(value)
    }

    /// The columns of `message`, for `SELECT`.
    static let messageColumns = "m.id, m.peer, m.room, m.outgoing, m.author, m.author_name, m.text, m.sent_at, m.recorded_at, m.hops, m.status, m.sequence, m.action"

    static func message(_ row: Row) throws -> StoredMessage {
        let peer: String? = row["peer"]
        let room: String? = row["room"]
        let statusText: String = row["status"]
        guard let status = DeliveryStatus(rawValue: statusText) else {
            throw BadRow(description: "message status \"\(statusText.prefix(20))\" is unknown")
        }
        let sequence: Int64? = row["sequence"]
        return StoredMessage(
            id: row["id"],
            conversation: try peer.map { .direct(try nodeID($0, "message peer")) } ?? room.map { .room(RoomRef(storageKey: $0)) } ?? .mesh,
            isOutgoing: row["outgoing"],
            author: try nodeID(row["author"], "message author"),
            authorName: row["author_name"],
            text: row["text"],
            sentAt: date(row["sent_at"]),
            recordedAt: date(row["recorded_at"]),
            hops: row["hops"],
            status: status,
            sequence: try sequence.map { try Self.sequence($0, "message sequence") },
            isAction: row["action"])
    }

    static func insert(_ message: StoredMessage, _ db: Database) throws {
        var peer: String?
        var room: String?
        switch message.conversation {
        case .direct(let node): peer = node.hex
        case .room(let ref): room = ref.storageKey
        case .mesh: break
        }
        try db.execute(
            sql: """
                INSERT INTO message (id, peer, room, outgoing, author, author_name, text, sent_at, recorded_at, hops, status, sequence, action)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [message.id, peer, room, message.isOutgoing, message.author.hex, message.authorName, message.text,
                        column(message.sentAt), column(message.recordedAt), message.hops, message.status.rawValue,
                        message.sequence.map { Int64($0) }, message.isAction])
    }

    static func fetchMessage(id: String, _ db: Database) throws -> StoredMessage? {
        try Row.fetchOne(db, sql: "SELECT \(messageColumns) FROM message m WHERE m.id = ?", arguments: [id]).map(message)
    }

    static func setStatus(_ status: DeliveryStatus, id: String, _ db: Database) throws {
        try db.execute(sql: "UPDATE message SET status = ? WHERE id = ?", arguments: [status.rawValue, id])
    }

    static func outboxEntry(_ row: Row) throws -> OutboxEntry {
        let destination: String? = row["destination"]
        let lastAttempt: Double? = row["last_attempt_at"]
        return OutboxEntry(
            message: try message(row),
            destination: try destination.map { try nodeID($0, "outbox destination") },
            sequence: try sequence(row["o_sequence"], "outbox sequence"),
            attempts: row["attempts"],
            lastAttemptAt: lastAttempt.map(date),
            expiresAt: date(row["expires_at"]))
    }

    /// `SELECT` of outbox entries joined with their messages; append a `WHERE`.
    static let outboxSelect = """
        SELECT \(messageColumns), o.destination, o.sequence AS o_sequence, o.attempts, o.last_attempt_at, o.expires_at
        FROM outbox o JOIN message m ON m.id = o.id
        """

    // MARK: - Ids

    /// A fresh message id: 16 random bytes as 32 lowercase hex digits.
    static func newID() -> String { NodeID.random().hex }

    /// The id in lowercase when it is 32 hex digits, else `nil`.
    static func normalizedID(_ id: String) -> String? { (try? NodeID(hex: id))?.hex }

}
