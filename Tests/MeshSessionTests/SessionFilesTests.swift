import Foundation
import Logging
import MeshCore
@testable import MeshSession
import MeshTestSupport
import Testing

/// The session files on disk (``SessionFiles``): stores go in place, the file stays bounded, a slot
/// grows and shrinks by a rewrite, old files are read, and open descriptors are bounded.
@Suite("session files")
struct SessionFilesTests {
    static let logger = Logger(label: "session-files") { _ in SwiftLogNoOpLogHandler() }

    static func node(_ index: Int) throws -> NodeID {
        try NodeID(bytes: (0..<NodeID.byteCount).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) })
    }

    static func contents(_ path: String) throws -> SessionFileFormat.Contents {
        SessionFileFormat.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func latest(_ path: String) throws -> SessionFileFormat.Latest? {
        guard case .record(let latest) = try contents(path) else { return nil }
        return latest
    }

    static func inode(_ path: String) -> UInt64 {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    @Test("a file edited to hold the last sequence number is not continued past it: the next store writes the file anew at 1, and reading takes that store, not the edited record")
    func lastSequenceNumber() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(1)
        let path = files.path(of: node)
        var bytes = SessionFileFormat.header(slotSize: SessionFileFormat.minSlotSize)
        bytes.append(SessionFileFormat.record(Data("edited".utf8), sequence: .max))
        try bytes.write(to: URL(fileURLWithPath: path))
        let read = files.read(node, logger: Self.logger)
        #expect(read == .sessions(Data("edited".utf8)))
        let stored = files.write(Data("next".utf8), for: node, logger: Self.logger)
        #expect(stored)
        let latest = try #require(try Self.latest(path))
        #expect(latest.sequence == 1 && latest.payload == Data("next".utf8))
        var again = SessionFiles(directory: directory.path)
        let reread = again.read(node, logger: Self.logger)
        #expect(reread == .sessions(Data("next".utf8)))
    }

    @Test("stores after the first go in place (same inode, no rename), in turn into the two slots; the file stays header + 2 slots, mode 0600")
    func storesInPlace() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(1)
        let path = files.path(of: node)
        let result1 = files.write(Data("first".utf8), for: node, logger: Self.logger)
        #expect(result1)
        let inode = Self.inode(path)
        for round in 2...20 {
            let result2 = files.write(Data(repeating: UInt8(round), count: 600), for: node, logger: Self.logger)
            #expect(result2)
            #expect(Self.inode(path) == inode, "round \(round) replaced the file")
            let latest = try #require(try Self.latest(path))
            #expect(latest.sequence == UInt64(round) && latest.slot == (round - 1) % 2 && latest.payload == Data(repeating: UInt8(round), count: 600))
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.size] as? Int ?? .max) <= SessionFileFormat.headerSize + 2 * SessionFileFormat.minSlotSize)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
        // Another value (a restarted process) reads the last store and continues its sequence.
        var again = SessionFiles(directory: directory.path)
        let result3 = again.read(node, logger: Self.logger)
        #expect(result3 == .sessions(Data(repeating: 20, count: 600)))
        let result4 = again.write(Data("after restart".utf8), for: node, logger: Self.logger)
        #expect(result4)
        #expect(try Self.latest(path)?.sequence == 21 && Self.inode(path) == inode)
    }

    @Test("a record that outgrows its slot rewrites the file with a larger one; a flush's store shrinks a slot far too large; each keeps the last state")
    func growAndCompact() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(2)
        let path = files.path(of: node)
        files.write(Data("small".utf8), for: node, logger: Self.logger)
        let large = Data(repeating: 0xAB, count: 100_000)
        let result5 = files.write(large, for: node, logger: Self.logger)
        #expect(result5)
        #expect(try Self.latest(path)?.slotSize == 262_144 && Self.latest(path)?.payload == large)
        // On the packet path a small record stays in the large slot (no rename there).
        let inode = Self.inode(path)
        let result6 = files.write(Data("small again".utf8), for: node, logger: Self.logger)
        #expect(result6)
        #expect(try Self.latest(path)?.slotSize == 262_144 && Self.inode(path) == inode)
        // The flush's store compacts: a new file with a 4 KiB slot and the last state, its sequence going on.
        let result7 = files.write(Data("compacted".utf8), for: node, mayCompact: true, logger: Self.logger)
        #expect(result7)
        let compacted = try #require(try Self.latest(path))
        #expect(compacted.slotSize == SessionFileFormat.minSlotSize && compacted.payload == Data("compacted".utf8) && compacted.sequence == 4)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size.map { $0 <= SessionFileFormat.headerSize + 2 * SessionFileFormat.minSlotSize } == true)
        let result8 = files.write(Data("in place again".utf8), for: node, mayCompact: true, logger: Self.logger)
        #expect(result8)
        #expect(try Self.latest(path)?.payload == Data("in place again".utf8))
    }

    @Test("a file of the format up to session 16 is read whole and rewritten in the slotted format at the next store")
    func legacyMigration() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(3)
        let path = files.path(of: node)
        let old = Data([1, 0])  // PairSessions.serialized of no sessions, as session 16 wrote it
        try old.write(to: URL(fileURLWithPath: path))
        let result9 = files.read(node, logger: Self.logger)
        #expect(result9 == .sessions(old))
        let result10 = files.write(Data("new format".utf8), for: node, logger: Self.logger)
        #expect(result10)
        #expect(try Self.latest(path)?.payload == Data("new format".utf8))
    }

    @Test("a torn newest record is ignored with a log line; a file with no valid record is damaged")
    func tornAndDamagedOnDisk() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(4)
        let path = files.path(of: node)
        files.write(Data("older".utf8), for: node, logger: Self.logger)
        files.write(Data(repeating: 5, count: 300), for: node, logger: Self.logger)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(SessionFileFormat.offset(ofSlot: 1, slotSize: SessionFileFormat.minSlotSize) + 100))
        try handle.close()
        let capture = LogCapture()
        var reader = SessionFiles(directory: directory.path)
        let result11 = reader.read(node, logger: capture.logger(label: "reader"))
        #expect(result11 == .sessions(Data("older".utf8)))
        #expect(capture.all.contains { $0.contains("ignored a torn or damaged end-to-end session record") })
        // The next store overwrites the torn slot, not the one read.
        let result12 = reader.write(Data("next".utf8), for: node, logger: Self.logger)
        #expect(result12)
        #expect(try Self.latest(path)?.slot == 1)
        let result13 = reader.read(node, logger: Self.logger)
        #expect(result13 == .sessions(Data("next".utf8)))
        try Data(SessionFileFormat.magic + [0, 0, 16, 0, 0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 64)).write(to: URL(fileURLWithPath: path))
        guard case .damaged = reader.read(node, logger: Self.logger) else { Issue.record("garbage read as sessions"); return }
        try Data(count: SessionFileFormat.maxFileBytes + 1).write(to: URL(fileURLWithPath: path))
        guard case .damaged = reader.read(node, logger: Self.logger) else { Issue.record("an oversized file read"); return }
    }

    @Test("at most 64 files are open; a store to a closed one reopens it and goes in place")
    func descriptorBound() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let nodes = try (0..<(SessionFiles.maxOpenDescriptors + 6)).map(Self.node)
        for node in nodes { let stored = files.write(Data("hello".utf8), for: node, logger: Self.logger); #expect(stored) }
        #expect(files.openDescriptorCount == SessionFiles.maxOpenDescriptors)
        let first = files.path(of: nodes[0])
        let inode = Self.inode(first)
        let result14 = files.write(Data("again".utf8), for: nodes[0], logger: Self.logger)
        #expect(result14)
        #expect(files.openDescriptorCount == SessionFiles.maxOpenDescriptors)
        #expect(try Self.latest(first)?.payload == Data("again".utf8) && Self.inode(first) == inode)
        for node in nodes { #expect(try Self.latest(files.path(of: node)) != nil) }
        files.remove(nodes[1])
        #expect(!FileManager.default.fileExists(atPath: files.path(of: nodes[1])))
        files.closeAll()
        #expect(files.openDescriptorCount == 0)
    }

    @Test("a file deleted behind an open descriptor is written anew at the next store, not into the unlinked one")
    func deletedBehindItsBack() throws {
        let directory = TemporaryDirectory("meshchat-session-files")
        var files = SessionFiles(directory: directory.path)
        let node = try Self.node(5)
        let path = files.path(of: node)
        files.write(Data("one".utf8), for: node, logger: Self.logger)
        try FileManager.default.removeItem(atPath: path)
        let result15 = files.write(Data("two".utf8), for: node, logger: Self.logger)
        #expect(result15)
        #expect(try Self.latest(path)?.payload == Data("two".utf8))
    }
}
