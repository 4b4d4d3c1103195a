import Crypto
import Foundation
import MeshNoise
import MeshTestSupport
import Testing

/// One Noise test vector in the cacophony JSON shape (also used by `Fixtures/xx-fixture.json`).
///
/// All byte strings are lowercase hex. Messages alternate initiator → responder, starting with
/// the initiator; those after the handshake are transport messages under the split cipher states
/// (for one-way patterns every transport message goes initiator → responder).
struct NoiseVector: Decodable, Sendable, CustomTestStringConvertible {
    struct Message: Codable, Sendable {
        var payload: String
        var ciphertext: String
    }

    var protocolName: String
    var initPrologue: String
    var initEphemeral: String
    var initStatic: String?
    var initRemoteStatic: String?
    var initPSKs: [String]?
    var respPrologue: String
    var respEphemeral: String?
    var respStatic: String?
    var respRemoteStatic: String?
    var respPSKs: [String]?
    var handshakeHash: String
    var messages: [Message]

    enum CodingKeys: String, CodingKey {
        case protocolName = "protocol_name"
        case initPrologue = "init_prologue", initEphemeral = "init_ephemeral", initStatic = "init_static"
        case initRemoteStatic = "init_remote_static", initPSKs = "init_psks"
        case respPrologue = "resp_prologue", respEphemeral = "resp_ephemeral", respStatic = "resp_static"
        case respRemoteStatic = "resp_remote_static", respPSKs = "resp_psks"
        case handshakeHash = "handshake_hash"
        case messages
    }

    var testDescription: String { protocolName }
}

/// The file shape: `{"vectors": [...]}` (other top-level keys, like a comment, are ignored).
struct NoiseVectorFile: Decodable {
    var vectors: [NoiseVector]
}

extension Data {
    /// Hex text to bytes; test vectors are trusted, so bad hex is a test failure.
    init(testHex hex: String) throws {
        self = try Data(hex: hex)
    }
}

extension NoiseVector {
    /// Builds the initiator and responder exactly as the vector describes.
    func makeHandshakes() throws -> (initiator: NoiseHandshake, responder: NoiseHandshake) {
        func privateKey(_ hex: String?) throws -> Curve25519.KeyAgreement.PrivateKey? {
            try hex.map { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Data(testHex: $0)) }
        }
        func publicKey(_ hex: String?) throws -> Curve25519.KeyAgreement.PublicKey? {
            try hex.map { try Curve25519.KeyAgreement.PublicKey(rawRepresentation: Data(testHex: $0)) }
        }
        func psks(_ hexes: [String]?) throws -> [SymmetricKey] {
            try (hexes ?? []).map { SymmetricKey(data: try Data(testHex: $0)) }
        }
        let initiator = try NoiseHandshake(
            protocolName: protocolName, initiator: true, prologue: try Data(testHex: initPrologue),
            staticKey: try privateKey(initStatic), remoteStaticKey: try publicKey(initRemoteStatic),
            presharedKeys: try psks(initPSKs), ephemeralKey: try privateKey(initEphemeral)
        )
        let responder = try NoiseHandshake(
            protocolName: protocolName, initiator: false, prologue: try Data(testHex: respPrologue),
            staticKey: try privateKey(respStatic), remoteStaticKey: try publicKey(respRemoteStatic),
            presharedKeys: try psks(respPSKs), ephemeralKey: try privateKey(respEphemeral)
        )
        return (initiator, responder)
    }

    /// Runs every message of the vector through a fresh initiator/responder pair and checks each
    /// ciphertext, each decrypted payload and the handshake hash byte for byte.
    func verify() throws {
        var (initiator, responder) = try makeHandshakes()
        let pattern = try NoiseProtocolName(protocolName).pattern
        let handshakeCount = pattern.messages.count
        var transport: (initiator: (send: NoiseCipherState, receive: NoiseCipherState),
                        responder: (send: NoiseCipherState, receive: NoiseCipherState))?

        for (index, message) in messages.enumerated() {
            let payload = try Data(testHex: message.payload)
            let ciphertext: Data
            let decrypted: Data
            if index < handshakeCount {
                #expect(initiator.isMyTurnToWrite == (index % 2 == 0), "message \(index)")
                #expect(responder.isMyTurnToWrite == (index % 2 == 1), "message \(index)")
                if index % 2 == 0 {
                    ciphertext = try initiator.writeMessage(payload: payload)
                    decrypted = try responder.readMessage(ciphertext)
                } else {
                    ciphertext = try responder.writeMessage(payload: payload)
                    decrypted = try initiator.readMessage(ciphertext)
                }
                if index == handshakeCount - 1 {
                    #expect(initiator.isComplete && responder.isComplete)
                    #expect(initiator.handshakeHash.hexString == handshakeHash, "initiator handshake hash")
                    #expect(responder.handshakeHash.hexString == handshakeHash, "responder handshake hash")
                    transport = (try initiator.split(), try responder.split())
                }
            } else {
                guard var states = transport else { throw VectorError("transport message before the handshake ended") }
                if pattern.isOneWay || index % 2 == 0 {
                    ciphertext = try states.initiator.send.encrypt(payload)
                    decrypted = try states.responder.receive.decrypt(ciphertext)
                } else {
                    ciphertext = try states.responder.send.encrypt(payload)
                    decrypted = try states.initiator.receive.decrypt(ciphertext)
                }
                transport = states
            }
            #expect(ciphertext.hexString == message.ciphertext, "ciphertext of message \(index)")
            #expect(decrypted == payload, "payload of message \(index)")
        }
        #expect(transport != nil, "the vector completes its handshake")
    }
}

struct VectorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
