import Crypto
import Foundation
import MeshRatchet

/// The layout of one pair's sessions file, `sessions/NODE-HEX` (local state, not wire protocol): a
/// header written once, then two slots of a fixed size that stores of the pair's sessions
/// (``PairSessions/serialized``) take in turn, each a self-delimiting, checksummed record.
///
/// Why two slots: a store before a packet leaves (§19.7) must survive the process being killed the
/// moment after, and must cost no more than a write into the page cache. A replace by rename (what
/// sessions before 17 did on every store) made ext4 start writeback of the new file (auto_da_alloc),
/// about 1.25 ms on the packet path. Here a store is one `pwrite` of one record over the older of the
/// two slots; the newer one stays intact, so a store torn by the process dying inside the write (the
/// packet had not left) leaves the state of the store before it. The file needs no compaction: it is
/// at most ``headerSize`` + 2 × its slot size, and a slot is at most twice the largest record
/// written to it rounded up to a power of two (``slotSize(for:)``: 4 KiB for the usual few hundred
/// bytes, at most ``maxSlotSize``).
///
/// - Header (``headerSize`` bytes): ``magic`` (8 bytes), the slot size (u32, big-endian), 4 zero bytes.
/// - Slot `i` at ``headerSize`` + `i` × slot size: a record, the sequence number of the store (u64),
///   the payload's length (u32), the first 16 bytes of SHA-256 over those 12 bytes and the payload,
///   then the payload. The valid record with the higher sequence number is the state; one whose
///   checksum fails (torn, damaged) is ignored.
///
/// A file that does not begin with ``magic`` is a whole ``PairSessions/serialized`` (the format up to
/// session 16, whose first byte is its small version number), read as such and rewritten in this
/// format at its next store.
enum SessionFileFormat {
    /// The file's first 8 bytes.
    static let magic: [UInt8] = Array("meshE2Es".utf8)
    /// The header's size.
    static let headerSize = 16
    /// A record's header: sequence, length, checksum.
    static let recordHeaderSize = 8 + 4 + checksumSize
    /// The bytes of SHA-256 kept as a record's checksum.
    static let checksumSize = 16
    /// The smallest slot.
    static let minSlotSize = 4_096
    /// The largest slot: room for the largest stored sessions read back (``PairSessions/maxStoredBytes``).
    static let maxSlotSize = 2 << 20
    /// The largest file read (a longer one is damaged).
    static let maxFileBytes = headerSize + 2 * maxSlotSize

    /// The slot size for a file whose records are about `payloadCount` bytes: twice the record,
    /// rounded up to a power of two, at least ``minSlotSize``, at most ``maxSlotSize``.
    static func slotSize(for payloadCount: Int) -> Int {
        var size = minSlotSize
        while size < 2 * (payloadCount + recordHeaderSize), size < maxSlotSize { size *= 2 }
        return size
    }

    /// Whether a record of `payloadCount` bytes fits a slot of `slotSize`.
    static func fits(_ payloadCount: Int, slotSize: Int) -> Bool {
        payloadCount <= PairSessions.maxStoredBytes && recordHeaderSize + payloadCount <= slotSize
    }

    /// Where slot `slot` (0 or 1) begins.
    static func offset(ofSlot slot: Int, slotSize: Int) -> Int { headerSize + slot * slotSize }

    /// The header of a file with slots of `slotSize`.
    static func header(slotSize: Int) -> Data {
        var bytes = Data(magic)
        append(UInt32(clamping: slotSize), to: &bytes)
        bytes.append(contentsOf: [0, 0, 0, 0])
        return bytes
    }

    /// One record: `payload` stored with `sequence`.
    static func record(_ payload: Data, sequence: UInt64) -> Data {
        var bytes = Data(capacity: recordHeaderSize + payload.count)
        append(sequence, to: &bytes)
        append(UInt32(clamping: payload.count), to: &bytes)
        bytes.append(checksum(bytes, payload))
        bytes.append(payload)
        return bytes
    }

    /// What a file holds.
    enum Contents: Equatable {
        /// A file of the format up to session 16: all of it is one ``PairSessions/serialized``.
        case legacy(Data)
        /// A file of this format: its newest valid record.
        case record(Latest)
        /// Neither: why (no valid record, a bad header, too long).
        case damaged(String)
    }

    /// The newest valid record of a file of this format.
    struct Latest: Equatable {
        /// The stored sessions.
        var payload: Data
        /// The record's sequence number.
        var sequence: UInt64
        /// Its slot (0 or 1); the next store goes in the other one.
        var slot: Int
        /// The file's slot size.
        var slotSize: Int
        /// Why the other slot was ignored, when it holds no valid record (a torn or damaged one);
        /// `nil` when it holds an older valid record or was never written.
        var ignored: String?
    }

    /// Reads a whole file (checked: it may be damaged or edited).
    static func decode(_ file: Data) -> Contents {
        let bytes = [UInt8](file)
        guard bytes.count >= magic.count, Array(bytes[0 ..< magic.count]) == magic else { return .legacy(file) }
        guard bytes.count <= maxFileBytes else { return .damaged("a sessions file of \(bytes.count) bytes (at most \(maxFileBytes))") }
        guard bytes.count >= headerSize else { return .damaged("a sessions file header of \(bytes.count) bytes") }
        let slotSize = Int(readU32(bytes, at: magic.count))
        guard slotSize >= minSlotSize, slotSize <= maxSlotSize, slotSize & (slotSize - 1) == 0 else {
            return .damaged("a sessions file with slots of \(slotSize) bytes")
        }
        let slots = (0..<2).map { slot in
            decodeRecord(bytes, from: offset(ofSlot: slot, slotSize: slotSize), slotSize: slotSize)
        }
        var best: Latest?
        for (slot, result) in slots.enumerated() {
            guard case .success(let (sequence, payload)) = result else { continue }
            if best.map({ sequence > $0.sequence }) ?? true {
                best = Latest(payload: payload, sequence: sequence, slot: slot, slotSize: slotSize)
            }
        }
        guard var best else {
            var reasons: [String] = []
            for case .failure(let reason) in slots { reasons.append(reason.text) }
            return .damaged("no valid record (\(reasons.joined(separator: "; ")))")
        }
        if case .failure(let reason) = slots[1 - best.slot], !reason.empty { best.ignored = reason.text }
        return .record(best)
    }

    /// Why a slot holds no valid record.
    private struct Invalid: Error {
        var text: String
        /// The slot was never written (the file ends before it, or it is all zeros).
        var empty = false
    }

    private static func decodeRecord(_ bytes: [UInt8], from start: Int, slotSize: Int) -> Result<(UInt64, Data), Invalid> {
        guard start + recordHeaderSize <= bytes.count else {
            return .failure(Invalid(text: "slot at \(start): the file ends", empty: start >= bytes.count))
        }
        let sequence = readU64(bytes, at: start)
        let length = Int(readU32(bytes, at: start + 8))
        let stored = bytes[start + 12 ..< start + recordHeaderSize]
        if sequence == 0, length == 0, stored.allSatisfy({ $0 == 0 }) { return .failure(Invalid(text: "slot at \(start): empty", empty: true)) }
        guard fits(length, slotSize: slotSize) else {
            return .failure(Invalid(text: "slot at \(start): a record of \(length) bytes (at most \(slotSize - recordHeaderSize))"))
        }
        let end = start + recordHeaderSize + length
        guard end <= bytes.count else { return .failure(Invalid(text: "slot at \(start): a record torn after \(bytes.count - start) bytes")) }
        let payload = Data(bytes[start + recordHeaderSize ..< end])
        let computed = checksum(Data(bytes[start ..< start + 12]), payload)
        // Not a secret: a checksum against torn writes, compared as plain bytes.
        guard computed.elementsEqual(stored) else { return .failure(Invalid(text: "slot at \(start): the checksum fails")) }
        return .success((sequence, payload))
    }

    private static func checksum(_ header: Data, _ payload: Data) -> Data {
        var hash = SHA256()
        hash.update(data: header)
        hash.update(data: payload)
        return Data(hash.finalize().prefix(checksumSize))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func readU32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset ..< offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func readU64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset ..< offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
