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
///
/// The per-message derivations (``chain(_:)`` and ``aead(_:)``) compute HKDF (RFC 5869) as the
/// HMACs it is defined by, with swift-crypto's `HMAC<SHA256>`: no hash or MAC is implemented
/// here, only the RFC's two formulas (`PRK = HMAC(salt, IKM)`, `T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i)`)
/// written out, so that the keyed HMAC states are made once and copied: one for the all-zero salt
/// per process, one per chain key for both of its outputs, one per PRK for both output blocks.
/// `HKDF<SHA256>.deriveKey` keyed three fresh HMACs per message through generic code (its key pads
/// hashed each time, buffers allocated per step), which was most of the cost of a line (issue 15's
/// profile). The bytes are the same: the vectors in `Protocol/vectors/ratchet.json` and
/// `Protocol/reference/ratchet.py --check` hold them.
enum RatchetKDF {
    static let rootInfo = Data("meshchat-ratchet-root".utf8)
    static let messageInfo = Data("meshchat-ratchet-message".utf8)

    /// HKDF-Expand's inputs after `T(i-1)`: `info ‖ 0x01` and `info ‖ 0x02`.
    private static let firstBlockInput = [UInt8](messageInfo) + [0x01]
    private static let secondBlockInput = [UInt8](messageInfo) + [0x02]
    /// HKDF-Extract's HMAC keyed with the 32-byte all-zero salt (its pads hashed once).
    private static let zeroSalt = HMAC<SHA256>(key: SymmetricKey(data: [UInt8](repeating: 0, count: 32)))

    /// `KDF_RK`: a Diffie-Hellman output mixed into the root key.
    static func root(_ rootKey: SymmetricKey, _ dhOutput: SharedSecret) -> (root: SymmetricKey, chain: SymmetricKey) {
        let derived = dhOutput.hkdfDerivedSymmetricKey(using: SHA256.self, salt: rootKey.withUnsafeBytes { Data($0) },
                                                       sharedInfo: rootInfo, outputByteCount: 64)
        return derived.withUnsafeBytes { bytes in
            (SymmetricKey(data: bytes.prefix(32)), SymmetricKey(data: bytes.suffix(32)))
        }
    }

    /// `KDF_CK`: one step of a sending or receiving chain (one keyed HMAC, finished twice).
    static func chain(_ chainKey: SymmetricKey) -> (chain: SymmetricKey, message: SymmetricKey) {
        let keyed = HMAC<SHA256>(key: chainKey)
        return (SymmetricKey(data: mac(keyed, byte: 0x02)), SymmetricKey(data: mac(keyed, byte: 0x01)))
    }

    /// The AEAD key and nonce of one message key: HKDF-SHA256 (zero salt, ``messageInfo``, 44 bytes),
    /// the key `T(1)` and the nonce the first 12 bytes of `T(2)`.
    static func aead(_ messageKey: SymmetricKey) -> (key: SymmetricKey, nonce: ChaChaPoly.Nonce) {
        var extract = zeroSalt
        messageKey.withUnsafeBytes { extract.update(data: $0) }
        let prk = HMAC<SHA256>(key: SymmetricKey(data: extract.finalize()))
        var first = prk
        first.update(data: firstBlockInput)
        let t1 = first.finalize()
        var second = prk
        t1.withUnsafeBytes { second.update(data: $0) }
        second.update(data: secondBlockInput)
        let t2 = second.finalize()
        let nonce = t2.withUnsafeBytes { bytes in
            // 12 bytes is exactly a ChaChaPoly nonce, so this cannot fail.
            try! ChaChaPoly.Nonce(data: UnsafeRawBufferPointer(rebasing: bytes.prefix(12)))
        }
        return (SymmetricKey(data: t1), nonce)
    }

    private static func mac(_ keyed: HMAC<SHA256>, byte: UInt8) -> HashedAuthenticationCode<SHA256> {
        var hmac = keyed
        withUnsafeBytes(of: byte) { hmac.update(data: $0) }
        return hmac.finalize()
    }
}
