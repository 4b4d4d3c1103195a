import Crypto
import struct Foundation.Data

/// The key derivations of the Double Ratchet (Signal's specification, §5.2 "Recommended
/// cryptographic algorithms"), on SHA-256:
///
/// - `KDF_RK(rk, dh)`: HKDF-SHA256 with salt `rk`, input `dh`, info `"meshchat-ratchet-root"`,
///   64 bytes: the new root key, then the new chain key.
/// - `KDF_CK(ck)`: the message key is `HMAC-SHA256(ck, 0x01)`, the next chain key `HMAC-SHA256(ck, 0x02)`.
/// - A message key expands with HKDF-SHA256 (salt: 32 zero bytes, info `"meshchat-ratchet-message"`)
///   into a 32-byte ChaCha20-Poly1305 key and a 12-byte nonce. Each message key seals exactly one message.
enum RatchetKDF {
    static let rootInfo = Data("meshchat-ratchet-root".utf8)
    static let messageInfo = Data("meshchat-ratchet-message".utf8)

    /// `KDF_RK`: a Diffie-Hellman output mixed into the root key.
    static func root(_ rootKey: SymmetricKey, _ dhOutput: SharedSecret) -> (root: SymmetricKey, chain: SymmetricKey) {
        let derived = dhOutput.hkdfDerivedSymmetricKey(using: SHA256.self, salt: rootKey.withUnsafeBytes { Data($0) },
                                                       sharedInfo: rootInfo, outputByteCount: 64)
        return derived.withUnsafeBytes { bytes in
            (SymmetricKey(data: bytes.prefix(32)), SymmetricKey(data: bytes.suffix(32)))
        }
    }

    /// `KDF_CK`: one step of a sending or receiving chain.
    static func chain(_ chainKey: SymmetricKey) -> (chain: SymmetricKey, message: SymmetricKey) {
        let message = HMAC<SHA256>.authenticationCode(for: [0x01], using: chainKey)
        let next = HMAC<SHA256>.authenticationCode(for: [0x02], using: chainKey)
        return (SymmetricKey(data: next), SymmetricKey(data: message))
    }

    /// The AEAD key and nonce of one message key.
    static func aead(_ messageKey: SymmetricKey) -> (key: SymmetricKey, nonce: ChaChaPoly.Nonce) {
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: messageKey, salt: Data(count: 32),
                                             info: messageInfo, outputByteCount: 44)
        return derived.withUnsafeBytes { bytes in
            // 12 bytes is exactly a ChaChaPoly nonce, so this cannot fail.
            (SymmetricKey(data: bytes.prefix(32)), try! ChaChaPoly.Nonce(data: bytes.suffix(12)))
        }
    }
}
