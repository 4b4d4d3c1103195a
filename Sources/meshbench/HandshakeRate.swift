import Crypto
import Foundation
import MeshNoise

/// How many link handshakes one core completes per second, beside how many X25519 key agreements
/// it computes: the `handshakes_per_s` row of `meshbench suite` (issue 16).
///
/// A handshake here is `Noise_XX_25519_ChaChaPoly_SHA256` with both sides in this thread (three
/// messages: `ee`, `es` and `se` on both sides, six X25519 agreements, plus two fresh ephemeral keys)
/// plus what a meshchat link adds per side: one Ed25519 signature made and one verified (PROTOCOL.md
/// §2.4, §4.4). No sockets: it is the CPU a listener spends per accepted link, so that the ceiling
/// is below the X25519 rate ÷ 8 (six agreements and two key generations), less the signatures. The X25519 baseline is `Curve25519.KeyAgreement` on the same core.
enum HandshakeRate {
    /// Handshakes per second over `seconds` of wall time.
    static func handshakes(seconds: Double = 1) throws -> Double {
        let name = try NoiseProtocolName("Noise_XX_25519_ChaChaPoly_SHA256")
        let (initiatorStatic, responderStatic) = (Curve25519.KeyAgreement.PrivateKey(), Curve25519.KeyAgreement.PrivateKey())
        let (initiatorIdentity, responderIdentity) = (Curve25519.Signing.PrivateKey(), Curve25519.Signing.PrivateKey())
        let prologue = Data("meshchat\u{0}\u{4}\u{0}meshchat".utf8)
        return try rate(seconds: seconds) {
            var initiator = try NoiseHandshake(protocolName: name, initiator: true, prologue: prologue, staticKey: initiatorStatic)
            var responder = try NoiseHandshake(protocolName: name, initiator: false, prologue: prologue, staticKey: responderStatic)
            _ = try responder.readMessage(try initiator.writeMessage())
            // Each side proves its identity key over its static key (a signature the other verifies).
            let responderProof = try responderIdentity.signature(for: responderStatic.publicKey.rawRepresentation)
            _ = try initiator.readMessage(try responder.writeMessage(payload: responderProof))
            guard responderIdentity.publicKey.isValidSignature(responderProof, for: responderStatic.publicKey.rawRepresentation) else {
                throw HandshakeRateError()
            }
            let initiatorProof = try initiatorIdentity.signature(for: initiatorStatic.publicKey.rawRepresentation)
            _ = try responder.readMessage(try initiator.writeMessage(payload: initiatorProof))
            guard initiatorIdentity.publicKey.isValidSignature(initiatorProof, for: initiatorStatic.publicKey.rawRepresentation) else {
                throw HandshakeRateError()
            }
            _ = try initiator.split()
            _ = try responder.split()
        }
    }

    /// X25519 key agreements per second (a fresh private key's agreement with a fixed public key).
    static func x25519(seconds: Double = 1) throws -> Double {
        let peer = Curve25519.KeyAgreement.PrivateKey().publicKey
        let mine = Curve25519.KeyAgreement.PrivateKey()
        return try rate(seconds: seconds) { _ = try mine.sharedSecretFromKeyAgreement(with: peer) }
    }

    /// How many times per second `body` runs, over `seconds` of wall time (in batches of 16).
    static func rate(seconds: Double, _ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .milliseconds(Int64(seconds * 1000))
        var count = 0
        while clock.now < end {
            for _ in 0..<16 { try body() }
            count += 16
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    struct HandshakeRateError: Error, CustomStringConvertible {
        var description: String { "a handshake's identity proof did not verify" }
    }
}
