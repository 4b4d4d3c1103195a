import Foundation
import GRDB
@testable import MeshStore
import MeshTestSupport
import Testing

@Suite("MessageStore file")
struct StoreFileTests {
    typealias F = Fixture

    @Test("the file and its parent directory are created private: 0600 and 0700")
    func fileMode() throws {
        let directory = TemporaryDirectory("meshstore")
        let store = try F.open(directory)
        _ = try store.enqueue(text: "x", to: F.alice, author: F.me, authorName: "me", now: F.t0)
        let file = try FileManager.default.attributesOfItem(atPath: directory.appending("data/messages.sqlite"))
        #expect((file[.posixPermissions] as? Int) == 0o600)
        let parent = try FileManager.default.attributesOfItem(atPath: directory.appending("data"))
        #expect((parent[.posixPermissions] as? Int) == 0o700)
        let wal = try FileManager.default.attributesOfItem(atPath: directory.appending("data/messages.sqlite-wal"))
        #expect((wal[.posixPermissions] as? Int) == 0o600)
    }

    @Test("an existing file readable by others is restricted to 0600")
    func tightensMode() throws {
        let directory = TemporaryDirectory("meshstore")
        let path = directory.appending("messages.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        _ = try MessageStore(path: path)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
    }

    @Test("durability: journal_mode is WAL and synchronous is FULL on the store's connection")
    func durabilitySettings() throws {
        let directory = TemporaryDirectory("meshstore")
        let store = try F.open(directory)
        let (mode, synchronous) = try store.queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(mode == "wal")
        #expect(synchronous == 2)
    }

    @Test("a file of garbage gives a corrupt error naming the path, without a crash")
    func garbage() throws {
        let directory = TemporaryDirectory("meshstore")
        let path = directory.appending("messages.sqlite")
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))
        let error = #expect(throws: StoreError.self) { try MessageStore(path: path) }
        #expect(error?.code == .corrupt)
        #expect(error?.description.contains(path) == true)
        #expect(error?.description.contains("not a valid database") == true)
    }

    @Test("a path that is a directory, or below a file, gives cannotOpen naming the path")
    func cannotOpen() throws {
        let directory = TemporaryDirectory("meshstore")
        let isDirectory = #expect(throws: StoreError.self) { try MessageStore(path: directory.path) }
        #expect(isDirectory?.code == .cannotOpen && isDirectory?.description.contains(directory.path) == true)
        let file = directory.appending("plain")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let belowFile = #expect(throws: StoreError.self) { try MessageStore(path: file + "/messages.sqlite") }
        #expect(belowFile?.code == .cannotOpen)
        #expect(belowFile?.description.contains("\(file) is not a directory") == true)
    }

    @Test("a database written by a newer version (unknown migration) is refused")
    func newerSchema() throws {
        let directory = TemporaryDirectory("meshstore")
        let path = directory.appending("messages.sqlite")
        do {
            let store = try MessageStore(path: path)
            try store.queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
            }
            try store.close()
        }
        let error = #expect(throws: StoreError.self) { try MessageStore(path: path) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.description.contains("v99-from-the-future") == true)
    }

    @Test("calls after close throw a closed error naming what failed; closing twice is harmless")
    func afterClose() throws {
        let store = try MessageStore.inMemory()
        try store.close()
        try store.close()
        let error = #expect(throws: StoreError.self) { try store.history(limit: 1) }
        #expect(error?.code == .closed)
        #expect(error?.description == "message store in-memory: reading history after the store was closed")
        let write = #expect(throws: StoreError.self) {
            try store.enqueue(text: "x", to: nil, author: F.me, authorName: "me", now: F.t0)
        }
        #expect(write?.code == .closed)
    }
}
