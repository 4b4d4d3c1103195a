import Crypto
import Foundation
@testable import MeshRatchet
import MeshTestSupport
import Testing

@Suite("double ratchet")
struct DoubleRatchetTests {
    @Test("both ends agree through X3DH; lines go both ways across many turns")
    func conversation() throws {
        var pair = try RatchetPair()
        #expect(!pair.bob.canSend)
        for turn in 0..<20 {
            for i in 0..<(turn % 3 + 1) {
                let text = "alice \(turn).\(i)"
                #expect(try pair.bobReads(pair.aliceSends(text)) == text)
            }
            #expect(pair.bob.canSend)
            let reply = "bob \(turn)"
            #expect(try pair.aliceReads(pair.bobSends(reply)) == reply)
        }
    }

    @Test("every message uses a new key and the ratchet key changes at each turn of the conversation")
    func keysChange() throws {
        var pair = try RatchetPair()
        let first = try pair.aliceSends("one")
        let second = try pair.aliceSends("one")
        #expect(first.header.ratchetKey == second.header.ratchetKey)
        #expect(first.ciphertext != second.ciphertext)
        #expect((first.header.number, second.header.number) == (0, 1))
        _ = try pair.bobReads(first)
        _ = try pair.bobReads(second)
        let reply = try pair.bobSends("two")
        _ = try pair.aliceReads(reply)
        let third = try pair.aliceSends("three")
        #expect(third.header.ratchetKey != first.header.ratchetKey)
        #expect(third.header.previousCount == 2)
        #expect(third.header.number == 0)
    }

    @Test("out-of-order and lost messages: late ones open from skipped keys, lost ones cost nothing")
    func outOfOrder() throws {
        var pair = try RatchetPair(seed: 2)
        let messages = try (0..<6).map { try pair.aliceSends("m\($0)") }
        #expect(try pair.bobReads(messages[3]) == "m3")
        #expect(try pair.bobReads(messages[0]) == "m0")
        // Across a turn: bob answers, alice starts a new chain, then an old one arrives.
        _ = try pair.aliceReads(pair.bobSends("ok"))
        let next = try pair.aliceSends("new chain")
        #expect(try pair.bobReads(next) == "new chain")
        #expect(try pair.bobReads(messages[5]) == "m5")
        #expect(try pair.bobReads(messages[1]) == "m1")
        // m2 and m4 are lost for good; nothing waits for them.
    }

    @Test("a message opened once is refused the second time (replay), and the state is unchanged")
    func replay() throws {
        var pair = try RatchetPair(seed: 3)
        let message = try pair.aliceSends("once")
        _ = try pair.bobReads(message)
        let before = pair.bob.serialized
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(message) }
        #expect(pair.bob.serialized == before)
        let late = try pair.aliceSends("late")
        let skippedOne = try pair.aliceSends("skipping")
        _ = try pair.bobReads(skippedOne)
        _ = try pair.bobReads(late)
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(late) }
    }

    @Test("a tampered message, header or additional data fails and leaves the receiver's state as it was")
    func tamper() throws {
        var pair = try RatchetPair(seed: 4)
        let message = try pair.aliceSends("secret")
        let before = pair.bob.serialized
        var flipped = message
        flipped.ciphertext[flipped.ciphertext.startIndex] ^= 1
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(flipped) }
        var renumbered = message
        renumbered.header.number = 1
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(renumbered) }
        var rekeyed = message
        rekeyed.header.ratchetKey = Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(rekeyed) }
        #expect(throws: RatchetError(.authenticationFailed, "")) {
            _ = try pair.bob.decrypt(message, additionalData: Data([1]), using: &pair.rng)
        }
        #expect(pair.bob.serialized == before)
        #expect(try pair.bobReads(message) == "secret")
    }

    @Test("a number far ahead is refused before any key is derived; stored skipped keys stay bounded")
    func skipLimits() throws {
        var limits = RatchetLimits()
        limits.maxSkip = 50
        limits.maxStoredSkipped = 60
        var pair = try RatchetPair(seed: 5, limits: limits)
        var far = try pair.aliceSends("x")
        far.header.number = 51
        #expect(throws: RatchetError(.tooManySkipped, "")) { try pair.bobReads(far) }
        var huge = far
        huge.header.number = UInt32.max
        #expect(throws: RatchetError.self) { try pair.bobReads(huge) }
        // Skip 50 in each of two chains (the first holds "x" as number 0): 100 skipped keys, of which
        // only the newest 60 are kept.
        let sent = try (1...50).map { try pair.aliceSends("a\($0)") }
        _ = try pair.bobReads(sent[49])
        _ = try pair.aliceReads(pair.bobSends("turn"))
        let second = try (0...50).map { try pair.aliceSends("b\($0)") }
        _ = try pair.bobReads(second[50])
        #expect(try pair.bobReads(second[0]) == "b0")
        #expect(throws: RatchetError(.authenticationFailed, "")) { try pair.bobReads(sent[0]) }  // forgotten
        #expect(try pair.bobReads(sent[48]) == "a49")  // among the newest kept
    }

    @Test("the responder cannot send before it has heard from the initiator")
    func responderWaits() throws {
        var pair = try RatchetPair(seed: 6)
        #expect(throws: RatchetError(.notReadyToSend, "")) { try pair.bobSends("too early") }
    }

    @Test("a message from another session does not open")
    func foreignSession() throws {
        var one = try RatchetPair(seed: 7)
        var two = try RatchetPair(seed: 8)
        let message = try one.aliceSends("for one")
        #expect(throws: RatchetError(.authenticationFailed, "")) { try two.bobReads(message) }
    }
}
