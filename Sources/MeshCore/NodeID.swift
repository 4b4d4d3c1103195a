/// A node's stable wire identity: 16 bytes derived from its identity key (PROTOCOL.md §2.2).
///
/// Written as 32 lowercase hex digits. Ordered bytewise, which the duplicate-link tie-break
/// uses (§4.7). Equal when the bytes are equal. This type is thread-safe.
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number of bytes in a node id.
    public static let byteCount = 16

    /// The 16 bytes.
    public let bytes: [UInt8]

    /// Creates a node id from its bytes.
    /// - Parameter bytes: exactly 16 bytes.
    /// - Throws: ``CoreError`` `malformedNodeID` for any other length.
    public init(bytes: some Collection<UInt8>) throws(CoreError) {
        guard bytes.count == Self.byteCount else {
            throw .malformedNodeID("node id of \(bytes.count) bytes; expected \(Self.byteCount)")
        }
        self.bytes = Array(bytes)
    }

    /// Parses 32 hex digits (either case).
    /// - Parameter hex: the text form.
    /// - Throws: ``CoreError`` `malformedNodeID` naming what was wrong.
    public init(hex: String) throws(CoreError) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 2 * Self.byteCount else {
            throw .malformedNodeID("node id \"\(hex.prefix(40))\" has \(utf8.count) characters; expected 32 hex digits")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        var index = 0
        while index < utf8.count {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else {
                throw .malformedNodeID("node id \"\(hex)\" contains a character that is not a hex digit")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// 16 random bytes from the system's generator: the form of message and packet ids too
    /// (PROTOCOL.md §6.1, §13.1).
    public static func random() -> NodeID {
        var generator = SystemRandomNumberGenerator()
        return try! NodeID(bytes: (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The 32 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The hex form.
    public var description: String { hex }

    /// The first 8 hex digits, for display where the whole id is too long.
    public var shortHex: String { String(hex.prefix(8)) }

    /// Bytewise order.
    public static func < (lhs: NodeID, rhs: NodeID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
