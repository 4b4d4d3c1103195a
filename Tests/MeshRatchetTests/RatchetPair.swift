import Crypto
import Foundation
@testable import MeshRatchet
import MeshTestSupport

/// Two ends of a session started the way nodes start them: the responder's signed prekey, the X3DH
/// agreement, then both ratchets. Deterministic for a seed.
struct RatchetPair {
    var alice: DoubleRatchet
    var bob: DoubleRatchet
    var rng: SplitMix64
    /// The initiator's ephemeral public key (what a relay sees in the first messages).
    let ephemeral: Data
    let aliceStatic: Curve25519.KeyAgreement.PrivateKey
    let bobStatic: Curve25519.KeyAgreement.PrivateKey
    let bobPrekey: Curve25519.KeyAgreement.PrivateKey

    init(seed: UInt64 = 1, limits: RatchetLimits = RatchetLimits()) throws {
        var rng = SplitMix64(seed: seed)
        func key() throws -> Curve25519.KeyAgreement.PrivateKey {
            try .init(rawRepresentation: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        aliceStatic = try key()
        bobStatic = try key()
        bobPrekey = try key()
        let bobIdentity = Curve25519.Signing.PrivateKey()
        let signed = try SignedPrekey(id: 7, key: bobPrekey, identity: bobIdentity)
        let prekey = try signed.verified(by: bobIdentity.publicKey)
        let initiated = try PrekeyAgreement.initiate(identity: aliceStatic, responderIdentity: bobStatic.publicKey,
                                                     responderPrekey: prekey, ephemeral: try key())
        ephemeral = initiated.ephemeralKey
        alice = try DoubleRatchet(initiatorSecret: initiated.secret, responderRatchetKey: prekey,
                                  associatedData: initiated.associatedData, limits: limits, using: &rng)
        let responded = try PrekeyAgreement.respond(identity: bobStatic, prekey: bobPrekey,
                                                    initiatorIdentity: aliceStatic.publicKey,
                                                    initiatorEphemeral: try .init(rawRepresentation: initiated.ephemeralKey))
        bob = DoubleRatchet(responderSecret: responded.secret, ratchetKey: bobPrekey,
                            associatedData: responded.associatedData, limits: limits)
        self.rng = rng
    }

    mutating func aliceSends(_ text: String) throws -> RatchetMessage { try alice.encrypt(Data(text.utf8)) }
    mutating func bobSends(_ text: String) throws -> RatchetMessage { try bob.encrypt(Data(text.utf8)) }
    mutating func bobReads(_ message: RatchetMessage) throws -> String {
        String(decoding: try bob.decrypt(message, using: &rng), as: UTF8.self)
    }
    mutating func aliceReads(_ message: RatchetMessage) throws -> String {
        String(decoding: try alice.decrypt(message, using: &rng), as: UTF8.self)
    }
}
