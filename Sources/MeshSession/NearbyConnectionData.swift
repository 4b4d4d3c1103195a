import Crypto
import struct Foundation.Data
#if canImport(Glibc)
import Glibc
#endif
import MeshWire
import NIOCore

/// What one node needs to connect to another without discovery: its addresses, its port and the
/// identity it must prove (Multipeer's `nearbyConnectionData`, PROTOCOL.md §4.10).
///
/// Get this node's from ``Session/nearbyConnectionData(for:)``, carry it any way you like (its
/// ``rawRepresentation``, or its ``text`` typed, pasted or in a QR code), and hand it to
/// ``Session/connectPeer(withNearbyConnectionData:redial:)`` on the other node. That node dials
/// the addresses in order and keeps the link only if the handshake proves the identity named here.
///
/// The decoders (``init(rawRepresentation:)``, ``init(text:)``) take untrusted bytes: every field
/// is bounded and checked, and anything else throws a ``DecodingError``; they never trap.
///
/// This type is thread-safe (a value).
public struct NearbyConnectionData: Sendable, Hashable, CustomStringConvertible {
    /// The node id the link must prove (PROTOCOL.md §2.2).
    public let nodeID: NodeID
    /// The TCP port, 1–65,535.
    public let port: Int
    /// The IPv4 and IPv6 addresses to dial, in order: 1–``maxAddresses``, no duplicates, none
    /// unspecified (`0.0.0.0`, `::`) or multicast.
    public let addresses: [String]

    /// The most addresses one piece of data carries (§4.10).
    public static let maxAddresses = 8
    /// The format version this implementation writes and reads (§4.10).
    public static let version: UInt8 = 1
    /// The prefix of ``text``.
    public static let textPrefix = "meshchat:"
    /// The longest ``text`` the decoder reads (longer texts are refused before decoding).
    public static let maxTextLength = 300
    /// Bytes of the binary form's check value (the start of SHA-256 over what precedes it).
    static let checkLength = 4
    static let headerLength = 1 + NodeID.byteCount + 2 + 1

    /// Why bytes or text are not nearby connection data.
    ///
    /// Two errors are equal when their codes are equal.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong.
        public enum Code: String, Hashable, Sendable, CaseIterable {
            /// The text does not start with `meshchat:`, or is longer than ``NearbyConnectionData/maxTextLength``.
            case notConnectionText
            /// A character outside the base32 alphabet, or a base32 length or tail that no bytes encode.
            case invalidBase32
            /// Fewer bytes than the smallest form, more than the largest, or not the length the fields say.
            case invalidLength
            /// A version this implementation does not read.
            case unsupportedVersion
            /// The check value does not match (a typo, or the data was cut or altered).
            case checksumMismatch
            /// Port 0.
            case invalidPort
            /// No addresses, or more than ``NearbyConnectionData/maxAddresses``.
            case invalidAddressCount
            /// An address family other than 4 (IPv4) or 6 (IPv6).
            case unknownAddressFamily
            /// An unspecified, multicast or duplicate address, or one that does not parse.
            case invalidAddress
        }

        /// What was wrong.
        public let code: Code
        /// A sentence naming the field, the limit and the value.
        public let message: String

        /// The message.
        public var description: String { message }

        init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// Equality compares codes only.
        public static func == (lhs: DecodingError, rhs: DecodingError) -> Bool { lhs.code == rhs.code }
        /// Hashes the code only.
        public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    }

    /// Creates connection data from parts.
    /// - Parameters:
    ///   - nodeID: the identity the link must prove.
    ///   - port: the TCP port, 1–65,535.
    ///   - addresses: IPv4 or IPv6 addresses (no brackets, no scope), 1–``maxAddresses``.
    /// - Throws: ``DecodingError`` `invalidPort`, `invalidAddressCount` or `invalidAddress`.
    public init(nodeID: NodeID, port: Int, addresses: [String]) throws(DecodingError) {
        var packed: [[UInt8]] = []
        for address in addresses {
            guard let bytes = Self.pack(address) else {
                throw DecodingError(.invalidAddress, "\"\(address.prefix(64))\" is not an IPv4 or IPv6 address")
            }
            packed.append(bytes)
        }
        try self.init(nodeID: nodeID, port: port, packed: packed)
    }

    private init(nodeID: NodeID, port: Int, packed: [[UInt8]]) throws(DecodingError) {
        guard (1...Int(UInt16.max)).contains(port) else {
            throw DecodingError(.invalidPort, "port \(port) is outside 1–65535")
        }
        guard (1...Self.maxAddresses).contains(packed.count) else {
            throw DecodingError(.invalidAddressCount, "\(packed.count) addresses; expected 1–\(Self.maxAddresses)")
        }
        var seen = Set<[UInt8]>()
        var texts: [String] = []
        for bytes in packed {
            guard let text = Self.unpack(bytes) else {
                throw DecodingError(.invalidAddress, "an address of \(bytes.count) bytes")
            }
            if let problem = Self.problem(with: bytes) {
                throw DecodingError(.invalidAddress, "address \(text) is \(problem)")
            }
            guard seen.insert(bytes).inserted else {
                throw DecodingError(.invalidAddress, "address \(text) appears twice")
            }
            texts.append(text)
        }
        self.nodeID = nodeID
        self.port = port
        self.addresses = texts
    }

    // MARK: Binary form

    /// The binary form (§4.10): version, node id, port, addresses, check value; 29–160 bytes.
    public var rawRepresentation: Data {
        var bytes: [UInt8] = [Self.version]
        bytes.append(contentsOf: nodeID.bytes)
        bytes.append(UInt8(truncatingIfNeeded: port >> 8))
        bytes.append(UInt8(truncatingIfNeeded: port))
        bytes.append(UInt8(truncatingIfNeeded: addresses.count))
        for address in addresses {
            // Checked at init, so it packs.
            let packed = Self.pack(address) ?? []
            bytes.append(packed.count == 4 ? 4 : 6)
            bytes.append(contentsOf: packed)
        }
        bytes.append(contentsOf: Self.check(bytes))
        return Data(bytes)
    }

    /// Decodes the binary form (§4.10).
    /// - Parameter rawRepresentation: untrusted bytes.
    /// - Throws: ``DecodingError`` naming the first field that is wrong.
    public init(rawRepresentation: Data) throws(DecodingError) {
        let bytes = [UInt8](rawRepresentation)
        let smallest = Self.headerLength + 1 + 4 + Self.checkLength
        let largest = Self.headerLength + Self.maxAddresses * 17 + Self.checkLength
        guard bytes.count >= smallest, bytes.count <= largest else {
            throw DecodingError(.invalidLength, "\(bytes.count) bytes; nearby connection data is \(smallest)–\(largest) bytes")
        }
        guard bytes[0] == Self.version else {
            throw DecodingError(.unsupportedVersion, "version \(bytes[0]); this node reads version \(Self.version)")
        }
        let body = bytes[0..<(bytes.count - Self.checkLength)]
        guard Self.check(body).elementsEqual(bytes[body.endIndex...]) else {
            throw DecodingError(.checksumMismatch, "the check value does not match: the data was mistyped, cut or altered")
        }
        // 16 bytes by the length check above.
        guard let nodeID = try? NodeID(bytes: bytes[1...NodeID.byteCount]) else {
            throw DecodingError(.invalidLength, "a node id shorter than \(NodeID.byteCount) bytes")
        }
        let port = Int(bytes[17]) << 8 | Int(bytes[18])
        let count = Int(bytes[19])
        guard (1...Self.maxAddresses).contains(count) else {
            throw DecodingError(.invalidAddressCount, "\(count) addresses; expected 1–\(Self.maxAddresses)")
        }
        var index = Self.headerLength
        var packed: [[UInt8]] = []
        for _ in 0..<count {
            guard index < body.endIndex else {
                throw DecodingError(.invalidLength, "the data ends inside address \(packed.count + 1) of \(count)")
            }
            let size: Int
            switch bytes[index] {
            case 4: size = 4
            case 6: size = 16
            case let family: throw DecodingError(.unknownAddressFamily, "address family \(family); expected 4 or 6")
            }
            guard body.endIndex - (index + 1) >= size else {
                throw DecodingError(.invalidLength, "the data ends inside address \(packed.count + 1) of \(count)")
            }
            packed.append(Array(bytes[(index + 1)..<(index + 1 + size)]))
            index += 1 + size
        }
        guard index == body.endIndex else {
            throw DecodingError(.invalidLength, "\(body.endIndex - index) bytes after the last address")
        }
        try self.init(nodeID: nodeID, port: port, packed: packed)
    }

    // MARK: Text form

    /// The text form (§4.10): `meshchat:` and the binary form in lowercase base32 (RFC 4648
    /// alphabet, no padding), e.g. 64 characters for one IPv4 address and loopback.
    public var text: String { Self.textPrefix + Base32.encode([UInt8](rawRepresentation)) }

    /// Decodes the text form (§4.10). Surrounding whitespace is ignored, and letters in either case.
    /// - Parameter text: untrusted text (typed, pasted, scanned).
    /// - Throws: ``DecodingError`` `notConnectionText`, `invalidBase32`, or any error of
    ///   ``init(rawRepresentation:)``.
    public init(text: String) throws(DecodingError) {
        guard text.utf8.count <= Self.maxTextLength else {
            throw DecodingError(.notConnectionText, "\(text.utf8.count) bytes of text; connection text is at most \(Self.maxTextLength)")
        }
        let trimmed = Substring(text).drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
        let body = String(trimmed)
        guard body.lowercased().hasPrefix(Self.textPrefix) else {
            throw DecodingError(.notConnectionText, "connection text starts with \(Self.textPrefix)")
        }
        guard let bytes = Base32.decode(body.utf8.dropFirst(Self.textPrefix.utf8.count)) else {
            throw DecodingError(.invalidBase32, "the text after \(Self.textPrefix) is not base32 (letters a–z and digits 2–7)")
        }
        try self.init(rawRepresentation: Data(bytes))
    }

    /// Whether a string looks like connection text (starts with `meshchat:`, any case), so that
    /// a front can tell it from `HOST:PORT` before decoding it.
    /// - Parameter text: any text.
    /// - Returns: `true` when ``init(text:)`` should be tried.
    public static func isConnectionText(_ text: String) -> Bool {
        text.drop { $0.isWhitespace }.lowercased().hasPrefix(textPrefix)
    }

    /// The text form.
    public var description: String { text }

    // MARK: Helpers

    private static func check(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Array(SHA256.hash(data: Array(bytes)).prefix(checkLength))
    }

    /// The 4 or 16 bytes of an IP address in text, or `nil`.
    static func pack(_ address: String) -> [UInt8]? {
        guard address.utf8.count <= 64, !address.contains("%") else { return nil }
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, address, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, address, &v6) == 1 { return v6 }
        return nil
    }

    /// The text of a 4- or 16-byte IP address, or `nil`.
    static func unpack(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        return (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: bytes), port: 0))?.ipAddress
    }

    /// Why an address cannot be dialled, or `nil`.
    private static func problem(with bytes: [UInt8]) -> String? {
        if bytes.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if bytes.count == 4, bytes[0] >= 224, bytes[0] <= 239 { return "multicast" }
        if bytes.count == 4, bytes.allSatisfy({ $0 == 255 }) { return "broadcast" }
        if bytes.count == 16, bytes[0] == 0xff { return "multicast" }
        return nil
    }
}

/// RFC 4648 base32 in lowercase without padding (§4.10).
enum Base32 {
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8 | Int(byte)) & 0xFFFF
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or `nil` for a character outside the alphabet (either case), a length no byte
    /// string encodes (1, 3 or 6 characters past a multiple of 8) or non-zero trailing bits.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard ![1, 3, 6].contains(text.count % 8) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 5 / 8)
        var buffer = 0
        var bits = 0
        for character in text {
            let value: Int
            switch character {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = Int(character - UInt8(ascii: "a"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = Int(character - UInt8(ascii: "A"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = Int(character - UInt8(ascii: "2")) + 26
            default: return nil
            }
            buffer = (buffer << 5 | value) & 0xFFFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8(truncatingIfNeeded: buffer >> (bits - 8)))
                bits -= 8
            }
        }
        // Canonical: the bits left over are zero.
        guard buffer & ((1 << bits) - 1) == 0 else { return nil }
        return out
    }
}
