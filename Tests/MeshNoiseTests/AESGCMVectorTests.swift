import Crypto
import Foundation
@testable import MeshNoise
import Testing

/// `Fixtures/cacophony-25519-AESGCM-SHA256.json`: the 59 cacophony vectors of the
/// `*_25519_AESGCM_SHA256` protocols (public domain, commit 8ee9d41), kept beside the tests because
/// ../shared/data/noise-vectors holds only the ChaChaPoly ones.
enum AESGCMVectors {
    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
        .appendingPathComponent("cacophony-25519-AESGCM-SHA256.json")

    static let vectors: [NoiseVector] = {
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode(NoiseVectorFile.self, from: data).vectors) ?? []
    }()
}

@Suite("AESGCM vectors")
struct AESGCMVectorTests {
    @Test("the fixture holds all 59 AESGCM_SHA256 vectors, every one naming AESGCM")
    func fixturePresent() throws {
        #expect(AESGCMVectors.vectors.count == 59)
        for vector in AESGCMVectors.vectors {
            #expect(try NoiseProtocolName(vector.protocolName).cipher == .aesGCM)
        }
    }

    @Test("cacophony AESGCM vector reproduced byte for byte", arguments: AESGCMVectors.vectors)
    func vector(_ vector: NoiseVector) throws {
        try vector.verify()
    }

    @Test("the AESGCM nonce is the counter big-endian, ChaChaPoly's little-endian (Noise §12.3, §12.4)")
    func nonceByteOrder() {
        let counter: UInt64 = 0x0102_0304_0506_0708
        let aes = NoiseCipherState.withNonceBytes(.aesGCM, counter) { Array($0) }
        let chacha = NoiseCipherState.withNonceBytes(.chaChaPoly, counter) { Array($0) }
        #expect(aes == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(chacha == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
    }

    @Test("a message sealed with one cipher does not open with the other under the same key and nonce")
    func ciphersDoNotCross() throws {
        let key = SymmetricKey(size: .bits256)
        let sealed = try NoiseCipherState(key: key, cipher: .aesGCM).encrypt(Data("hello".utf8), nonce: 3)
        #expect(try NoiseCipherState(key: key, cipher: .aesGCM).decrypt(sealed, nonce: 3) == Data("hello".utf8))
        let error = #expect(throws: NoiseError.self) {
            try NoiseCipherState(key: key, cipher: .chaChaPoly).decrypt(sealed, nonce: 3)
        }
        #expect(error?.code == .decryptFailed)
        // A flipped bit and a wrong nonce fail too.
        var tampered = sealed
        tampered[tampered.startIndex] ^= 1
        #expect(throws: NoiseError.self) { try NoiseCipherState(key: key, cipher: .aesGCM).decrypt(tampered, nonce: 3) }
        #expect(throws: NoiseError.self) { try NoiseCipherState(key: key, cipher: .aesGCM).decrypt(sealed, nonce: 4) }
    }

    @Test("rekey keeps the cipher and agrees between two AESGCM states")
    func rekey() throws {
        let key = SymmetricKey(size: .bits256)
        var a = NoiseCipherState(key: key, cipher: .aesGCM)
        var b = NoiseCipherState(key: key, cipher: .aesGCM)
        a.rekey()
        b.rekey()
        #expect(a.cipher == .aesGCM)
        let sealed = try a.encrypt(Data("after rekey".utf8))
        #expect(try b.decrypt(sealed) == Data("after rekey".utf8))
    }
}
