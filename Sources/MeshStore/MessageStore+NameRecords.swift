import Foundation
import GRDB
import MeshCore

extension MessageStore {
    /// The stored rows of the chat's name book (PROTOCOL.md §20.3), at most `limit`, each as the
    /// text the application stored. A row longer than `maxBytes` (a damaged or edited file) is not
    /// read into memory: it is counted in `oversized` for the caller to log, and left out.
    /// - Parameters:
    ///   - maxBytes: the longest row read.
    ///   - limit: the most rows read (the rest are left out and counted in `beyondLimit`).
    /// - Returns: the rows by node id text, and how many were left out.
    /// - Throws: ``StoreError`` when the read fails.
    public func nameRecords(maxBytes: Int, limit: Int) throws(StoreError) -> (rows: [String: String], oversized: Int, beyondLimit: Int) {
        try read("reading the name book") { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM name_record") ?? 0
            var rows: [String: String] = [:]
            var oversized = 0
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT node, CASE WHEN length(CAST(record AS BLOB)) <= ? THEN record END AS record
                FROM name_record ORDER BY node LIMIT ?
                """, arguments: [max(0, maxBytes), max(0, limit)])
            while let row = try cursor.next() {
                let node: String = row["node"]
                guard let record: String = row["record"] else { oversized += 1; continue }
                rows[node] = record
            }
            return (rows, oversized, max(0, total - max(0, limit)))
        }
    }

    /// Writes the name book's rows that changed, in one transaction.
    /// - Parameters:
    ///   - changes: a row's new text by node id text, or `nil` to delete the row.
    ///   - replacingAll: delete every other row first (a book written anew).
    /// - Throws: ``StoreError`` when the write fails.
    public func saveNameRecords(_ changes: [String: String?], replacingAll: Bool = false) throws(StoreError) {
        try write("saving the name book") { db in
            if replacingAll { try db.execute(sql: "DELETE FROM name_record") }
            for (node, record) in changes {
                if let record {
                    try db.execute(sql: "INSERT INTO name_record (node, record) VALUES (?, ?) ON CONFLICT(node) DO UPDATE SET record = excluded.record",
                                   arguments: [node, record])
                } else {
                    try db.execute(sql: "DELETE FROM name_record WHERE node = ?", arguments: [node])
                }
            }
        }
    }
}

extension MessageStore {
    /// A setting, unless it is longer than `maxBytes` (then it is not read into memory).
    /// - Parameters:
    ///   - key: its key.
    ///   - maxBytes: the longest value read.
    /// - Returns: the value (`nil` when unset), and whether it was over the limit.
    /// - Throws: ``StoreError`` when the read fails.
    public func setting(_ key: String, maxBytes: Int) throws(StoreError) -> (value: String?, oversized: Bool) {
        try read("reading a setting") { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT CASE WHEN length(CAST(value AS BLOB)) <= ? THEN value END AS value FROM setting WHERE key = ?
                """, arguments: [max(0, maxBytes), key]) else { return (nil, false) }
            let value: String? = row["value"]
            return (value, value == nil)
        }
    }
}
