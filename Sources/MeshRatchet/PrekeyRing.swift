import Crypto
import struct Foundation.Data

/// A node's own signed prekeys' private keys (PROTOCOL.md §19.1, §19.7): the current one, which its
/// adverts and handshakes publish, and the recent ones that sessions may still begin on (a first
/// message can wait days in an outbox). A value; time is a parameter (Unix milliseconds).
///
/// A new prekey replaces the current one every ``rotationInterval``; older ones are deleted once
/// ``retention`` has passed since they stopped being current (the forward secrecy of first messages
/// rests on that deletion), and at most ``maxKeys`` are kept.
public struct PrekeyRing: Sendable {
    /// One prekey.
    struct Key: Sendable {
        var id: UInt32
        var privateKey: Curve25519.KeyAgreement.PrivateKey
        /// When it became current (Unix ms).
        var createdAt: Int64
    }

    /// How long a prekey stays current: 7 days.
    public static let rotationInterval: Int64 = 7 * 24 * 3_600_000
    /// How long a replaced prekey is kept: 30 days after it was replaced.
    public static let retention: Int64 = 30 * 24 * 3_600_000
    /// The most prekeys kept, the current one included.
    public static let maxKeys = 6

    /// Newest (current) first; never empty.
    var keys: [Key]

    /// A ring with one new prekey.
    /// - Parameters:
    ///   - now: the wall clock, Unix milliseconds.
    ///   - generator: the source of the key and its id.
    public init(now: Int64, using generator: inout some RandomNumberGenerator) {
        keys = [Key(id: UInt32(truncatingIfNeeded: generator.next()), privateKey: DoubleRatchet.newRatchetKey(using: &generator),
                    createdAt: now)]
    }

    /// The current prekey's id.
    public var currentID: UInt32 { keys[0].id }

    /// The current prekey's private key.
    public var current: Curve25519.KeyAgreement.PrivateKey { keys[0].privateKey }

    /// The ids held, current first.
    public var ids: [UInt32] { keys.map(\.id) }

    /// The private key of a prekey this node still holds.
    /// - Parameter id: the prekey id a packet names.
    /// - Returns: the key, or `nil` when it was deleted or never existed.
    public func privateKey(id: UInt32) -> Curve25519.KeyAgreement.PrivateKey? {
        keys.first { $0.id == id }?.privateKey
    }

    /// The current prekey, signed by the node's identity key for its adverts and handshakes.
    /// - Parameter identity: the node's Ed25519 identity key.
    /// - Returns: the signed prekey.
    public func signed(by identity: Curve25519.Signing.PrivateKey) -> SignedPrekey {
        // Signing with a valid Ed25519 key does not fail.
        try! SignedPrekey(id: keys[0].id, key: keys[0].privateKey, identity: identity)
    }

    /// Replaces the current prekey when it is due and deletes the expired ones.
    /// - Parameters:
    ///   - now: the wall clock, Unix milliseconds (a clock set back by less than an interval keeps the
    ///     current key; by more, or a key dated far ahead, is replaced).
    ///   - generator: the source of a new key.
    /// - Returns: true when the current prekey changed (publish the new one).
    public mutating func rotateIfDue(now: Int64, using generator: inout some RandomNumberGenerator) -> Bool {
        var rotated = false
        let age = now.subtractingReportingOverflow(keys[0].createdAt)
        // A prekey dated more than an interval ahead of the clock (a stored date from a clock that
        // was wrong, or a clock set far back) would otherwise stay current until that date.
        if age.overflow || age.partialValue >= Self.rotationInterval || age.partialValue <= -Self.rotationInterval {
            var id = keys[0].id &+ 1
            while keys.contains(where: { $0.id == id }) { id &+= 1 }
            keys.insert(Key(id: id, privateKey: DoubleRatchet.newRatchetKey(using: &generator), createdAt: now), at: 0)
            rotated = true
        }
        // A key stopped being current when the next newer one was made.
        var kept = [keys[0]]
        for index in keys.indices.dropFirst() {
            let replacedAt = keys[index - 1].createdAt
            let since = now.subtractingReportingOverflow(replacedAt)
            if !since.overflow, since.partialValue >= Self.retention { continue }
            kept.append(keys[index])
        }
        keys = Array(kept.prefix(Self.maxKeys))
        return rotated
    }

    /// The version byte of ``serialized``.
    static let storageVersion: UInt8 = 1

    /// The ring as bytes, to be stored where only this node's user can read it (private keys):
    /// version 1, the count, then per key its id, private key and creation time.
    public var serialized: Data {
        var writer = StateWriter()
        writer.byte(Self.storageVersion)
        writer.byte(UInt8(clamping: keys.count))
        for key in keys {
            writer.u32(key.id)
            writer.bytes(key.privateKey.rawRepresentation)
            writer.i64(key.createdAt)
        }
        return writer.data
    }

    /// Restores a ring.
    /// - Parameter data: stored bytes (checked).
    /// - Throws: ``RatchetError`` `malformed`.
    public init(serialized data: Data) throws(RatchetError) {
        guard data.count <= 2 + Self.maxKeys * 44 else {
            throw RatchetError(.malformed, "a stored prekey ring of \(data.count) bytes")
        }
        var reader = StateReader(data)
        guard try reader.byte() == Self.storageVersion else {
            throw RatchetError(.malformed, "a stored prekey ring of an unknown version")
        }
        let count = Int(try reader.byte())
        guard (1...Self.maxKeys).contains(count) else {
            throw RatchetError(.malformed, "a stored prekey ring of \(count) keys (1–\(Self.maxKeys))")
        }
        var keys: [Key] = []
        for _ in 0..<count {
            let id = try reader.u32()
            guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try reader.bytes(32)) else {
                throw RatchetError(.malformed, "a stored prekey with an invalid private key")
            }
            keys.append(Key(id: id, privateKey: key, createdAt: try reader.i64()))
        }
        guard reader.remaining == 0 else {
            throw RatchetError(.malformed, "\(reader.remaining) bytes after a stored prekey ring")
        }
        self.keys = keys
    }
}
