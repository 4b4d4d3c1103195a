import Crypto
import Foundation
@testable import MeshRatchet
import MeshTestSupport
import Testing

/// Forward secrecy and post-compromise security, as an attacker who recorded the traffic and
/// later stole a node's state would test them.
@Suite("double ratchet security properties")
struct RatchetSecurityTests {
    @Test("forward secrecy: the receiver's state taken later opens none of the recorded earlier lines")
    func forwardSecrecy() throws {
        var pair = try RatchetPair(seed: 11)
        var recorded: [RatchetMessage] = []
        for turn in 0..<4 {
            let line = try pair.aliceSends("recorded \(turn)")
            recorded.append(line)
            _ = try pair.bobReads(line)
            _ = try pair.aliceReads(pair.bobSends("ack \(turn)"))
        }
        // The attacker takes bob's whole state now (chain keys, ratchet keys, skipped keys).
        let stolen = pair.bob.serialized
        var rng = SplitMix64(seed: 99)
        for line in recorded {
            var attacker = try DoubleRatchet(serialized: stolen)
            #expect(throws: RatchetError.self) { try attacker.decrypt(line, using: &rng) }
        }
    }

    @Test("post-compromise security: with the sender's state stolen, lines after one round trip stay unreadable")
    func postCompromise() throws {
        var pair = try RatchetPair(seed: 12)
        _ = try pair.bobReads(pair.aliceSends("hello"))
        _ = try pair.aliceReads(pair.bobSends("hi"))
        // The attacker copies alice's state and, for good measure, reads along from now on.
        var attacker = try DoubleRatchet(serialized: pair.alice.serialized)
        var attackerRNG = SplitMix64(seed: 1234)
        // Until the next round trip the attacker can derive alice's sending keys…
        let exposed = try pair.aliceSends("exposed")
        let copy = try attacker.encrypt(Data("exposed".utf8))
        #expect(copy.header == exposed.header)
        _ = try pair.bobReads(exposed)
        // …one round trip later (bob's reply, alice's new chain from a fresh key), it cannot.
        let reply = try pair.bobSends("reply")
        _ = try pair.aliceReads(reply)
        _ = try? attacker.decrypt(reply, using: &attackerRNG)  // the attacker even sees bob's reply
        let healed = try pair.aliceSends("after the round trip")
        #expect(throws: RatchetError.self) { try attacker.decrypt(healed, using: &attackerRNG) }
        #expect(try pair.bobReads(healed) == "after the round trip")
    }

    @Test("a signed prekey verifies only against its owner's identity and only unmodified")
    func signedPrekey() throws {
        let owner = Curve25519.Signing.PrivateKey()
        let key = Curve25519.KeyAgreement.PrivateKey()
        let signed = try SignedPrekey(id: 3, key: key, identity: owner)
        #expect(try signed.verified(by: owner.publicKey).rawRepresentation == key.publicKey.rawRepresentation)
        #expect(throws: RatchetError(.invalidKey, "")) { try signed.verified(by: Curve25519.Signing.PrivateKey().publicKey) }
        var renumbered = signed
        renumbered.id = 4
        #expect(throws: RatchetError(.invalidKey, "")) { try renumbered.verified(by: owner.publicKey) }
        var swapped = signed
        swapped.publicKey = Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation
        #expect(throws: RatchetError(.invalidKey, "")) { try swapped.verified(by: owner.publicKey) }
        var short = signed
        short.signature = short.signature.prefix(10)
        #expect(throws: RatchetError(.invalidKey, "")) { try short.verified(by: owner.publicKey) }
    }

    @Test("an impostor with the prekey but not the responder's static key derives another secret")
    func impostor() throws {
        let alice = Curve25519.KeyAgreement.PrivateKey()
        let bob = Curve25519.KeyAgreement.PrivateKey()
        let prekey = Curve25519.KeyAgreement.PrivateKey()
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let initiated = try PrekeyAgreement.initiate(identity: alice, responderIdentity: bob.publicKey,
                                                     responderPrekey: prekey.publicKey, ephemeral: ephemeral)
        let mallory = try PrekeyAgreement.respond(identity: Curve25519.KeyAgreement.PrivateKey(), prekey: prekey,
                                                  initiatorIdentity: alice.publicKey, initiatorEphemeral: ephemeral.publicKey)
        let real = try PrekeyAgreement.respond(identity: bob, prekey: prekey,
                                               initiatorIdentity: alice.publicKey, initiatorEphemeral: ephemeral.publicKey)
        #expect(real.secret == initiated.secret)
        #expect(mallory.secret != initiated.secret)
        #expect(real.associatedData == initiated.associatedData)
    }
}
