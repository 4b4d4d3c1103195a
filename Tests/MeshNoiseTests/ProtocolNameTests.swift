import Crypto
import Foundation
import MeshNoise
import Testing

@Suite("Protocol names and patterns")
struct ProtocolNameTests {
    @Test("names parse into pattern, modifiers and functions")
    func parse() throws {
        let name = try NoiseProtocolName("Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        #expect(name.patternName == "XX")
        #expect(name.modifiers == ["psk3"])
        #expect(name.pskPositions == [3])
        #expect(name.pattern.name == "XXpsk3")
        #expect(name.pattern.messages == [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]])
        #expect((name.dhFunction, name.cipherFunction, name.hashFunction) == ("25519", "ChaChaPoly", "SHA256"))

        let two = try NoiseProtocolName("Noise_NNpsk0+psk2_25519_ChaChaPoly_SHA256")
        #expect(two.pattern.messages == [[.psk, .e], [.e, .ee, .psk]])
        #expect(two.pattern.presharedKeyCount == 2)

        let deferred = try NoiseProtocolName("Noise_X1K1_25519_ChaChaPoly_SHA256")
        #expect(deferred.patternName == "X1K1" && deferred.modifiers.isEmpty)
        #expect(try NoiseProtocolName.with25519ChaChaPolySHA256(pattern: "IK", pskPositions: [2]).rawValue
            == "Noise_IKpsk2_25519_ChaChaPoly_SHA256")
    }

    @Test("the table holds the 15 fundamental and 23 deferred patterns")
    func table() {
        #expect(NoiseHandshakePattern.fundamental.count == 15)
        #expect(NoiseHandshakePattern.deferred.count == 23)
        #expect(Set(NoiseHandshakePattern.all.map(\.name)).count == 38)
        #expect(NoiseHandshakePattern.named("N")?.isOneWay == true)
        #expect(NoiseHandshakePattern.named("XX")?.description == "XX: -> e <- e, ee, s, es -> s, se")
    }

    @Test(
        "unsupported or malformed names throw unsupportedProtocol",
        arguments: [
            "Noise_XX_448_ChaChaPoly_SHA256", "Noise_XX_25519_AESGCM_BLAKE2s", "Noise_XX_25519_ChaChaPoly_BLAKE2s",
            "Noise_XX_25519_AESGCM256_SHA256", "Noise_XX_25519_aesgcm_SHA256",
            "Noise_XXfallback_25519_ChaChaPoly_SHA256", "Noise_ZZ_25519_ChaChaPoly_SHA256", "Noise_XX",
            "Noise_XXpsk4_25519_ChaChaPoly_SHA256", "Noise_XXpsk0+psk0_25519_ChaChaPoly_SHA256",
            "Noise_XXpsk_25519_ChaChaPoly_SHA256", "NoisePSK_XX_25519_ChaChaPoly_SHA256", "",
        ]
    )
    func unsupported(name: String) {
        let error = #expect(throws: NoiseError.self) { try NoiseProtocolName(name) }
        #expect(error?.code == .unsupportedProtocol)
        #expect(error?.description.contains("unsupported Noise protocol") == true)
    }

    @Test("missing, surplus and malformed keys are refused when the handshake is created")
    func keyChecks() throws {
        let xx = "Noise_XX_25519_ChaChaPoly_SHA256"
        let key = Curve25519.KeyAgreement.PrivateKey()
        #expect(throws: NoiseError.expected(.missingKey)) { try NoiseHandshake(protocolName: xx, initiator: true, prologue: Data()) }
        #expect(throws: NoiseError.expected(.missingKey)) {
            try NoiseHandshake(protocolName: "Noise_IK_25519_ChaChaPoly_SHA256", initiator: true, prologue: Data(), staticKey: key)
        }
        #expect(throws: NoiseError.expected(.missingKey)) {
            try NoiseHandshake(protocolName: "Noise_NNpsk0_25519_ChaChaPoly_SHA256", initiator: true, prologue: Data())
        }
        #expect(throws: NoiseError.expected(.unexpectedKey)) {
            try NoiseHandshake(protocolName: xx, initiator: true, prologue: Data(), staticKey: key, remoteStaticKey: key.publicKey)
        }
        #expect(throws: NoiseError.expected(.unexpectedKey)) {
            try NoiseHandshake(protocolName: xx, initiator: true, prologue: Data(), staticKey: key, presharedKeys: [SymmetricKey(size: .bits256)])
        }
        #expect(throws: NoiseError.expected(.invalidKey)) {
            try NoiseHandshake(
                protocolName: "Noise_NNpsk0_25519_ChaChaPoly_SHA256", initiator: true, prologue: Data(),
                presharedKeys: [SymmetricKey(size: .bits128)]
            )
        }
        // NN never uses a static key: passing one is harmless.
        #expect(throws: Never.self) {
            try NoiseHandshake(protocolName: "Noise_NN_25519_ChaChaPoly_SHA256", initiator: true, prologue: Data(), staticKey: key)
        }
    }

    @Test("errors compare by code only and describe the failure without secrets")
    func errorEquality() {
        #expect(NoiseError(.decryptFailed, "one") == NoiseError(.decryptFailed, "two"))
        #expect(NoiseError(.decryptFailed, "one") != NoiseError(.wrongTurn, "one"))
        #expect(Set([NoiseError(.invalidKey, "a"), NoiseError(.invalidKey, "b")]).count == 1)
        #expect(NoiseError(.nonceExhausted, "text").description == "text")
    }
}
