import Foundation

/// Lowercase hex encoding and decoding, as used by the vectors in `Protocol/vectors/`.
public enum Hex {
    /// An error decoding hex text.
    public struct DecodingError: Error, CustomStringConvertible, Equatable {
        /// What was wrong with the text.
        public let description: String
    }

    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lowercase hex, two digits per byte.
    /// - Parameter bytes: the bytes.
    /// - Returns: the hex text, e.g. `"00ff"` for `[0x00, 0xff]`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex text of either case.
    /// - Parameter text: an even number of hex digits, no separators.
    /// - Returns: the bytes.
    /// - Throws: ``DecodingError`` for an odd length or a character that is not a hex digit.
    public static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else {
            throw DecodingError(description: "hex text of odd length \(utf8.count)")
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else {
                throw DecodingError(description: "non-hex character near offset \(index) in \"\(text.prefix(64))\"")
            }
            out.append(high << 4 | low)
            index += 2
        }
        return out
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

extension Sequence where Element == UInt8 {
    /// The bytes as lowercase hex (see ``Hex/encode(_:)``).
    public var hexString: String { Hex.encode(self) }
}

extension Data {
    /// Decodes hex text of either case (see ``Hex/decode(_:)``).
    /// - Parameter hex: an even number of hex digits.
    /// - Throws: ``Hex/DecodingError``.
    public init(hex: String) throws(Hex.DecodingError) {
        self.init(try Hex.decode(hex))
    }
}

extension Array where Element == UInt8 {
    /// Decodes hex text of either case (see ``Hex/decode(_:)``).
    /// - Parameter hex: an even number of hex digits.
    /// - Throws: ``Hex/DecodingError``.
    public init(hex: String) throws(Hex.DecodingError) {
        self = try Hex.decode(hex)
    }
}
