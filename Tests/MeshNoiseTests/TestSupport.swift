import Crypto
import Foundation
import MeshNoise

extension NoiseError {
    /// An error to match with `#expect(throws:)`: equality compares codes only.
    static func expected(_ code: Code) -> NoiseError { NoiseError(code, "expected in test") }
}

/// Both sides of one handshake, for tests that pump them against each other.
struct HandshakePair {
    var initiator: NoiseHandshake
    var responder: NoiseHandshake
    var initiatorStatic: Curve25519.KeyAgreement.PrivateKey
    var responderStatic: Curve25519.KeyAgreement.PrivateKey

    /// A fresh pair with random static keys; the initiator knows the responder's static key
    /// only when the pattern's pre-message says so.
    init(
        _ protocolName: String = "Noise_XX_25519_ChaChaPoly_SHA256",
        initiatorPrologue: Data = Data("meshchat test".utf8),
        responderPrologue: Data = Data("meshchat test".utf8),
        presharedKeys: [SymmetricKey] = []
    ) throws {
        let name = try NoiseProtocolName(protocolName)
        initiatorStatic = Curve25519.KeyAgreement.PrivateKey()
        responderStatic = Curve25519.KeyAgreement.PrivateKey()
        initiator = try NoiseHandshake(
            protocolName: name, initiator: true, prologue: initiatorPrologue, staticKey: initiatorStatic,
            remoteStaticKey: name.pattern.needsRemoteStaticBeforehand(initiator: true) ? responderStatic.publicKey : nil,
            presharedKeys: presharedKeys
        )
        responder = try NoiseHandshake(
            protocolName: name, initiator: false, prologue: responderPrologue, staticKey: responderStatic,
            remoteStaticKey: name.pattern.needsRemoteStaticBeforehand(initiator: false) ? initiatorStatic.publicKey : nil,
            presharedKeys: presharedKeys
        )
    }

    /// Writes and reads messages alternately until both sides are complete; returns the messages.
    @discardableResult
    mutating func run(payloads: [Data] = []) throws -> [Data] {
        var messages: [Data] = []
        var index = 0
        while !initiator.isComplete || !responder.isComplete {
            let payload = index < payloads.count ? payloads[index] : Data()
            let message: Data
            let received: Data
            if initiator.isMyTurnToWrite {
                message = try initiator.writeMessage(payload: payload)
                received = try responder.readMessage(message)
            } else {
                message = try responder.writeMessage(payload: payload)
                received = try initiator.readMessage(message)
            }
            guard received == payload else { throw VectorError("payload \(index) changed in transit") }
            messages.append(message)
            index += 1
        }
        return messages
    }
}

extension Data {
    /// A copy with one bit flipped at `byte` (counted from `startIndex`).
    func flippingBit(atByte byte: Int, bit: Int = 0) -> Data {
        var copy = Data(self)
        copy[copy.startIndex + byte] ^= UInt8(1) << UInt8(bit)
        return copy
    }
}
