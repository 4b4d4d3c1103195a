import Foundation
import GRDB
import MeshCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The persistent outbox, inbound ordering and chat history of a node, in one SQLite file.
///
/// **Outgoing.** ``enqueue(text:to:author:authorName:now:)`` writes the history row and the
/// outbox row in one transaction that is durable when it returns (WAL with `synchronous=FULL`),
/// so a message reported as accepted survives a crash or power loss. Private messages stay in
/// the outbox until the destination's receipt (``delivered(ids:from:now:)``) or until they are
/// older than ``StoreLimits/maxMessageAge`` (``expire(now:)``); broadcasts until
/// ``broadcastSent(id:now:)``. Each destination has its own sequence, 1, 2, …, persistent across
/// restarts; ``floor(for:)`` is the lowest one still undelivered.
///
/// **Incoming.** ``receive(_:now:)`` recognises duplicates by id (also after a restart), refuses
/// stale messages, and orders the rest with an ``InboundSequencer`` per sender whose state is kept
/// in the database; ``releaseHeld(now:)`` gives up on gaps after ``StoreLimits/holdTimeout``.
///
/// **History.** ``history(limit:conversation:)`` and ``message(id:)`` read what the application
/// has seen; ``prune(now:)`` bounds the seen ids and the history.
///
/// This type is thread-safe: every call runs on one serialized connection, and each call that
/// changes something is one transaction. Calls block the calling thread for the disk write; call
/// them from a thread that may block (not a NIO event loop).
public final class MessageStore: Sendable {
    /// The database file, or `in-memory`.
    public let path: String
    /// The bounds in force.
    public let limits: StoreLimits
    let queue: DatabaseQueue
    /// Set by ``close()``; read and written only on the queue's serial dispatch queue (GRDB
    /// crashes on a closed connection rather than throwing, so every call checks it first).
    private let state = ConnectionState()

    /// Opens (creating if needed) the store at `path`.
    ///
    /// The parent directory is created with mode 0700 and the file with mode 0600 (an existing
    /// file readable by others is restricted to 0600: it holds private messages). The database
    /// uses write-ahead logging with `synchronous=FULL`, so a committed write survives power loss.
    /// - Parameters:
    ///   - path: the database file.
    ///   - limits: the bounds.
    /// - Throws: ``StoreError`` `cannotOpen` when the file or directory cannot be created or
    ///   opened, `corrupt` when the file is not a valid database, `incompatibleSchema` when a newer
    ///   version wrote it; each naming the path.
    public init(path: String, limits: StoreLimits = .init()) throws(StoreError) {
        self.path = path
        self.limits = limits
        try Self.prepareFile(path)
        var configuration = Configuration()
        configuration.label = "MeshStore"
        configuration.prepareDatabase { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode?.lowercased() == "wal" else {
                throw Schema.BadRow(description: "journal mode is \(mode ?? "unknown") after asking for WAL")
            }
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw Self.openError(error, path: path)
        }
        try migrate()
    }

    /// An empty store in memory, for tests.
    /// - Parameter limits: the bounds.
    /// - Returns: the store.
    /// - Throws: ``StoreError`` when SQLite cannot create it.
    public static func inMemory(limits: StoreLimits = .init()) throws(StoreError) -> MessageStore {
        try MessageStore(inMemory: limits)
    }

    private init(inMemory limits: StoreLimits) throws(StoreError) {
        path = "in-memory"
        self.limits = limits
        do {
            queue = try DatabaseQueue()
        } catch {
            throw Self.openError(error, path: path)
        }
        try migrate()
    }

    /// Closes the database; every later call throws ``StoreError`` `closed`. Closing twice is
    /// harmless. (Releasing the store closes it too.)
    /// - Throws: ``StoreError`` `io` when SQLite cannot close it.
    public func close() throws(StoreError) {
        let state = state
        do {
            let wasClosed = queue.inDatabase { _ in
                defer { state.isClosed = true }
                return state.isClosed
            }
            if wasClosed { return }
            try queue.close()
        } catch {
            throw map(error, "closing")
        }
    }

    // MARK: - Plumbing

    /// Runs `body` in a write transaction (taken at once, so writers never deadlock), mapping
    /// errors to ``StoreError``; a throwing body rolls back.
    func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try transaction(.immediate, what, body)
    }

    /// Runs `body` in a read transaction, mapping errors to ``StoreError``.
    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try transaction(.deferred, what, body)
    }

    private func transaction<T>(_ kind: Database.TransactionKind, _ what: String,
                                _ body: (Database) throws -> T) throws(StoreError) -> T {
        let state = state
        let path = path
        do {
            return try queue.inDatabase { db in
                guard !state.isClosed else { throw StoreError.closed(path, what) }
                var result: Result<T, any Error>?
                try db.inTransaction(kind) {
                    result = Result { try body(db) }
                    if case .failure = result { return .rollback }
                    return .commit
                }
                guard let result else { throw StoreError.io(path, what, "the transaction did not run") }
                return try result.get()
            }
        } catch {
            throw map(error, what)
        }
    }

    /// Maps an error thrown during `what` to a ``StoreError`` naming the path.
    func map(_ error: any Error, _ what: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? Schema.BadRow { return .corrupt(path, error.description) }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return .corrupt(path, error.message ?? "\(error.resultCode)")
            default:
                return .io(path, what, error.message.map { "\($0) (\(error.resultCode))" } ?? "\(error.resultCode)")
            }
        }
        return .io(path, what, "\(error)")
    }

    private func migrate() throws(StoreError) {
        let migrator = Schema.migrator
        do {
            let unknown = try read("reading the schema version") { db in
                try migrator.appliedIdentifiers(db).subtracting(migrator.migrations)
            }
            guard unknown.isEmpty else { throw StoreError.incompatibleSchema(path, unknown: unknown.sorted()) }
            try migrator.migrate(queue)
        } catch {
            throw map(error, "migrating the schema")
        }
    }

    private static func openError(_ error: any Error, path: String) -> StoreError {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return .corrupt(path, error.message ?? "\(error.resultCode)")
            default:
                return .cannotOpen(path, error.message.map { "\($0) (\(error.resultCode))" } ?? "\(error.resultCode)")
            }
        }
        return .cannotOpen(path, "\(error)")
    }

    /// Creates the parent directory (0700) and the file (0600), or restricts an existing file to 0600.
    private static func prepareFile(_ path: String) throws(StoreError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw .cannotOpen(path, "\(directory) is not a directory") }
            } else {
                do {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])
                } catch {
                    throw .cannotOpen(path, "could not create directory \(directory): \(error.localizedDescription)")
                }
            }
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotOpen(path, String(cString: strerror(errno))) }
        defer { closeDescriptor(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotOpen(path, String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .cannotOpen(path, "not a regular file") }
        if info.st_mode & 0o077 != 0, fchmod(fd, 0o600) != 0 {
            throw .cannotOpen(path, "could not restrict its mode to 0600: \(String(cString: strerror(errno)))")
        }
    }
}

/// close(2), out of reach of ``MessageStore/close()``'s name.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// Whether ``MessageStore/close()`` ran.
///
/// - Important: read and written only inside `DatabaseQueue.inDatabase`, whose serial dispatch
///   queue is the synchronization; hence `@unchecked Sendable`.
private final class ConnectionState: @unchecked Sendable {
    var isClosed = false
}
