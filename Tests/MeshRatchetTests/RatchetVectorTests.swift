import Crypto
import Foundation
@testable import MeshRatchet
import MeshTestSupport
import Testing

/// `Protocol/vectors/ratchet.json`, written by the independent Python implementation in
/// `Protocol/reference/ratchet.py`, reproduced byte for byte.
@Suite("ratchet vectors")
struct RatchetVectorTests {
    struct Vectors: Decodable {
        struct Prekey: Decodable { var id: UInt32; var `public`: String; var signature: String }
        struct Step: Decodable {
            var sender: String?
            var plaintext: String?
            var message: String?
            var delayed: Bool?
            var deliver: Int?
        }
        var bob_identity_private: String
        var signed_prekey: Prekey
        var alice_static_private: String
        var bob_static_private: String
        var bob_prekey_private: String
        var alice_ephemeral_private: String
        var shared_secret: String
        var associated_data: String
        var alice_ratchet_private: [String]
        var bob_ratchet_private: [String]
        var steps: [Step]
        struct ChainStep: Decodable { var chain_key: String; var next_chain_key: String; var message_key: String }
        var chain_step: ChainStep
    }

    @Test("one chain step (KDF_CK, §19.3: the first ChaCha20 block under the chain key) matches the vector")
    func chainStep() throws {
        let v = try JSONDecoder().decode(Vectors.self, from: VectorFiles.data("ratchet"))
        let (next, message) = RatchetKDF.chain(SymmetricKey(data: try Hex.decode(v.chain_step.chain_key)))
        #expect(next.withUnsafeBytes { Data($0) } == Data(try Hex.decode(v.chain_step.next_chain_key)))
        #expect(message.withUnsafeBytes { Data($0) } == Data(try Hex.decode(v.chain_step.message_key)))
        // RFC 8439 §2.3.2's all-zero key: its first block is the published keystream.
        let zero = RatchetKDF.chain(SymmetricKey(data: Data(count: 32)))
        #expect((zero.chain.withUnsafeBytes { Data($0) } + zero.message.withUnsafeBytes { Data($0) }).hexString
            == "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    }

    @Test("the signed prekey, the X3DH secret and every message of the conversation match the vectors")
    func conversation() throws {
        let v = try JSONDecoder().decode(Vectors.self, from: VectorFiles.data("ratchet"))
        func x(_ hex: String) throws -> Curve25519.KeyAgreement.PrivateKey { try .init(rawRepresentation: try Hex.decode(hex)) }
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: try Hex.decode(v.bob_identity_private))
        let prekey = SignedPrekey(id: v.signed_prekey.id, publicKey: Data(try Hex.decode(v.signed_prekey.public)),
                                  signature: Data(try Hex.decode(v.signed_prekey.signature)))
        let prekeyPublic = try prekey.verified(by: identity.publicKey)
        let bobPrekey = try x(v.bob_prekey_private)
        #expect(prekeyPublic.rawRepresentation == bobPrekey.publicKey.rawRepresentation)
        let initiated = try PrekeyAgreement.initiate(identity: x(v.alice_static_private),
                                                     responderIdentity: x(v.bob_static_private).publicKey,
                                                     responderPrekey: prekeyPublic, ephemeral: x(v.alice_ephemeral_private))
        #expect(initiated.secret.withUnsafeBytes { Data($0) } == Data(try Hex.decode(v.shared_secret)))
        #expect(initiated.associatedData == Data(try Hex.decode(v.associated_data)))
        let responded = try PrekeyAgreement.respond(identity: x(v.bob_static_private), prekey: bobPrekey,
                                                    initiatorIdentity: x(v.alice_static_private).publicKey,
                                                    initiatorEphemeral: .init(rawRepresentation: initiated.ephemeralKey))
        #expect(responded.secret == initiated.secret)

        var aliceKeys = try ReplayedKeys(hex: v.alice_ratchet_private)
        var bobKeys = try ReplayedKeys(hex: v.bob_ratchet_private)
        var alice = try DoubleRatchet(initiatorSecret: initiated.secret, responderRatchetKey: prekeyPublic,
                                      associatedData: initiated.associatedData, using: &aliceKeys)
        var bob = DoubleRatchet(responderSecret: responded.secret, ratchetKey: bobPrekey, associatedData: responded.associatedData)
        for (index, step) in v.steps.enumerated() {
            if let deliver = step.deliver {
                let late = v.steps[deliver]
                let message = try RatchetMessage(decoding: Data(try Hex.decode(try #require(late.message))))
                let plaintext = late.sender == "alice" ? try bob.decrypt(message, using: &bobKeys)
                                                       : try alice.decrypt(message, using: &aliceKeys)
                #expect(String(decoding: plaintext, as: UTF8.self) == late.plaintext, "step \(index)")
                continue
            }
            let text = Data(try #require(step.plaintext).utf8)
            let sent = step.sender == "alice" ? try alice.encrypt(text) : try bob.encrypt(text)
            #expect(sent.encoded == Data(try Hex.decode(try #require(step.message))), "step \(index)")
            if step.delayed != true {
                let plaintext = step.sender == "alice" ? try bob.decrypt(sent, using: &bobKeys)
                                                       : try alice.decrypt(sent, using: &aliceKeys)
                #expect(plaintext == text, "step \(index)")
            }
        }
    }
}
