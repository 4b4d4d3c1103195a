import Crypto
import Foundation

/// A node's statement that it replaced its identity key (PROTOCOL.md §20.2), signed by the old key
/// (so that only the key's holder can hand its name, trust and history on) and by the new key (so
/// that nobody can claim another's key as its successor).
///
/// Signed bytes: `"meshchat-key-rotation:" ‖ old identity key (32) ‖ new identity key (32) ‖ issued
/// (u64 big-endian, milliseconds since 1970)`.
public struct KeyRotation: Hashable, Sendable {
    static let prefix = Data("meshchat-key-rotation:".utf8)

    /// The identity key being retired (32 raw bytes).
    public var oldKey: Data
    /// The identity key that replaces it (32 raw bytes).
    public var newKey: Data
    /// When it was made, in milliseconds since 1970 (a later statement about the same old key wins).
    public var issuedAtMilliseconds: UInt64
    /// The old key's Ed25519 signature (64 bytes).
    public var oldSignature: Data
    /// The new key's Ed25519 signature (64 bytes).
    public var newSignature: Data

    /// Makes and signs a statement.
    /// - Parameters:
    ///   - old: the identity key being retired.
    ///   - new: the new identity key.
    ///   - issuedAtMilliseconds: the wall clock now.
    /// - Throws: when signing fails (not expected with valid keys).
    public init(retiring old: Curve25519.Signing.PrivateKey, for new: Curve25519.Signing.PrivateKey,
                issuedAtMilliseconds: UInt64) throws {
        oldKey = old.publicKey.rawRepresentation
        newKey = new.publicKey.rawRepresentation
        self.issuedAtMilliseconds = issuedAtMilliseconds
        let bytes = Self.signedBytes(oldKey: oldKey, newKey: newKey, issued: issuedAtMilliseconds)
        oldSignature = try old.signature(for: bytes)
        newSignature = try new.signature(for: bytes)
    }

    /// A statement as received, to be checked with ``verified()``.
    public init(oldKey: Data, newKey: Data, issuedAtMilliseconds: UInt64, oldSignature: Data, newSignature: Data) {
        self.oldKey = oldKey
        self.newKey = newKey
        self.issuedAtMilliseconds = issuedAtMilliseconds
        self.oldSignature = oldSignature
        self.newSignature = newSignature
    }

    /// The two keys, once both signatures are checked.
    /// - Returns: the old and the new identity key.
    /// - Throws: ``TrustError`` `invalidStatement` when a key is malformed, the keys are equal, or a
    ///   signature does not verify.
    public func verified() throws(TrustError) -> (old: Curve25519.Signing.PublicKey, new: Curve25519.Signing.PublicKey) {
        guard oldKey != newKey,
              let old = try? Curve25519.Signing.PublicKey(rawRepresentation: oldKey),
              let new = try? Curve25519.Signing.PublicKey(rawRepresentation: newKey) else {
            throw TrustError(.invalidStatement, "a key rotation with malformed or equal keys")
        }
        let bytes = Self.signedBytes(oldKey: oldKey, newKey: newKey, issued: issuedAtMilliseconds)
        guard old.isValidSignature(oldSignature, for: bytes) else {
            throw TrustError(.invalidStatement, "a key rotation the old key did not sign")
        }
        guard new.isValidSignature(newSignature, for: bytes) else {
            throw TrustError(.invalidStatement, "a key rotation the new key did not sign")
        }
        return (old, new)
    }

    static func signedBytes(oldKey: Data, newKey: Data, issued: UInt64) -> Data {
        var data = prefix + oldKey + newKey
        withUnsafeBytes(of: issued.bigEndian) { data.append(contentsOf: $0) }
        return data
    }
}

/// Why a trust operation failed.
public struct TrustError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Hashable, Sendable {
        /// A key rotation statement that does not verify.
        case invalidStatement
        /// A stored name book that is damaged.
        case malformed
    }

    /// What kind of failure; equality compares only this.
    public let code: Code
    /// What failed.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    public static func == (lhs: TrustError, rhs: TrustError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
