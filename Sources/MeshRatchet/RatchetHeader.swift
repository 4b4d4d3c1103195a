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
    /// - Throws: ``RatchetError`` `malformed` for any other size.
    ///
    /// Any 32 bytes are an X25519 public key here: swift-crypto's `PublicKey(rawRepresentation:)`,
    /// which an earlier version called on every header, checks only the size. A message that starts a
    /// new chain still goes through it before its key is used (``DoubleRatchet``'s ratchet step).
    public init(decoding data: Data) throws(RatchetError) {
        guard data.count == Self.byteCount else {
            throw RatchetError(.malformed, "a ratchet header of \(data.count) bytes (expected \(Self.byteCount))")
        }
        // One access to the 40 bytes (the size checked above): the key is copied out, the two
        // counts read big-endian.
        (ratchetKey, previousCount, number) = data.withUnsafeBytes { raw in
            (Data(UnsafeRawBufferPointer(rebasing: raw[0 ..< 32])), Self.u32(raw, at: 32), Self.u32(raw, at: 36))
        }
    }

    /// The big-endian `UInt32` at `offset` of `raw`.
    static func u32(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset <= raw.count - 4)
        return UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
