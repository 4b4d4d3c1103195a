import Crypto
import struct Foundation.Data

/// The clear header of a ratchet message: the sender's current ratchet public key, the length of
/// its previous sending chain, and the message's number in the current one. 40 bytes on the wire:
/// `dh (32) ‖ pn (u32, big-endian) ‖ n (u32, big-endian)`. It is authenticated (part of the AEAD's
/// associated data), not encrypted: relays learn that messages belong to one conversation, which
/// the routed header (origin, destination) already tells them.
public struct RatchetHeader: Hashable, Sendable {
    /// The encoded size.
    public static let byteCount = 40

    /// The sender's ratchet public key (32 raw bytes).
    public var ratchetKey: Data
    /// How many messages the sender sent in its previous sending chain.
    public var previousCount: UInt32
    /// This message's number in the sender's current chain, from 0.
    public var number: UInt32

    /// Creates a header.
    /// - Parameters:
    ///   - ratchetKey: 32 raw bytes of an X25519 public key.
    ///   - previousCount: the previous chain's length.
    ///   - number: the message number.
    public init(ratchetKey: Data, previousCount: UInt32, number: UInt32) {
        self.ratchetKey = ratchetKey
        self.previousCount = previousCount
        self.number = number
    }

    /// The 40-byte encoding.
    public var encoded: Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.byteCount)
        encode(into: &bytes)
        return Data(bytes)
    }

    /// Appends the 40-byte encoding.
    func encode(into bytes: inout [UInt8]) {
        bytes.append(bytesOf: ratchetKey)
        withUnsafeBytes(of: previousCount.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Decodes a header.
    /// - Parameter data: exactly ``byteCount`` bytes (a slice or not).
    /// - Throws: ``RatchetError`` `malformed` for any other size, or a ratchet key that is not a valid X25519 key.
    public init(decoding data: Data) throws(RatchetError) {
        guard data.count == Self.byteCount else {
            throw RatchetError(.malformed, "a ratchet header of \(data.count) bytes (expected \(Self.byteCount))")
        }
        let start = data.startIndex
        let key = Data(data[start..<(start + 32)])
        guard (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: key)) != nil else {
            throw RatchetError(.malformed, "a ratchet header with an invalid public key")
        }
        self.ratchetKey = key
        self.previousCount = data[(start + 32)..<(start + 36)].reduce(0) { $0 << 8 | UInt32($1) }
        self.number = data[(start + 36)..<(start + 40)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
