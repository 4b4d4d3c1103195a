import Crypto
import struct Foundation.Data

extension DoubleRatchet {
    /// The version byte of ``serialized``: 2 since protocol version 6 (its chain and message keys are
    /// derived with ChaCha20, §19.3).
    static let storageVersion: UInt8 = 2
    /// The version byte of states protocol version 5 stored: their chain keys belong to its HMAC
    /// derivations, so they are refused (the node begins new sessions, §19.7) rather than kept.
    static let protocolFiveStorageVersion: UInt8 = 1

    /// The whole state as bytes, to be stored where only this node's user can read it (it holds
    /// private and chain keys): version 2, then the root key, our ratchet private key, the other
    /// end's ratchet key, both chain keys (each present or not), the three counters, the limits,
    /// the associated data and the skipped keys in storage order.
    public var serialized: Data {
        var writer = StateWriter()
        writer.byte(Self.storageVersion)
        writer.key(rootKey)
        writer.bytes(sendingRatchet.rawRepresentation)
        writer.optional(receivingRatchet)
        writer.optional(sendingChain.map { $0.withUnsafeBytes { Data($0) } })
        writer.optional(receivingChain.map { $0.withUnsafeBytes { Data($0) } })
        writer.u32(sentCount)
        writer.u32(receivedCount)
        writer.u32(previousSentCount)
        writer.u32(limits.maxSkip)
        writer.u32(UInt32(clamping: limits.maxStoredSkipped))
        writer.u32(UInt32(clamping: associatedData.count))
        writer.bytes(associatedData)
        let live = skippedOrder.filter { skipped[$0] != nil }
        writer.u32(UInt32(clamping: live.count))
        for index in live {
            writer.bytes(index.ratchetKey)
            writer.u32(index.number)
            if let key = skipped[index] { writer.key(key) }
        }
        return writer.data
    }

    /// Restores a state from ``serialized`` bytes.
    /// - Parameter data: the stored bytes (checked: they may have been damaged or tampered with on disk).
    /// - Throws: ``RatchetError`` `malformed` for an unknown version (also version 1, a state protocol
    ///   version 5 stored: its keys would derive other keys than its peer's), a truncated or
    ///   oversized record, or invalid keys.
    public init(serialized data: Data) throws(RatchetError) {
        var reader = StateReader(data)
        let version = try reader.byte()
        guard version != Self.protocolFiveStorageVersion else {
            throw RatchetError(.malformed, "a stored ratchet state of protocol version 5 (other key derivations): begun again")
        }
        guard version == Self.storageVersion else {
            throw RatchetError(.malformed, "a stored ratchet state of an unknown version \(version)")
        }
        rootKey = SymmetricKey(data: try reader.bytes(32))
        guard let ratchet = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try reader.bytes(32)) else {
            throw RatchetError(.malformed, "a stored ratchet state with an invalid private key")
        }
        sendingRatchet = ratchet
        sendingRatchetKey = ratchet.publicKey.rawRepresentation
        receivingRatchet = try reader.optional()
        sendingChain = try reader.optional().map { SymmetricKey(data: $0) }
        receivingChain = try reader.optional().map { SymmetricKey(data: $0) }
        sentCount = try reader.u32()
        receivedCount = try reader.u32()
        previousSentCount = try reader.u32()
        var limits = RatchetLimits()
        limits.maxSkip = try reader.u32()
        limits.maxStoredSkipped = Int(try reader.u32())
        // A damaged or edited file must not let a peer make this node derive or keep millions of keys.
        guard limits.maxSkip <= RatchetLimits.ceiling, limits.maxStoredSkipped <= RatchetLimits.ceiling else {
            throw RatchetError(.malformed, "a stored ratchet state with limits over \(RatchetLimits.ceiling)")
        }
        self.limits = limits
        let adCount = Int(try reader.u32())
        guard adCount <= 1024 else { throw RatchetError(.malformed, "stored associated data of \(adCount) bytes (maximum 1024)") }
        associatedData = try reader.bytes(adCount)
        let count = Int(try reader.u32())
        guard count <= limits.maxStoredSkipped, count <= reader.remaining / 68 else {
            throw RatchetError(.malformed, "a stored ratchet state with \(count) skipped keys")
        }
        for _ in 0..<count {
            let index = SkippedIndex(ratchetKey: try reader.bytes(32), number: try reader.u32())
            skipped[index] = SymmetricKey(data: try reader.bytes(32))
            skippedOrder.append(index)
        }
        guard reader.remaining == 0 else {
            throw RatchetError(.malformed, "\(reader.remaining) bytes after a stored ratchet state")
        }
    }
}

/// Appends the fields of a stored state.
struct StateWriter {
    var data = Data()
    mutating func byte(_ value: UInt8) { data.append(value) }
    mutating func bytes(_ value: Data) { data.append(value) }
    mutating func key(_ key: SymmetricKey) { key.withUnsafeBytes { data.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func optional(_ value: Data?) {
        if let value { byte(1); bytes(value) } else { byte(0) }
    }
}

/// Reads the fields of a stored state, checking every length (shared by the stored types of this module).
struct StateReader {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ data: Data) { bytes = [UInt8](data) }
    var remaining: Int { bytes.count - offset }

    mutating func bytes(_ count: Int) throws(RatchetError) -> Data {
        guard count >= 0, count <= remaining else {
            throw RatchetError(.malformed, "a stored ratchet state cut short at byte \(offset)")
        }
        defer { offset += count }
        return Data(bytes[offset ..< offset + count])
    }
    mutating func byte() throws(RatchetError) -> UInt8 { try bytes(1)[0] }
    mutating func u32() throws(RatchetError) -> UInt32 { try bytes(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws(RatchetError) -> UInt64 { try bytes(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func i64() throws(RatchetError) -> Int64 { Int64(bitPattern: try u64()) }
    mutating func optional() throws(RatchetError) -> Data? {
        switch try byte() {
        case 0: return nil
        case 1: return try bytes(32)
        default: throw RatchetError(.malformed, "a stored ratchet state with a bad presence flag")
        }
    }
}
