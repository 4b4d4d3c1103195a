import Crypto
import Foundation
@testable import MeshNoise
import Testing

@Suite("Tampering, turns and limits")
struct TamperTests {
    @Test("flipping any byte of XX message 2 makes the initiator's readMessage throw decryptFailed")
    func tamperMessage2() throws {
        var pair = try HandshakePair()
        let first = try pair.initiator.writeMessage()
        _ = try pair.responder.readMessage(first)
        let second = try pair.responder.writeMessage(payload: Data("hello".utf8))
        for byte in 0..<second.count {
            var initiator = pair.initiator
            #expect(throws: NoiseError.expected(.decryptFailed), "byte \(byte)") {
                try initiator.readMessage(second.flippingBit(atByte: byte, bit: byte % 8))
            }
        }
        // Failures are atomic: the untouched message still reads.
        var initiator = pair.initiator
        _ = try? initiator.readMessage(second.flippingBit(atByte: 40))
        #expect(try initiator.readMessage(second) == Data("hello".utf8))
    }

    @Test("flipping any byte of XX message 3 makes the responder's readMessage throw decryptFailed")
    func tamperMessage3() throws {
        var pair = try HandshakePair()
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage())
        _ = try pair.initiator.readMessage(try pair.responder.writeMessage())
        let third = try pair.initiator.writeMessage(payload: Data("identity".utf8))
        for byte in 0..<third.count {
            var responder = pair.responder
            #expect(throws: NoiseError.expected(.decryptFailed), "byte \(byte)") {
                try responder.readMessage(third.flippingBit(atByte: byte, bit: 7 - byte % 8))
            }
            #expect(!responder.isComplete)
        }
        #expect(try pair.responder.readMessage(third) == Data("identity".utf8))
        #expect(pair.responder.isComplete)
    }

    @Test(
        "XX message 1 is not authenticated: tampering its e is caught when the initiator reads message 2",
        arguments: [0, 7, 16, 31]
    )
    func tamperMessage1(byte: Int) throws {
        var pair = try HandshakePair()
        let first = try pair.initiator.writeMessage()
        #expect(first.count == 32)
        // The responder cannot tell: message 1 carries only the clear ephemeral key.
        _ = try pair.responder.readMessage(first.flippingBit(atByte: byte, bit: 3))
        let second = try pair.responder.writeMessage()
        #expect(throws: NoiseError.expected(.decryptFailed)) { try pair.initiator.readMessage(second) }
    }

    @Test("different prologues: the first encrypted message fails to decrypt")
    func wrongPrologue() throws {
        var pair = try HandshakePair(initiatorPrologue: Data("a".utf8), responderPrologue: Data("b".utf8))
        // Message 1 of XX is in clear, so it still reads (and its payload arrives).
        #expect(try pair.responder.readMessage(try pair.initiator.writeMessage(payload: Data([1]))) == Data([1]))
        let second = try pair.responder.writeMessage()
        let error = #expect(throws: NoiseError.self) { try pair.initiator.readMessage(second) }
        #expect(error?.code == .decryptFailed)
        #expect(error?.description.contains("authentication failed") == true)
    }

    @Test("out-of-turn calls throw wrongTurn, calls after completion handshakeAlreadyComplete")
    func outOfTurn() throws {
        var pair = try HandshakePair()
        #expect(throws: NoiseError.expected(.wrongTurn)) { try pair.initiator.readMessage(Data(count: 32)) }
        #expect(throws: NoiseError.expected(.wrongTurn)) { try pair.responder.writeMessage() }
        let first = try pair.initiator.writeMessage()
        #expect(throws: NoiseError.expected(.wrongTurn)) { try pair.initiator.writeMessage() }
        _ = try pair.responder.readMessage(first)
        #expect(throws: NoiseError.expected(.wrongTurn)) { try pair.responder.readMessage(first) }
        #expect(throws: NoiseError.expected(.handshakeNotComplete)) { try pair.initiator.split() }
        #expect(throws: NoiseError.expected(.handshakeNotComplete)) { try pair.responder.deriveKey(label: "x") }
        _ = try pair.initiator.readMessage(try pair.responder.writeMessage())
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage())
        #expect(pair.initiator.isComplete && pair.responder.isComplete)
        #expect(!pair.initiator.isMyTurnToWrite && !pair.responder.isMyTurnToWrite)
        #expect(throws: NoiseError.expected(.handshakeAlreadyComplete)) { try pair.initiator.writeMessage() }
        #expect(throws: NoiseError.expected(.handshakeAlreadyComplete)) { try pair.responder.readMessage(Data()) }
    }

    @Test("a tampered transport message throws decryptFailed and does not advance the nonce")
    func tamperTransport() throws {
        var pair = try HandshakePair()
        try pair.run()
        var (send, _) = try pair.initiator.split()
        var (_, receive) = try pair.responder.split()
        let ciphertext = try send.encrypt(Data("transport".utf8), authenticating: Data("ad".utf8))
        for byte in [0, 4, ciphertext.count - 16, ciphertext.count - 1] {
            #expect(throws: NoiseError.expected(.decryptFailed)) {
                try receive.decrypt(ciphertext.flippingBit(atByte: byte), authenticating: Data("ad".utf8))
            }
        }
        #expect(throws: NoiseError.expected(.decryptFailed)) {
            try receive.decrypt(ciphertext, authenticating: Data("other ad".utf8))
        }
        #expect(receive.nonce == 0)
        #expect(try receive.decrypt(ciphertext, authenticating: Data("ad".utf8)) == Data("transport".utf8))
        #expect(receive.nonce == 1)
        // A replay at the next nonce fails.
        #expect(throws: NoiseError.expected(.decryptFailed)) {
            try receive.decrypt(ciphertext, authenticating: Data("ad".utf8))
        }
    }

    @Test("a cipher state refuses the reserved nonce 2^64-1")
    func nonceExhaustion() throws {
        let key = SymmetricKey(size: .bits256)
        var sender = NoiseCipherState(key: key, nonce: UInt64.max - 1)
        var receiver = NoiseCipherState(key: key, nonce: UInt64.max - 1)
        let last = try sender.encrypt(Data("last".utf8))
        #expect(try receiver.decrypt(last) == Data("last".utf8))
        #expect(sender.nonce == UInt64.max && receiver.nonce == UInt64.max)
        #expect(throws: NoiseError.expected(.nonceExhausted)) { try sender.encrypt(Data("one more".utf8)) }
        #expect(throws: NoiseError.expected(.nonceExhausted)) { try receiver.decrypt(last) }
        #expect(sender.nonce == UInt64.max)
        let fresh = NoiseCipherState(key: key)
        #expect(throws: NoiseError.expected(.nonceExhausted)) { try fresh.encrypt(Data(), nonce: .max) }
        #expect(throws: NoiseError.expected(.nonceExhausted)) { try fresh.decrypt(Data(count: 16), nonce: .max) }
    }

    @Test("messages over 65535 bytes are refused by encrypt, decrypt, writeMessage and readMessage")
    func oversized() throws {
        var cipher = NoiseCipherState(key: SymmetricKey(size: .bits256))
        #expect(throws: NoiseError.expected(.messageTooLong)) { try cipher.encrypt(Data(count: 65520)) }
        #expect(throws: NoiseError.expected(.messageTooLong)) { try cipher.decrypt(Data(count: 65536)) }
        #expect(throws: NoiseError.expected(.messageTooLong)) { try cipher.encrypt(Data(count: 65536), nonce: 1) }
        #expect(cipher.nonce == 0)
        #expect(try cipher.encrypt(Data(count: 65519)).count == 65535)

        var pair = try HandshakePair()
        #expect(throws: NoiseError.expected(.messageTooLong)) { try pair.initiator.writeMessage(payload: Data(count: 65536)) }
        #expect(throws: NoiseError.expected(.messageTooLong)) { try pair.responder.readMessage(Data(count: 65536)) }
        // 32 bytes of e plus a 65504-byte clear payload is 65536: one byte too many.
        #expect(throws: NoiseError.expected(.messageTooLong)) { try pair.initiator.writeMessage(payload: Data(count: 65504)) }
        #expect(try pair.initiator.writeMessage(payload: Data(count: 65503)).count == 65535)
    }

    @Test("truncated messages throw messageTooShort")
    func truncated() throws {
        var pair = try HandshakePair()
        #expect(throws: NoiseError.expected(.messageTooShort)) { try pair.responder.readMessage(Data(count: 31)) }
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage())
        let second = try pair.responder.writeMessage()
        #expect(throws: NoiseError.expected(.messageTooShort)) { try pair.initiator.readMessage(second.prefix(60)) }
        #expect(throws: NoiseError.expected(.messageTooShort)) { try pair.initiator.readMessage(second.prefix(95)) }
        var cipher = NoiseCipherState(key: SymmetricKey(size: .bits256))
        #expect(throws: NoiseError.expected(.messageTooShort)) { try cipher.decrypt(Data(count: 15)) }
    }
}
