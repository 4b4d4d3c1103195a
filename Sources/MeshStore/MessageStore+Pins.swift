import Foundation
import GRDB
import MeshCore

extension MessageStore {
    // MARK: Pins (PROTOCOL.md §14.4)

    /// Stores a pin (this node's or a received one), durably when it returns.
    ///
    /// A pin already stored, one its author withdrew, and one expired at `now` change nothing
    /// (so a late or replayed copy never revives a withdrawn pin).
    /// - Parameters:
    ///   - pin: the pin (validated by the caller).
    ///   - now: the current time.
    /// - Returns: whether it was new.
    /// - Throws: ``StoreError`` `pinsFull` when its author has ``StoreLimits/maxPinsPerAuthor``
    ///   live pins or the store ``StoreLimits/maxPinsTotal``; others when the write fails.
    @discardableResult
    public func savePin(_ pin: StoredPin, now: Date) throws(StoreError) -> PinChange {
        guard pin.expiresAt > now else { return .unchanged }
        let limits = self.limits
        return try write("storing a pin") { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM pin WHERE id = ?", arguments: [pin.id]) == true { return .unchanged }
            let live = "withdrawn_at IS NULL AND expires_at > ?"
            let mine = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pin WHERE author = ? AND \(live)",
                                        arguments: [pin.author.hex, Schema.column(now)]) ?? 0
            if mine >= limits.maxPinsPerAuthor {
                throw StoreError.pinsFull(author: pin.authorName, count: mine, limit: limits.maxPinsPerAuthor)
            }
            let all = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pin WHERE \(live)", arguments: [Schema.column(now)]) ?? 0
            if all >= limits.maxPinsTotal { throw StoreError.pinsFull(total: all, limit: limits.maxPinsTotal) }
            try Schema.insert(pin, db)
            return .added
        }
    }

    /// Marks a pin withdrawn by its author.
    /// - Parameters:
    ///   - id: the pin id.
    ///   - author: who asks; only the pin's author may withdraw it.
    ///   - now: the current time.
    /// - Returns: the pin when it was live and `author` made it, else `nil` (nothing changed).
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func withdrawPin(id: String, by author: NodeID, now: Date) throws(StoreError) -> StoredPin? {
        try write("withdrawing a pin") { db in
            guard let pin = try Row.fetchOne(db, sql: "SELECT * FROM pin WHERE id = ? AND author = ? AND withdrawn_at IS NULL",
                                             arguments: [id, author.hex]).map(Schema.pin) else { return nil }
            try db.execute(sql: "UPDATE pin SET withdrawn_at = ? WHERE id = ?", arguments: [Schema.column(now), id])
            return pin.expiresAt > now ? pin : nil
        }
    }

    /// Makes an author's live pins exactly `pins` (a catch-up from the author, §14.4): its other
    /// live pins created before `asOf` are marked withdrawn, and those of `pins` not yet known are
    /// stored. A pin created at or after `asOf` was made after the author read the set (its
    /// broadcast may overtake the catch-up) and stays.
    /// - Parameters:
    ///   - author: the author; every pin in `pins` must be its own.
    ///   - pins: all of the author's live pins at `asOf` (validated by the caller).
    ///   - asOf: when the author read its pins (its clock); `nil` for a set that does not say.
    ///   - now: the current time.
    /// - Returns: the pins added and the pins withdrawn.
    /// - Throws: ``StoreError`` when the write fails; pins beyond the limits are left out.
    public func replacePins(of author: NodeID, with pins: [StoredPin], asOf: Date? = nil,
                            now: Date) throws(StoreError) -> (added: [StoredPin], withdrawn: [StoredPin]) {
        let limits = self.limits
        return try write("replacing an author's pins") { db in
            let current = try Row.fetchAll(db, sql: "SELECT * FROM pin WHERE author = ? AND withdrawn_at IS NULL AND expires_at > ?",
                                           arguments: [author.hex, Schema.column(now)]).map(Schema.pin)
            let keep = Set(pins.map(\.id))
            var withdrawn: [StoredPin] = []
            for pin in current where !keep.contains(pin.id) && asOf.map({ pin.createdAt < $0 }) ?? true {
                try db.execute(sql: "UPDATE pin SET withdrawn_at = ? WHERE id = ?", arguments: [Schema.column(now), pin.id])
                withdrawn.append(pin)
            }
            var added: [StoredPin] = []
            var live = current.count - withdrawn.count
            var total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pin WHERE withdrawn_at IS NULL AND expires_at > ?",
                                         arguments: [Schema.column(now)]) ?? 0
            for pin in pins where pin.author == author && pin.expiresAt > now {
                guard live < limits.maxPinsPerAuthor, total < limits.maxPinsTotal else { break }
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM pin WHERE id = ?", arguments: [pin.id]) == true { continue }
                try Schema.insert(pin, db)
                added.append(pin)
                live += 1
                total += 1
            }
            return (added, withdrawn)
        }
    }

    /// The live pins (not withdrawn, not expired at `now`), oldest first.
    /// - Parameters:
    ///   - now: the current time.
    ///   - author: only this author's, or `nil` for everyone's.
    /// - Returns: the pins.
    /// - Throws: ``StoreError`` when the read fails.
    public func pins(now: Date, by author: NodeID? = nil) throws(StoreError) -> [StoredPin] {
        var sql = "SELECT * FROM pin WHERE withdrawn_at IS NULL AND expires_at > ?"
        var arguments: StatementArguments = [Schema.column(now)]
        if let author {
            sql += " AND author = ?"
            arguments += [author.hex]
        }
        sql += " ORDER BY created_at, id"
        return try read("reading pins") { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map(Schema.pin) }
    }

    /// Deletes pins that expired before `now` (withdrawn ones included).
    /// - Parameter now: the current time.
    /// - Returns: how many rows were deleted.
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func prunePins(now: Date) throws(StoreError) -> Int {
        try write("pruning pins") { db in
            try db.execute(sql: "DELETE FROM pin WHERE expires_at <= ?", arguments: [Schema.column(now)])
            return db.changesCount
        }
    }

    // MARK: Settings

    /// A remembered setting.
    /// - Parameter key: its key.
    /// - Returns: its value, or `nil` when never set.
    /// - Throws: ``StoreError`` when the read fails.
    public func setting(_ key: String) throws(StoreError) -> String? {
        try read("reading a setting") { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key]) }
    }

    /// Remembers a setting, durably when it returns.
    /// - Parameters:
    ///   - key: its key.
    ///   - value: its value; `nil` forgets it.
    /// - Throws: ``StoreError`` when the write fails.
    public func setSetting(_ key: String, to value: String?) throws(StoreError) {
        try write("writing a setting") { db in
            if let value {
                try db.execute(sql: "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key])
            }
        }
    }
}

extension Schema {
    static func pin(_ row: Row) throws -> StoredPin {
        StoredPin(id: row["id"], author: try nodeID(row["author"], "pin author"), authorName: row["author_name"],
                  latitude: row["latitude"], longitude: row["longitude"], label: row["label"], note: row["note"],
                  createdAt: date(row["created_at"]), expiresAt: date(row["expires_at"]), receivedAt: date(row["received_at"]))
    }

    static func insert(_ pin: StoredPin, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO pin (id, author, author_name, latitude, longitude, label, note, created_at, expires_at, received_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [pin.id, pin.author.hex, pin.authorName, pin.latitude, pin.longitude, pin.label, pin.note,
                             column(pin.createdAt), column(pin.expiresAt), column(pin.receivedAt)])
    }
}
