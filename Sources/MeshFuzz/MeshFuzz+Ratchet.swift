import Crypto
import Foundation
import MeshRatchet

extension MeshFuzz {
    /// A fixed session (fixed keys): the responder's end after it has read one message, and one more
    /// message for it, so that fuzz inputs hit a live ratchet.
    private static let ratchetSession: (bob: DoubleRatchet, next: RatchetMessage)? = {
        func key(_ byte: UInt8) -> Curve25519.KeyAgreement.PrivateKey? {
            try? .init(rawRepresentation: [UInt8](repeating: byte, count: 32))
        }
        guard let alice = key(1), let bob = key(2), let prekey = key(3), let ephemeral = key(4),
              let initiated = try? PrekeyAgreement.initiate(identity: alice, responderIdentity: bob.publicKey,
                                                            responderPrekey: prekey.publicKey, ephemeral: ephemeral),
              let responded = try? PrekeyAgreement.respond(identity: bob, prekey: prekey, initiatorIdentity: alice.publicKey,
                                                           initiatorEphemeral: ephemeral.publicKey) else { return nil }
        var generator = CountingGenerator()
        guard var sender = try? DoubleRatchet(initiatorSecret: initiated.secret, responderRatchetKey: prekey.publicKey,
                                              associatedData: initiated.associatedData, using: &generator) else { return nil }
        var receiver = DoubleRatchet(responderSecret: responded.secret, ratchetKey: prekey, associatedData: responded.associatedData)
        guard let first = try? sender.encrypt(Data("first".utf8)),
              (try? receiver.decrypt(first, using: &generator)) != nil,
              let next = try? sender.encrypt(Data("next".utf8)) else { return nil }
        return (receiver, next)
    }()

    /// End-to-end ratchet input (§19): the input as a ratchet message to a live session (a failure
    /// must leave the session unchanged; a decoded message re-encodes to its bytes), and as a stored
    /// session state (refused or restored, never a trap; a restored one stores to the same bytes).
    @Sendable static func fuzzRatchet(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let restored = try? DoubleRatchet(serialized: data) {
            precondition(restored.serialized == data, "a stored ratchet state does not store back to its bytes")
        }
        guard let session = ratchetSession, let message = try? RatchetMessage(decoding: data) else { return }
        precondition(message.encoded == data, "a ratchet message does not re-encode to its bytes")
        var bob = session.bob
        let before = bob.serialized
        var generator = CountingGenerator()
        if (try? bob.decrypt(message, using: &generator)) == nil {
            precondition(bob.serialized == before, "a refused ratchet message changed the session")
        }
        // The genuine next message still opens unless the input was that very message.
        if message != session.next {
            precondition((try? bob.decrypt(session.next, using: &generator)) != nil, "a refused message broke the session")
        }
    }
}

/// Deterministic "randomness" for the fuzz session, so that a kept input replays exactly.
private struct CountingGenerator: RandomNumberGenerator {
    var state: UInt64 = 0x6d65_7368_6368_6174
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return state
    }
}
