import Crypto
import Foundation

/// The Noise symmetric state: chaining key, handshake hash and an optional cipher state
/// (Noise revision 34, §5.2), for SHA256 and either ``NoiseCipher``.
///
/// Internal: ``NoiseHandshake`` drives it token by token.
struct SymmetricState: Sendable {
    /// The Noise hash length for SHA256.
    static let hashLength = 32

    /// The chaining key `ck`.
    private(set) var chainingKey: SymmetricKey
    /// The handshake hash `h`.
    private(set) var handshakeHash: Data
    /// The cipher state `k, n`; `nil` until the first `MixKey` (an "empty" key).
    private(set) var cipher: NoiseCipherState?
    /// The cipher function of every key this state mixes (from the protocol name).
    let cipherFunction: NoiseCipher

    /// `InitializeSymmetric(protocol_name)`: `h` is the name zero-padded to 32 bytes, or its
    /// SHA256 when longer; `ck = h`.
    init(protocolName: String, cipher cipherFunction: NoiseCipher) {
        self.cipherFunction = cipherFunction
        let name = Data(protocolName.utf8)
        if name.count <= Self.hashLength {
            handshakeHash = name + Data(repeating: 0, count: Self.hashLength - name.count)
        } else {
            handshakeHash = Data(SHA256.hash(data: name))
        }
        chainingKey = SymmetricKey(data: handshakeHash)
        cipher = nil
    }

    /// Whether a key has been mixed in, so payloads and static keys are encrypted.
    var hasKey: Bool { cipher != nil }

    /// `MixKey(input_key_material)`: `ck, temp_k = HKDF(ck, ikm, 2)`; the cipher restarts at nonce 0.
    mutating func mixKey(_ inputKeyMaterial: some ContiguousBytes) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        chainingKey = output[0]
        cipher = NoiseCipherState(key: output[1], cipher: cipherFunction)
    }

    /// `MixHash(data)`: `h = SHA256(h ‖ data)`.
    mutating func mixHash(_ data: some DataProtocol) {
        var hasher = SHA256()
        // By pointer: `update(data:)` walks a DataProtocol's regions in unspecialised generic code.
        handshakeHash.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        for region in data.regions {
            region.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }
        handshakeHash = Data(hasher.finalize())
    }

    /// `MixKeyAndHash(input_key_material)`: `ck, temp_h, temp_k = HKDF(ck, ikm, 3)`;
    /// `MixHash(temp_h)`; the cipher takes `temp_k` at nonce 0. Used for `psk` tokens.
    mutating func mixKeyAndHash(_ inputKeyMaterial: some ContiguousBytes) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 3)
        chainingKey = output[0]
        output[1].withUnsafeBytes { mixHash($0) }
        cipher = NoiseCipherState(key: output[2], cipher: cipherFunction)
    }

    /// `EncryptAndHash(plaintext)`: encrypts with `h` as associated data when a key is set
    /// (otherwise passes the plaintext through), then mixes the result into `h`.
    mutating func encryptAndHash(_ plaintext: some DataProtocol) throws(NoiseError) -> Data {
        let output: Data
        if var cipher {
            output = try cipher.encrypt(plaintext, authenticating: handshakeHash)
            self.cipher = cipher
        } else {
            output = Data(plaintext)
        }
        mixHash(output)
        return output
    }

    /// `DecryptAndHash(ciphertext)`: decrypts with `h` as associated data when a key is set
    /// (otherwise passes the bytes through), then mixes the ciphertext into `h`.
    mutating func decryptAndHash(_ ciphertext: some DataProtocol, what: String) throws(NoiseError) -> Data {
        let output: Data
        if var cipher {
            do {
                output = try cipher.decrypt(ciphertext, authenticating: handshakeHash)
            } catch let error where error.code == .decryptFailed {
                throw .decryptFailed(what)
            }
            self.cipher = cipher
        } else {
            output = Data(ciphertext)
        }
        mixHash(ciphertext)
        return output
    }

    /// `Split()`: `temp_k1, temp_k2 = HKDF(ck, zerolen, 2)`; returns the initiator→responder and
    /// responder→initiator cipher states.
    func split() -> (initiatorToResponder: NoiseCipherState, responderToInitiator: NoiseCipherState) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: Data(), outputs: 2)
        return (NoiseCipherState(key: output[0], cipher: cipherFunction), NoiseCipherState(key: output[1], cipher: cipherFunction))
    }

    /// An extra key bound to the handshake: `HKDF-SHA256(salt: ck, ikm: zerolen, info: label)`,
    /// first 32 bytes (RFC 5869). See ``NoiseHandshake/deriveKey(label:)``.
    func deriveKey(label: some DataProtocol) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data()),
            salt: chainingKey.withUnsafeBytes { Data($0) },
            info: label,
            outputByteCount: Self.hashLength
        )
    }

    /// The Noise `HKDF(chaining_key, input_key_material, num_outputs)` (§4.3).
    ///
    /// Noise defines it with HMAC: `temp_key = HMAC(ck, ikm)`, `output1 = HMAC(temp_key, 0x01)`,
    /// `output2 = HMAC(temp_key, output1 ‖ 0x02)`, ... (RFC 5869 HKDF with the chaining key as salt
    /// and empty info). Computed here with swift-crypto's `HMAC<SHA256>`, keyed once for `ck` and
    /// once for `temp_key` (each output continues a copy of the keyed state), instead of through
    /// `HKDF<SHA256>`, which keys a fresh HMAC for the extract step and again for every output
    /// block: key set-up was a tenth of a handshake's time (`perf record` on `meshbench handshakes`).
    static func hkdf(
        chainingKey: SymmetricKey,
        inputKeyMaterial: some ContiguousBytes,
        outputs: Int
    ) -> [SymmetricKey] {
        var extract = HMAC<SHA256>(key: chainingKey)
        inputKeyMaterial.withUnsafeBytes { extract.update(data: $0) }
        let keyed = HMAC<SHA256>(key: SymmetricKey(data: extract.finalize()))
        var result: [SymmetricKey] = []
        result.reserveCapacity(outputs)
        var previous: HashedAuthenticationCode<SHA256>?
        for index in 1...outputs {
            var block = keyed
            previous?.withUnsafeBytes { block.update(data: $0) }
            withUnsafeBytes(of: UInt8(truncatingIfNeeded: index)) { block.update(data: $0) }
            let output = block.finalize()
            result.append(SymmetricKey(data: output))
            previous = output
        }
        return result
    }
}
