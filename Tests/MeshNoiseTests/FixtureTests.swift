import Crypto
import Foundation
import MeshNoise
import MeshTestSupport
import Testing

/// `Fixtures/xx-fixture.json`: a regression fixture that does not need ../shared.
///
/// It holds XX and X vectors (fixed keys, our own payloads) in the cacophony JSON shape, recorded
/// from this implementation after it reproduced every cacophony vector. Regenerate only on purpose:
/// `MESHNOISE_WRITE_FIXTURE=1 swift test --filter MeshNoiseTests.FixtureTests`.
enum RegressionFixture {
    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
        .appendingPathComponent("xx-fixture.json")

    static func load() throws -> [NoiseVector] {
        try JSONDecoder().decode(NoiseVectorFile.self, from: Data(contentsOf: url)).vectors
    }

    /// A fixed 32-byte value: SHA256 of a label.
    static func fixed(_ label: String) -> Data { Data(SHA256.hash(data: Data("meshnoise fixture \(label)".utf8))) }

    /// Records one vector by running the handshake and four transport messages.
    static func record(_ protocolName: String) throws -> [String: Any] {
        let name = try NoiseProtocolName(protocolName)
        let pattern = name.pattern
        let prologue = Data("meshchat fixture prologue".utf8)
        let initStatic = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: fixed("init static"))
        let respStatic = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: fixed("resp static"))
        let initEphemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: fixed("init ephemeral"))
        let respEphemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: fixed("resp ephemeral"))
        let initKnowsResp = pattern.needsRemoteStaticBeforehand(initiator: true)
        var initiator = try NoiseHandshake(
            protocolName: name, initiator: true, prologue: prologue, staticKey: initStatic,
            remoteStaticKey: initKnowsResp ? respStatic.publicKey : nil, ephemeralKey: initEphemeral
        )
        var responder = try NoiseHandshake(
            protocolName: name, initiator: false, prologue: prologue, staticKey: respStatic,
            ephemeralKey: pattern.isOneWay ? nil : respEphemeral
        )
        var messages: [[String: String]] = []
        for index in 0..<pattern.messages.count {
            let payload = Data("\(pattern.name) handshake message \(index)".utf8)
            let ciphertext = index % 2 == 0
                ? try initiator.writeMessage(payload: payload) : try responder.writeMessage(payload: payload)
            _ = index % 2 == 0 ? try responder.readMessage(ciphertext) : try initiator.readMessage(ciphertext)
            messages.append(["payload": payload.hexString, "ciphertext": ciphertext.hexString])
        }
        var i = try initiator.split()
        var r = try responder.split()
        for index in pattern.messages.count..<(pattern.messages.count + 4) {
            let payload = Data("\(pattern.name) transport message \(index)".utf8)
            let fromInitiator = pattern.isOneWay || index % 2 == 0
            let ciphertext = fromInitiator ? try i.send.encrypt(payload) : try r.send.encrypt(payload)
            _ = fromInitiator ? try r.receive.decrypt(ciphertext) : try i.receive.decrypt(ciphertext)
            messages.append(["payload": payload.hexString, "ciphertext": ciphertext.hexString])
        }
        var vector: [String: Any] = [
            "protocol_name": protocolName,
            "init_prologue": prologue.hexString, "init_static": initStatic.rawRepresentation.hexString,
            "init_ephemeral": initEphemeral.rawRepresentation.hexString,
            "resp_prologue": prologue.hexString, "resp_static": respStatic.rawRepresentation.hexString,
            "handshake_hash": initiator.handshakeHash.hexString,
            "messages": messages,
        ]
        if initKnowsResp { vector["init_remote_static"] = respStatic.publicKey.rawRepresentation.hexString }
        if !pattern.isOneWay { vector["resp_ephemeral"] = respEphemeral.rawRepresentation.hexString }
        return vector
    }
}

@Suite("Regression fixture")
struct FixtureTests {
    @Test("Fixtures/xx-fixture.json (XX and X, fixed keys) is reproduced byte for byte", arguments: try RegressionFixture.load())
    func fixture(_ vector: NoiseVector) throws {
        try vector.verify()
    }

    @Test("the fixture covers XX and X")
    func coverage() throws {
        #expect(try RegressionFixture.load().map(\.protocolName)
            == ["Noise_XX_25519_ChaChaPoly_SHA256", "Noise_X_25519_ChaChaPoly_SHA256"])
    }

    @Test(
        "regenerate the fixture (only with MESHNOISE_WRITE_FIXTURE=1)",
        .enabled(if: ProcessInfo.processInfo.environment["MESHNOISE_WRITE_FIXTURE"] == "1")
    )
    func regenerate() throws {
        let file: [String: Any] = [
            "comment": "Regression fixture for MeshNoise, recorded from this implementation after it reproduced all 59 "
                + "cacophony vectors (../shared/data/noise-vectors). Same shape as the cacophony file. Fixed keys are "
                + "SHA256(\"meshnoise fixture <role>\"). Regenerate only on purpose: MESHNOISE_WRITE_FIXTURE=1.",
            "vectors": [try RegressionFixture.record("Noise_XX_25519_ChaChaPoly_SHA256"),
                        try RegressionFixture.record("Noise_X_25519_ChaChaPoly_SHA256")],
        ]
        let data = try JSONSerialization.data(withJSONObject: file, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: RegressionFixture.url)
    }
}
