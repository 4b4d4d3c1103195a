import Foundation
@testable import MeshSession
import Testing

/// The two-slot sessions file as bytes (``SessionFileFormat``): which record a reader takes, and that
/// torn, damaged, oversized or foreign bytes are ignored or refused, never trusted or trapped on.
@Suite("session file format")
struct SessionFileFormatTests {
    static let slotSize = SessionFileFormat.minSlotSize

    /// A file with `first` in slot 0 (sequence 1) and, if given, `second` in slot 1 (sequence 2).
    static func file(_ first: Data, _ second: Data? = nil, slotSize: Int = slotSize) -> Data {
        var file = SessionFileFormat.header(slotSize: slotSize)
        file.append(SessionFileFormat.record(first, sequence: 1))
        guard let second else { return file }
        file.append(Data(count: SessionFileFormat.offset(ofSlot: 1, slotSize: slotSize) - file.count))
        file.append(SessionFileFormat.record(second, sequence: 2))
        return file
    }

    static func latest(_ file: Data) throws -> SessionFileFormat.Latest {
        guard case .record(let latest) = SessionFileFormat.decode(file) else {
            Issue.record("not a record: \(SessionFileFormat.decode(file))")
            throw CancellationError()
        }
        return latest
    }

    @Test("one record reads back; the next store goes to the other slot")
    func oneRecord() throws {
        let latest = try Self.latest(Self.file(Data("one".utf8)))
        #expect(latest.payload == Data("one".utf8) && latest.sequence == 1 && latest.slot == 0 && latest.slotSize == Self.slotSize)
        #expect(latest.ignored == nil, "a never written slot is no damage")
    }

    @Test("of two valid records the higher sequence number wins, whichever slot it is in")
    func newerWins() throws {
        #expect(try Self.latest(Self.file(Data("old".utf8), Data("new".utf8))).payload == Data("new".utf8))
        // Slot 0 overwritten later, with sequence 3.
        var file = Self.file(Data("old".utf8), Data("new".utf8))
        let third = SessionFileFormat.record(Data("third".utf8), sequence: 3)
        file.replaceSubrange(SessionFileFormat.headerSize ..< SessionFileFormat.headerSize + third.count, with: third)
        let latest = try Self.latest(file)
        #expect(latest.payload == Data("third".utf8) && latest.slot == 0 && latest.ignored == nil)
    }

    @Test("a torn tail (the process died inside the write) is ignored, with its reason, and the record before it is read")
    func tornTail() throws {
        let full = Self.file(Data("kept".utf8), Data(repeating: 7, count: 600))
        for cut in [1, 12, 28, 300, 627] {
            let latest = try Self.latest(full.prefix(full.count - cut))
            #expect(latest.payload == Data("kept".utf8), "cut \(cut)")
            #expect(latest.ignored != nil, "cut \(cut)")
        }
    }

    @Test("a record torn in place over an older one (new header, old bytes after it) fails its checksum")
    func tornOverOlder() throws {
        var file = Self.file(Data("kept".utf8), Data(repeating: 1, count: 600))
        let newer = SessionFileFormat.record(Data(repeating: 2, count: 600), sequence: 3)
        // Only the first 100 bytes of a new record (sequence 3) over slot 1 reached the file...
        let start = SessionFileFormat.offset(ofSlot: 1, slotSize: Self.slotSize)
        file.replaceSubrange(start ..< start + 100, with: newer.prefix(100))
        // ...so slot 1 has sequence 3's header and sequence 2's tail: slot 0 (sequence 1) is the state.
        let latest = try Self.latest(file)
        #expect(latest.payload == Data("kept".utf8) && latest.ignored?.contains("checksum") == true)
    }

    @Test("a flipped byte anywhere in a record fails its checksum")
    func damagedChecksum() throws {
        let clean = Self.file(Data("kept".utf8), Data(repeating: 9, count: 64))
        let start = SessionFileFormat.offset(ofSlot: 1, slotSize: Self.slotSize)
        for index in [start, start + 8, start + 12, start + 27, start + 28, start + 28 + 63] {
            var file = clean
            file[index] ^= 0x40
            #expect(try Self.latest(file).payload == Data("kept".utf8), "byte \(index - start) of the record")
        }
        var both = clean
        both[SessionFileFormat.headerSize + 30] ^= 1
        both[start + 30] ^= 1
        guard case .damaged(let reason) = SessionFileFormat.decode(both) else { Issue.record("both damaged: not refused"); return }
        #expect(reason.contains("no valid record"))
    }

    @Test("oversized or hostile lengths, slot sizes and files are refused without trapping")
    func hostile() {
        let header = SessionFileFormat.header(slotSize: Self.slotSize)
        // A record claiming more than its slot, or UInt32.max.
        for length in [UInt32(Self.slotSize), UInt32.max] {
            var file = header
            file.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 1])
            withUnsafeBytes(of: length.bigEndian) { file.append(contentsOf: $0) }
            file.append(Data(count: 16 + 64))
            guard case .damaged(let reason) = SessionFileFormat.decode(file) else { Issue.record("length \(length) accepted"); continue }
            #expect(reason.contains("a record of"))
        }
        // Slot sizes that are too small, too large or not a power of two.
        for slotSize in [0, 1, 4_095, 4_097, 3 << 20, Int(UInt32.max)] {
            var file = SessionFileFormat.header(slotSize: slotSize)
            file.append(SessionFileFormat.record(Data("x".utf8), sequence: 1))
            guard case .damaged = SessionFileFormat.decode(file) else { Issue.record("slot size \(slotSize) accepted"); continue }
        }
        // A header cut short, and a file longer than any this format writes.
        guard case .damaged = SessionFileFormat.decode(header.prefix(10)) else { Issue.record("short header accepted"); return }
        var long = Self.file(Data("x".utf8))
        long.append(Data(count: SessionFileFormat.maxFileBytes))
        guard case .damaged = SessionFileFormat.decode(long) else { Issue.record("long file accepted"); return }
    }

    @Test("a file without the magic is the format up to session 16, passed on whole (empty too)")
    func legacy() {
        let old = Data([1, 1] + [UInt8](repeating: 5, count: 100))
        #expect(SessionFileFormat.decode(old) == .legacy(old))
        #expect(SessionFileFormat.decode(Data()) == .legacy(Data()))
        #expect(SessionFileFormat.decode(Data("meshE2E".utf8)) == .legacy(Data("meshE2E".utf8)))
    }

    @Test("slot sizes: twice the record rounded up to a power of two, 4 KiB at least, room for the largest stored sessions")
    func slotSizes() {
        #expect(SessionFileFormat.slotSize(for: 600) == 4_096)
        #expect(SessionFileFormat.slotSize(for: 4_096) == 16_384)
        #expect(SessionFileFormat.slotSize(for: 1 << 20) == SessionFileFormat.maxSlotSize)
        #expect(SessionFileFormat.fits(1 << 20, slotSize: SessionFileFormat.maxSlotSize))
        #expect(!SessionFileFormat.fits((1 << 20) + 1, slotSize: SessionFileFormat.maxSlotSize))
        #expect(!SessionFileFormat.fits(4_096 - SessionFileFormat.recordHeaderSize + 1, slotSize: 4_096))
    }
}
