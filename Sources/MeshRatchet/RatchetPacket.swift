import Crypto
import struct Foundation.Data

/// What starts a session: the fields of X3DH (§19.2) that the responder needs, carried in clear in
/// every message of a session its initiator sends until it has received a reply (PROTOCOL.md §19.6).
public struct PrekeyHeader: Hashable, Sendable {
    /// The id of the responder's signed prekey the initiator used.
    public var prekeyID: UInt32
    /// The initiator's ephemeral public key `EK_I` (32 raw bytes).
    public var ephemeralKey: Data
    /// The initiator's X25519 static key `IK_I` (32 raw bytes); the sealed plaintext binds it to the
    /// initiator's identity (§2.4).
    public var initiatorStaticKey: Data

    /// Creates a header.
    /// - Parameters:
    ///   - prekeyID: the responder's prekey id.
    ///   - ephemeralKey: `EK_I`, 32 bytes.
    ///   - initiatorStaticKey: `IK_I`, 32 bytes.
    public init(prekeyID: UInt32, ephemeralKey: Data, initiatorStaticKey: Data) {
        self.prekeyID = prekeyID
        self.ephemeralKey = ephemeralKey
        self.initiatorStaticKey = initiatorStaticKey
    }

    /// The session id both ends derive from it: the first 8 bytes of `EK_I`, big-endian.
    public var sessionID: UInt64 { RatchetPacket.u64(ephemeralKey.prefix(8)) }
}

/// The bytes of `Routed.sealed` in protocol version 3 (PROTOCOL.md §19.6): a Double Ratchet message
/// with what the receiver needs to find (or start) its session.
///
///     prekey message:  0x01 ‖ prekey id (u32) ‖ EK_I (32) ‖ IK_I (32) ‖ ratchet message
///     session message: 0x02 ‖ session id (u64) ‖ ratchet message
///
/// A ratchet message is `header (40) ‖ ciphertext ‖ tag (16)` (§19.3). Everything before the ratchet
/// message (the *prefix*) is authenticated with it.
public enum RatchetPacket: Hashable, Sendable {
    /// A message of a session whose initiator has not yet heard back: it can start the session.
    case prekey(PrekeyHeader, RatchetMessage)
    /// A message of an established session.
    case session(id: UInt64, RatchetMessage)

    /// The kind byte of a prekey message.
    public static let prekeyKind: UInt8 = 1
    /// The kind byte of a session message.
    public static let sessionKind: UInt8 = 2
    /// The smallest prekey message: kind, id, two keys, header and tag.
    public static let minimumPrekeyCount = 1 + 4 + 32 + 32 + RatchetHeader.byteCount + 16
    /// The smallest session message: kind, id, header and tag.
    public static let minimumSessionCount = 1 + 8 + RatchetHeader.byteCount + 16
    /// Bytes a prekey message adds to its plaintext.
    public static let prekeyOverhead = minimumPrekeyCount
    /// Bytes a session message adds to its plaintext.
    public static let sessionOverhead = minimumSessionCount

    /// The session it belongs to.
    public var sessionID: UInt64 {
        switch self {
        case .prekey(let header, _): header.sessionID
        case .session(let id, _): id
        }
    }

    /// The ratchet message it carries.
    public var message: RatchetMessage {
        switch self {
        case .prekey(_, let message), .session(_, let message): message
        }
    }

    /// The bytes before the ratchet message, authenticated with it.
    public var prefix: Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(69)
        appendPrefix(to: &bytes)
        return Data(bytes)
    }

    /// Appends ``prefix``.
    func appendPrefix(to data: inout [UInt8]) {
        switch self {
        case .prekey(let header, _): Self.appendPrefix(prekey: header, sessionID: header.sessionID, to: &data)
        case .session(let id, _): Self.appendPrefix(prekey: nil, sessionID: id, to: &data)
        }
    }

    /// Appends the prefix of a prekey message (with `prekey`) or of a session message.
    static func appendPrefix(prekey: PrekeyHeader?, sessionID: UInt64, to data: inout [UInt8]) {
        if let prekey {
            data.append(Self.prekeyKind)
            Self.append(prekey.prekeyID, to: &data)
            data.append(bytesOf: prekey.ephemeralKey)
            data.append(bytesOf: prekey.initiatorStaticKey)
        } else {
            data.append(Self.sessionKind)
            Self.append(sessionID, to: &data)
        }
    }

    /// The packet's bytes.
    public var encoded: Data {
        switch self {
        case .prekey(let header, let message): Self.encoded(prekey: header, sessionID: header.sessionID, message)
        case .session(let id, let message): Self.encoded(prekey: nil, sessionID: id, message)
        }
    }

    /// `prefix ‖ header ‖ ciphertext` of a prekey message (with `prekey`) or of a session message,
    /// built in one array and copied once (faster here than writing into a `Data` of that size).
    static func encoded(prekey: PrekeyHeader?, sessionID: UInt64, _ message: RatchetMessage) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(minimumPrekeyCount + message.ciphertext.count)
        appendPrefix(prekey: prekey, sessionID: sessionID, to: &bytes)
        message.header.encode(into: &bytes)
        bytes.append(bytesOf: message.ciphertext)
        return Data(bytes)
    }

    /// Decodes a packet, checking every size and key (the bytes are a stranger's).
    /// - Parameter data: `Routed.sealed`.
    /// - Throws: ``RatchetError`` `malformed`.
    public init(decoding data: Data) throws(RatchetError) {
        // Offsets from `start`: `data` may be a slice. The message's ciphertext shares `data`'s bytes.
        let start = data.startIndex
        guard let kind = data.first else { throw RatchetError(.malformed, "an empty sealed packet") }
        switch kind {
        case Self.prekeyKind:
            guard data.count >= Self.minimumPrekeyCount else {
                throw RatchetError(.malformed, "a prekey message of \(data.count) bytes (at least \(Self.minimumPrekeyCount))")
            }
            let ephemeral = Data(data[(start + 5)..<(start + 37)])
            let initiator = Data(data[(start + 37)..<(start + 69)])
            guard (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: ephemeral)) != nil,
                  (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: initiator)) != nil else {
                throw RatchetError(.malformed, "a prekey message with an invalid key")
            }
            let header = PrekeyHeader(prekeyID: UInt32(truncatingIfNeeded: Self.u64(data[(start + 1)..<(start + 5)])),
                                      ephemeralKey: ephemeral, initiatorStaticKey: initiator)
            self = .prekey(header, try RatchetMessage(decoding: data[(start + 69)...]))
        case Self.sessionKind:
            guard data.count >= Self.minimumSessionCount else {
                throw RatchetError(.malformed, "a session message of \(data.count) bytes (at least \(Self.minimumSessionCount))")
            }
            let id = data.withUnsafeBytes { Self.u64($0, at: 1) }  // the size checked above
            self = .session(id: id, try RatchetMessage(decoding: data[(start + 9)...]))
        default:
            throw RatchetError(.malformed, "a sealed packet of unknown kind \(kind)")
        }
    }

    /// The session id and ratchet header of an encoded session message, read without decoding (or
    /// copying) the rest: what a node charges a packet's work by before opening it (§13.11).
    /// - Parameter data: the packet's bytes, as ``init(decoding:)`` takes them.
    /// - Returns: `nil` for another kind, a packet too short, or an invalid header.
    static func sessionHeader(of data: Data) -> (id: UInt64, header: RatchetHeader)? {
        let start = data.startIndex
        guard data.first == sessionKind, data.count >= minimumSessionCount else { return nil }
        let headerStart = start + 9
        guard let header = try? RatchetHeader(decoding: data[headerStart..<(headerStart + RatchetHeader.byteCount)]) else { return nil }
        return (data.withUnsafeBytes { u64($0, at: 1) }, header)
    }

    /// The big-endian `UInt64` at `offset` of `raw`.
    static func u64(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        precondition(offset >= 0 && offset <= raw.count - 8)
        return UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    static func u64(_ bytes: some Collection<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func append<T: FixedWidthInteger>(_ value: T, to data: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}

extension [UInt8] {
    /// Appends `data`'s bytes in one copy (`append(contentsOf:)` with a `Data` also builds its iterator).
    mutating func append(bytesOf data: Data) {
        data.withUnsafeBytes { append(contentsOf: $0) }
    }
}

/// Copies byte buffers one after the other into a buffer sized for them; a copy past its end traps
/// (a programming error: every caller sizes the buffer from the parts it copies).
struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// Copies `bytes` at the current offset and moves past them.
    mutating func put(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= buffer.count - offset)
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset ..< offset + bytes.count]).copyMemory(from: bytes)
        offset += bytes.count
    }
}
