import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// `Protocol/vectors/handshake-retry.json` (PROTOCOL.md §4.11, §11): alice offers AESGCM then
/// ChaChaPoly and guesses AESGCM, bob offers ChaChaPoly only; bob answers with a RETRY, alice writes
/// message 1 again (a second fixed ephemeral key, the retry in the prologue) and the handshake ends
/// on ChaChaPoly. Same identities and keys as `handshake.json`.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.RetryVectorTests`.
struct RetryVector: Codable, Equatable {
    struct Frame: Codable, Equatable {
        var name: String
        var from: String
        var payload: String
        var frame: String
    }

    var description: String
    var initiatorSuites: [String]
    var responderSuites: [String]
    var retryEphemeralPrivateKey: String
    var retryEphemeralPublicKey: String
    var protocolName: String
    var prologue: String
    var frames: [Frame]
    var handshakeHash: String

    static let descriptionText = """
        A handshake with a RETRY (PROTOCOL.md §4.11) between the fixed identities and keys of handshake.json: alice \
        (initiator) offers AESGCM then ChaChaPoly and writes message 1 with AESGCM; bob (responder) offers ChaChaPoly \
        only and answers with RETRY naming suite 1; alice writes message 1 again with ChaChaPoly, the ephemeral key \
        retryEphemeralPrivateKey and retry_of 2, under the prologue with the retry appended; messages 2 and 3 follow as \
        usual. frames: every frame in order, whole (5-byte header included), with the plaintext payload of each \
        HANDSHAKE frame (the RETRY's payload is its body). protocolName, prologue and handshakeHash are the retried \
        handshake's.
        """

    /// The second ephemeral key of alice: 0xc0….
    static let retryEphemeralSeed: [UInt8] = pattern(from: 0xc0)

    static func compute() throws -> RetryVector {
        let (alice, bob) = (FixedParty.alice, FixedParty.bob)
        let retryKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: retryEphemeralSeed)
        var initiator = try HandshakeStateMachine(
            role: .initiator, configuration: alice.configuration(suites: [.aesGCM, .chaChaPoly]),
            ephemeralKey: alice.ephemeralKey, retryEphemeralKey: retryKey)
        var responder = try HandshakeStateMachine(
            role: .responder, configuration: bob.configuration(suites: [.chaChaPoly]), ephemeralKey: bob.ephemeralKey)
        let first = try #require(initiator.start().sentFrame)
        let retry = try #require(responder.receivedFrame(first).sentFrame)
        let again = try #require(initiator.receivedFrame(retry).sentFrame)
        let message2 = try #require(responder.receivedFrame(again).sentFrame)
        guard case .established(let link, let message3?) = initiator.receivedFrame(message2),
              case .established(let responderLink, nil) = responder.receivedFrame(message3)
        else { throw VectorError("the retried handshake did not complete") }
        #expect(link.suite == .chaChaPoly && responderLink.suite == .chaChaPoly)
        #expect(link.handshakeHash == responderLink.handshakeHash)
        let hello = { (suites: [CipherSuite], suite: CipherSuite, retryOf: CipherSuite?) -> String in
            var hello = HelloPayload()
            hello.protocolVersion = HandshakeStateMachine.protocolVersion
            hello.serviceType = "meshchat"
            hello.suites = suites.map { UInt32($0.rawValue) }
            hello.suite = UInt32(suite.rawValue)
            hello.retryOf = UInt32(retryOf?.rawValue ?? 0)
            return hello.encoded.hexString
        }
        let offer: [CipherSuite] = [.aesGCM, .chaChaPoly]
        return RetryVector(
            description: descriptionText,
            initiatorSuites: offer.map(\.description),
            responderSuites: [CipherSuite.chaChaPoly.description],
            retryEphemeralPrivateKey: retryEphemeralSeed.hexString,
            retryEphemeralPublicKey: retryKey.publicKey.rawRepresentation.hexString,
            protocolName: CipherSuite.chaChaPoly.noiseProtocol,
            prologue: HandshakeStateMachine.prologue(serviceType: "meshchat", retry: (.aesGCM, .chaChaPoly)).hexString,
            frames: [
                Frame(name: "message1", from: "initiator", payload: hello(offer, .aesGCM, nil), frame: frameBytes(first).hexString),
                Frame(name: "retry", from: "responder", payload: "01", frame: frameBytes(retry).hexString),
                Frame(name: "message1_again", from: "initiator", payload: hello(offer, .chaChaPoly, .aesGCM),
                      frame: frameBytes(again).hexString),
                Frame(name: "message2", from: "responder", payload: identityPayload(
                    bob.identity, displayName: bob.name, udpPort: UInt32(bob.udpPort), prekey: bob.signedPrekey,
                    suites: [.chaChaPoly]).hexString, frame: frameBytes(message2).hexString),
                Frame(name: "message3", from: "initiator", payload: identityPayload(
                    alice.identity, displayName: alice.name, udpPort: UInt32(alice.udpPort), prekey: alice.signedPrekey,
                    suites: offer).hexString, frame: frameBytes(message3).hexString),
            ],
            handshakeHash: link.handshakeHash.hexString)
    }

    var json: OrderedJSON {
        .keyed([
            "description": .string(description),
            "initiatorSuites": .array(initiatorSuites.map(OrderedJSON.string)),
            "responderSuites": .array(responderSuites.map(OrderedJSON.string)),
            "retryEphemeralPrivateKey": .string(retryEphemeralPrivateKey),
            "retryEphemeralPublicKey": .string(retryEphemeralPublicKey),
            "protocolName": .string(protocolName),
            "prologue": .string(prologue),
            "frames": .array(frames.map {
                .keyed(["name": .string($0.name), "from": .string($0.from), "payload": .string($0.payload), "frame": .string($0.frame)])
            }),
            "handshakeHash": .string(handshakeHash),
        ])
    }
}

@Suite("Handshake retry vector", .serialized)
struct RetryVectorTests {
    @Test("handshake-retry.json is what the fixed handshake with a RETRY produces, byte for byte")
    func fileMatches() throws {
        let computed = try RetryVector.compute()
        if writeVectors {
            try computed.json.rendered.write(to: try VectorFiles.url("handshake-retry"), atomically: true, encoding: .utf8)
        }
        let file: RetryVector = try VectorFiles.load("handshake-retry")
        #expect(file == computed)
        #expect(file.frames.map(\.name) == ["message1", "retry", "message1_again", "message2", "message3"])
        #expect(file.frames[1].frame == "000000020401", "RETRY naming suite 1 (ChaChaPoly)")
        #expect(file.prologue.hasSuffix("0072657472790201"), "0 ‖ \"retry\" ‖ 2 ‖ 1")
    }
}
