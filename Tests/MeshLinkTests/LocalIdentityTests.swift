import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import Testing

/// Identity keys, node ids and static-key signatures (PROTOCOL.md §2); display names are MeshCoreTests'.
@Suite("LocalIdentity")
struct LocalIdentityTests {
    @Test("the node id is the first 16 bytes of SHA-256 of the identity public key")
    func nodeID() throws {
        for party in [FixedParty.alice, FixedParty.bob] {
            let identity = party.identity
            let digest = Array(SHA256.hash(data: party.signingKey.publicKey.rawRepresentation))
            #expect(identity.nodeID.bytes == Array(digest[0..<16]))
            #expect(identity.nodeID.hex.count == 32)
            #expect(LocalIdentity.nodeID(identityKey: party.signingKey.publicKey) == identity.nodeID)
        }
        // Generated identities have distinct ids; the static key does not enter the id.
        let signingKey = Curve25519.Signing.PrivateKey()
        let a = try LocalIdentity(signingKey: signingKey, staticKey: .init())
        let b = try LocalIdentity(signingKey: signingKey, staticKey: .init())
        #expect(a.nodeID == b.nodeID)
        #expect(try LocalIdentity.generate().nodeID != a.nodeID)
    }

    @Test("the static signature verifies over \"meshchat-noise-static-key:\" ‖ the static public key")
    func signatureVerifies() throws {
        let identity = try LocalIdentity.generate()
        #expect(identity.staticSignature.count == 64)
        #expect(LocalIdentity.verifyStaticSignature(
            identity.staticSignature, staticKey: identity.staticKey.publicKey, identityKey: identity.signingKey.publicKey))
        // Independently: plain Ed25519 over the documented message.
        let message = Data("meshchat-noise-static-key:".utf8) + identity.staticKey.publicKey.rawRepresentation
        #expect(identity.signingKey.publicKey.isValidSignature(identity.staticSignature, for: message))
    }

    @Test("verification fails for another static key, another identity key or an altered signature")
    func signatureRefused() throws {
        let identity = try LocalIdentity.generate()
        let other = try LocalIdentity.generate()
        #expect(!LocalIdentity.verifyStaticSignature(
            identity.staticSignature, staticKey: other.staticKey.publicKey, identityKey: identity.signingKey.publicKey))
        #expect(!LocalIdentity.verifyStaticSignature(
            identity.staticSignature, staticKey: identity.staticKey.publicKey, identityKey: other.signingKey.publicKey))
        var altered = identity.staticSignature
        altered[altered.startIndex] ^= 1
        #expect(!LocalIdentity.verifyStaticSignature(
            altered, staticKey: identity.staticKey.publicKey, identityKey: identity.signingKey.publicKey))
        #expect(!LocalIdentity.verifyStaticSignature(
            Data(), staticKey: identity.staticKey.publicKey, identityKey: identity.signingKey.publicKey))
    }

    @Test("Ed25519 signatures are deterministic (RFC 8032), which the handshake vector relies on")
    func deterministicSignatures() throws {
        let party = FixedParty.alice
        let first = party.identity.staticSignature
        let second = try LocalIdentity(signingKey: party.signingKey, staticKey: party.staticKey).staticSignature
        #expect(first == second)
        // RFC 8032 §7.1 test 1: the empty message under the secret key 9d61b19d….
        let rfcKey = try Curve25519.Signing.PrivateKey(rawRepresentation: try Data(hex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        #expect(rfcKey.publicKey.rawRepresentation.hexString == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(try rfcKey.signature(for: Data()).hexString
            == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
    }

    @Test("the description shows the node id and no key material")
    func description() {
        let identity = FixedParty.alice.identity
        #expect(identity.description == "LocalIdentity(\(identity.nodeID.hex))")
        #expect(!identity.description.contains(FixedParty.alice.identitySeed.hexString))
    }
}
