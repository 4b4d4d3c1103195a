import Crypto
import Foundation
import MeshTestSupport
@testable import MeshTrust
import Testing

/// `Protocol/vectors/trust.json`, written by the independent `Protocol/reference/trust.py`.
@Suite("trust vectors")
struct TrustVectorTests {
    struct Vectors: Decodable {
        struct Rotation: Decodable {
            var old_key: String, new_key: String, issued_ms: UInt64, signed_bytes: String
            var old_signature: String, new_signature: String
        }
        var alice_identity_private: String, bob_identity_private: String, bob_new_identity_private: String
        var alice_half: String, bob_half: String, safety_number: String
        var rotation: Rotation
    }

    static func load() throws -> Vectors { try JSONDecoder().decode(Vectors.self, from: VectorFiles.data("trust")) }
    static func key(_ hex: String) throws -> Curve25519.Signing.PrivateKey { try .init(rawRepresentation: Hex.decode(hex)) }

    @Test("each half and the safety number match the independent implementation, in either order")
    func safetyNumber() throws {
        let v = try Self.load()
        let alice = try Self.key(v.alice_identity_private).publicKey
        let bob = try Self.key(v.bob_identity_private).publicKey
        #expect(SafetyNumber.half(alice) == v.alice_half)
        #expect(SafetyNumber.half(bob) == v.bob_half)
        #expect(SafetyNumber(alice, bob).digits == v.safety_number)
        #expect(SafetyNumber(bob, alice) == SafetyNumber(alice, bob))
        #expect(SafetyNumber(alice, bob).grouped.split(separator: " ").count == 12)
        #expect(SafetyNumber(alice, Curve25519.Signing.PrivateKey().publicKey) != SafetyNumber(alice, bob))
    }

    @Test("the rotation statement's signed bytes match; our statement and theirs both verify")
    func rotation() throws {
        let v = try Self.load()
        let old = try Self.key(v.bob_identity_private)
        let new = try Self.key(v.bob_new_identity_private)
        let ours = try KeyRotation(retiring: old, for: new, issuedAtMilliseconds: v.rotation.issued_ms)
        #expect(KeyRotation.signedBytes(oldKey: ours.oldKey, newKey: ours.newKey, issued: ours.issuedAtMilliseconds)
                == Data(try Hex.decode(v.rotation.signed_bytes)))
        let theirs = KeyRotation(oldKey: Data(try Hex.decode(v.rotation.old_key)), newKey: Data(try Hex.decode(v.rotation.new_key)),
                                 issuedAtMilliseconds: v.rotation.issued_ms,
                                 oldSignature: Data(try Hex.decode(v.rotation.old_signature)),
                                 newSignature: Data(try Hex.decode(v.rotation.new_signature)))
        #expect(try theirs.verified().new.rawRepresentation == new.publicKey.rawRepresentation)
        #expect(try ours.verified().old.rawRepresentation == old.publicKey.rawRepresentation)
    }
}

@Suite("key rotation")
struct KeyRotationTests {
    @Test("a statement is refused when either signature is missing, swapped or over other bytes")
    func forged() throws {
        let old = Curve25519.Signing.PrivateKey(), new = Curve25519.Signing.PrivateKey()
        let statement = try KeyRotation(retiring: old, for: new, issuedAtMilliseconds: 1)
        let mallory = Curve25519.Signing.PrivateKey()
        // Mallory claims to be old's successor without old's signature.
        let claim = try KeyRotation(retiring: mallory, for: new, issuedAtMilliseconds: 1)
        var stolen = claim
        stolen.oldKey = old.publicKey.rawRepresentation
        #expect(throws: TrustError(.invalidStatement, "")) { try stolen.verified() }
        // Mallory names itself as old's successor, reusing old's signature over other bytes.
        var hijack = statement
        hijack.newKey = mallory.publicKey.rawRepresentation
        #expect(throws: TrustError(.invalidStatement, "")) { try hijack.verified() }
        var redated = statement
        redated.issuedAtMilliseconds = 2
        #expect(throws: TrustError(.invalidStatement, "")) { try redated.verified() }
        var swapped = statement
        (swapped.oldSignature, swapped.newSignature) = (statement.newSignature, statement.oldSignature)
        #expect(throws: TrustError(.invalidStatement, "")) { try swapped.verified() }
        var same = statement
        same.newKey = same.oldKey
        #expect(throws: TrustError(.invalidStatement, "")) { try same.verified() }
        var short = statement
        short.oldKey = Data(count: 31)
        #expect(throws: TrustError(.invalidStatement, "")) { try short.verified() }
        _ = try statement.verified()
    }
}
