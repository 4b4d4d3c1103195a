import Crypto
import Foundation
@testable import MeshNoise
import MeshTestSupport
import Testing

@Suite("Round trips")
struct RoundTripTests {
    @Test("XX with random keys carries 65519-byte payloads both ways after the handshake")
    func xxRoundTrip() throws {
        var pair = try HandshakePair()
        let payloads = [Data("m1".utf8), Data("m2".utf8), Data(repeating: 0xab, count: 65535 - 48 - 16)]
        let messages = try pair.run(payloads: payloads)
        #expect(messages.map(\.count) == [32 + 2, 32 + 48 + 2 + 16, 65535])
        #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)
        #expect(pair.initiator.remoteStaticKey?.rawRepresentation == pair.responderStatic.publicKey.rawRepresentation)
        #expect(pair.responder.remoteStaticKey?.rawRepresentation == pair.initiatorStatic.publicKey.rawRepresentation)
        #expect(pair.initiator.remoteEphemeralKey != nil && pair.responder.remoteEphemeralKey != nil)

        var initiator = try pair.initiator.split()
        var responder = try pair.responder.split()
        var rng = SplitMix64(seed: 0x5eed)
        let big = Data(rng.bytes(NoiseCipherState.maximumPlaintextLength))
        for round in 0..<3 {
            let toResponder = try initiator.send.encrypt(big)
            #expect(toResponder.count == 65535)
            #expect(try responder.receive.decrypt(toResponder) == big, "round \(round)")
            let toInitiator = try responder.send.encrypt(big.reversed() as [UInt8])
            #expect(try initiator.receive.decrypt(toInitiator) == Data(big.reversed()), "round \(round)")
        }
        #expect(initiator.send.nonce == 3 && responder.receive.nonce == 3)
    }

    @Test("X one-way: the sender knows the recipient's static key; the recipient learns the sender's")
    func xOneWay() throws {
        var pair = try HandshakePair("Noise_X_25519_ChaChaPoly_SHA256")
        let message = try pair.initiator.writeMessage(payload: Data("sealed note".utf8))
        #expect(message.count == 32 + 48 + 11 + 16)
        #expect(pair.initiator.isComplete)
        #expect(try pair.responder.readMessage(message) == Data("sealed note".utf8))
        #expect(pair.responder.isComplete)
        #expect(pair.responder.remoteStaticKey?.rawRepresentation == pair.initiatorStatic.publicKey.rawRepresentation)
        #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)

        var send = try pair.initiator.split().send
        var receive = try pair.responder.split().receive
        for index in 0..<4 {
            let text = Data("after \(index)".utf8)
            #expect(try receive.decrypt(try send.encrypt(text)) == text)
        }
        // Only the intended recipient can open it.
        var stranger = try NoiseHandshake(
            protocolName: "Noise_X_25519_ChaChaPoly_SHA256", initiator: false, prologue: Data("meshchat test".utf8),
            staticKey: Curve25519.KeyAgreement.PrivateKey()
        )
        #expect(throws: NoiseError.expected(.decryptFailed)) { try stranger.readMessage(message) }
    }

    @Test("psk patterns need the same preshared key on both sides")
    func pskRoundTrip() throws {
        let psk = SymmetricKey(size: .bits256)
        var good = try HandshakePair("Noise_XXpsk3_25519_ChaChaPoly_SHA256", presharedKeys: [psk])
        try good.run()
        #expect(good.initiator.handshakeHash == good.responder.handshakeHash)

        var bad = try HandshakePair("Noise_NNpsk0_25519_ChaChaPoly_SHA256", presharedKeys: [psk])
        bad.responder = try NoiseHandshake(
            protocolName: "Noise_NNpsk0_25519_ChaChaPoly_SHA256", initiator: false, prologue: Data("meshchat test".utf8),
            presharedKeys: [SymmetricKey(size: .bits256)]
        )
        let first = try bad.initiator.writeMessage()
        #expect(throws: NoiseError.expected(.decryptFailed)) { try bad.responder.readMessage(first) }
    }

    @Test("payloads read from clear and encrypted handshake messages are zero-based Data")
    func zeroBasedPayloads() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        let clear = try pair.responder.readMessage(try pair.initiator.writeMessage(payload: Data("clear".utf8)))
        #expect(clear == Data("clear".utf8) && clear.startIndex == 0)
        let sealed = try pair.initiator.readMessage(try pair.responder.writeMessage(payload: Data("sealed".utf8)))
        #expect(sealed == Data("sealed".utf8) && sealed.startIndex == 0)
    }

    @Test("split orients send/receive per side; outputs are zero-based Data")
    func splitOrientation() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        try pair.run()
        var initiator = try pair.initiator.split()
        var responder = try pair.responder.split()
        let fromInitiator = try initiator.send.encrypt(Data("i".utf8))
        let fromResponder = try responder.send.encrypt(Data("r".utf8))
        let opened = try responder.receive.decrypt(fromInitiator)
        #expect(opened == Data("i".utf8) && opened.startIndex == 0)
        #expect(try initiator.receive.decrypt(fromResponder) == Data("r".utf8))
        // The two directions use different keys.
        var wrong = try pair.initiator.split().receive
        #expect(throws: NoiseError.expected(.decryptFailed)) { try wrong.decrypt(fromInitiator) }
    }

    @Test("deriveKey: same label gives the same key on both sides, other labels and split keys differ")
    func deriveKey() throws {
        var pair = try HandshakePair()
        try pair.run()
        let a1 = try pair.initiator.deriveKey(label: "meshchat datagram i2r")
        let a2 = try pair.responder.deriveKey(label: "meshchat datagram i2r")
        let b1 = try pair.initiator.deriveKey(label: "meshchat datagram r2i")
        let b2 = try pair.responder.deriveKey(label: "meshchat datagram r2i")
        #expect(a1 == a2 && b1 == b2)
        #expect(a1 != b1)
        #expect(a1.bitCount == 256)
        #expect(throws: NoiseError.expected(.invalidArgument)) { try pair.initiator.deriveKey(label: "") }

        // Independent of the transport keys: same nonce, same plaintext, different ciphertext.
        var transport = try pair.initiator.split().send
        var derived = NoiseCipherState(key: a1)
        #expect(try transport.encrypt(Data(count: 8)) != (try derived.encrypt(Data(count: 8))))

        // The formula in the documentation: HKDF-SHA256(salt: ck, ikm: "", info: label), 32 bytes.
        let ck = pair.initiator.chainingKeyForTesting
        let expected = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data()), salt: ck, info: Data("meshchat datagram i2r".utf8),
            outputByteCount: 32
        )
        #expect(a1 == expected)
        let tempKey = HMAC<SHA256>.authenticationCode(for: Data(), using: SymmetricKey(data: ck))
        let manual = HMAC<SHA256>.authenticationCode(
            for: Data("meshchat datagram i2r".utf8) + [0x01], using: SymmetricKey(data: Data(tempKey))
        )
        #expect(a1 == SymmetricKey(data: Data(manual)))
    }

    @Test("rekey: both sides rekeyed interoperate, keep their nonce, and change the key")
    func rekey() throws {
        let key = SymmetricKey(size: .bits256)
        var sender = NoiseCipherState(key: key)
        var receiver = NoiseCipherState(key: key)
        let before = try sender.encrypt(Data("x".utf8))
        _ = try receiver.decrypt(before)
        var plain = sender
        sender.rekey()
        receiver.rekey()
        #expect(sender.nonce == 1)
        let after = try sender.encrypt(Data("y".utf8))
        #expect(try receiver.decrypt(after) == Data("y".utf8))
        #expect(try plain.encrypt(Data("y".utf8)) != after)
        // REKEY(k) = first 32 bytes of ENCRYPT(k, 2^64-1, "", zeros(32)).
        let expected = try ChaChaPoly.seal(
            Data(count: 32), using: key, nonce: ChaChaPoly.Nonce(data: Data(count: 4) + Data(repeating: 0xff, count: 8))
        ).ciphertext
        #expect(SymmetricKey(data: expected) == sender.key)
    }

    @Test("explicit-nonce encrypt/decrypt leave the state alone and bind the nonce")
    func explicitNonce() throws {
        let state = NoiseCipherState(key: SymmetricKey(size: .bits256))
        let sealed = try state.encrypt(Data("datagram".utf8), nonce: 41, authenticating: Data("hdr".utf8))
        #expect(try state.decrypt(sealed, nonce: 41, authenticating: Data("hdr".utf8)) == Data("datagram".utf8))
        #expect(throws: NoiseError.expected(.decryptFailed)) {
            try state.decrypt(sealed, nonce: 42, authenticating: Data("hdr".utf8))
        }
        #expect(state.nonce == 0)
        // Same as the stream API at that nonce: nonce = 4 zero bytes ‖ little-endian counter.
        var stream = NoiseCipherState(key: state.key, nonce: 41)
        #expect(try stream.encrypt(Data("datagram".utf8), authenticating: Data("hdr".utf8)) == sealed)
        let manual = try ChaChaPoly.seal(
            Data("datagram".utf8), using: state.key,
            nonce: ChaChaPoly.Nonce(data: [0, 0, 0, 0, 41, 0, 0, 0, 0, 0, 0, 0]), authenticating: Data("hdr".utf8)
        )
        #expect(Data(manual.ciphertext + manual.tag) == sealed)
    }

    @Test("descriptions and mirrors never contain key material")
    func noKeysInDescriptions() throws {
        var pair = try HandshakePair()
        try pair.run()
        let send = try pair.initiator.split().send
        let secrets = [
            pair.initiatorStatic.rawRepresentation.hexString,
            send.key.withUnsafeBytes { Data($0) }.hexString,
            pair.initiator.chainingKeyForTesting.hexString,
        ]
        var dumped = ""
        dump(pair.initiator, to: &dumped)
        dump(send, to: &dumped)
        let texts = [String(describing: pair.initiator), String(reflecting: send), String(describing: send), dumped]
        for text in texts {
            for secret in secrets { #expect(!text.contains(secret)) }
        }
        #expect(String(describing: pair.initiator).contains("Noise_XX_25519_ChaChaPoly_SHA256"))
    }
}
