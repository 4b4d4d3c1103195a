/// An error from the message store.
///
/// Each error has a ``code`` for programs and a ``message`` for people that names what failed,
/// the path, and the limit and value where there is one, e.g. "outbox for 3fa2… holds 1000
/// messages, the maximum per destination". Two errors are equal when their codes are equal.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of store error this is.
    public enum Code: Hashable, Sendable {
        /// The database file or its directory could not be created or opened.
        case cannotOpen
        /// The file is not a database, or the database is damaged.
        case corrupt
        /// The database was written by a newer version of this program (unknown migrations).
        case incompatibleSchema
        /// The outbox is full (per destination or in total); the message was not accepted.
        case outboxFull
        /// Reading or writing the database failed (disk full, I/O error, …).
        case io
        /// The store was closed.
        case closed
        /// The pin limit (per author or in total) is reached; the pin was not stored.
        case pinsFull
    }

    /// What kind of error this is.
    public let code: Code
    /// A sentence for people.
    public let message: String

    /// The message.
    public var description: String { message }

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    @inline(never)
    static func cannotOpen(_ path: String, _ why: String) -> StoreError {
        StoreError(.cannotOpen, "cannot open message store \(path): \(why)")
    }
    @inline(never)
    static func corrupt(_ path: String, _ why: String) -> StoreError {
        StoreError(.corrupt, "message store \(path) is not a valid database (\(why)); move it aside to start afresh")
    }
    @inline(never)
    static func incompatibleSchema(_ path: String, unknown: [String]) -> StoreError {
        StoreError(.incompatibleSchema,
                   "message store \(path) was written by a newer version (unknown migrations: \(unknown.joined(separator: ", ")))")
    }
    @inline(never)
    static func outboxFull(destination: String, count: Int, limit: Int) -> StoreError {
        StoreError(.outboxFull, "outbox for \(destination) holds \(count) messages, the maximum per destination is \(limit)")
    }
    @inline(never)
    static func outboxFull(total: Int, limit: Int) -> StoreError {
        StoreError(.outboxFull, "outbox holds \(total) messages in all, the maximum total is \(limit)")
    }
    @inline(never)
    static func pinsFull(author: String, count: Int, limit: Int) -> StoreError {
        StoreError(.pinsFull, "\(author) has \(count) live pins, the maximum per author is \(limit)")
    }
    @inline(never)
    static func pinsFull(total: Int, limit: Int) -> StoreError {
        StoreError(.pinsFull, "the store holds \(total) live pins, the maximum total is \(limit)")
    }
    @inline(never)
    static func closed(_ path: String, _ what: String) -> StoreError {
        StoreError(.closed, "message store \(path): \(what) after the store was closed")
    }
    @inline(never)
    static func io(_ path: String, _ what: String, _ why: String) -> StoreError {
        StoreError(.io, "message store \(path): \(what) failed: \(why)")
    }
}
