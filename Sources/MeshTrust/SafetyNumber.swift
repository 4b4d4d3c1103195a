import Crypto
import Foundation

/// The number two users compare to know that each holds the other's real identity key
/// (PROTOCOL.md §20.1): 60 digits, the same on both sides, shown as 12 groups of 5.
///
/// Each side's half is 30 digits from its Ed25519 identity key: `h = SHA-512(0x00 0x00 ‖ key ‖
/// "meshchat-safety-number")`, then 5,200 times `h = SHA-512(h ‖ key)`; the first 30 bytes in six
/// 5-byte big-endian chunks, each modulo 100,000 as 5 digits. The number is the two halves in
/// ascending order (as strings). The iterations make a second key with the same half about
/// 2^100 tries of 5,201 hashes each to find, so the number is short enough to read aloud and too costly to forge.
public struct SafetyNumber: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-512 iterations per half.
    public static let iterations = 5_200
    static let label = Data("meshchat-safety-number".utf8)

    /// The 60 digits.
    public let digits: String

    /// The safety number of two identities (commutative: either order gives the same number).
    /// - Parameters:
    ///   - mine: one Ed25519 identity public key (32 raw bytes).
    ///   - theirs: the other.
    public init(_ mine: Curve25519.Signing.PublicKey, _ theirs: Curve25519.Signing.PublicKey) {
        let halves = [Self.half(mine), Self.half(theirs)].sorted()
        digits = halves.joined()
    }

    /// A safety number as written down or received (60 decimal digits; spaces are ignored).
    /// - Parameter digits: the digits.
    /// - Returns: `nil` unless there are exactly 60 digits and nothing else but spaces.
    public init?(digits: String) {
        let plain = digits.filter { $0 != " " }
        guard plain.count == 60, plain.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        self.digits = plain
    }

    /// One identity's 30 digits (also shown on its own as the key's fingerprint).
    /// - Parameter key: an Ed25519 identity public key.
    /// - Returns: 30 decimal digits.
    public static func half(_ key: Curve25519.Signing.PublicKey) -> String {
        let raw = key.rawRepresentation
        var hash = Data(SHA512.hash(data: Data([0, 0]) + raw + label))
        for _ in 0..<iterations { hash = Data(SHA512.hash(data: hash + raw)) }
        let bytes = [UInt8](hash)
        return (0..<6).map { chunk in
            let value = bytes[chunk * 5 ..< chunk * 5 + 5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let text = String(value)
            return String(repeating: "0", count: 5 - text.count) + text
        }.joined()
    }

    /// One identity's 30 digits from its raw key bytes.
    /// - Parameter rawKey: 32 bytes of an Ed25519 public key.
    /// - Returns: 30 decimal digits, or `nil` when the bytes are not a key.
    public static func half(rawKey: Data) -> String? {
        (try? Curve25519.Signing.PublicKey(rawRepresentation: rawKey)).map(half)
    }

    /// 12 groups of 5 digits separated by spaces, for reading aloud or side by side.
    public var grouped: String {
        stride(from: 0, to: digits.count, by: 5).map { start in
            let from = digits.index(digits.startIndex, offsetBy: start)
            return String(digits[from ..< digits.index(from, offsetBy: 5)])
        }.joined(separator: " ")
    }

    /// The grouped digits.
    public var description: String { grouped }
}
