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
/// The last use of each keyed state is finished in place rather than on a copy, and a 32-byte
/// key is handed to `HMAC` already zero-padded to SHA-256's 64-byte block (RFC 2104 pads it so;
/// `HMAC.init` then uses it as it is instead of building the padded copy itself). Message keys
/// stay the inline 32-byte MAC value they are computed as (no allocation) unless they are kept
/// as skipped keys. The bytes are the same: the vectors in `Protocol/vectors/ratchet.json` and
/// `Protocol/reference/ratchet.py --check` hold them.
enum RatchetKDF {
    static let rootInfo = Data("meshchat-ratchet-root".utf8)
    static let messageInfo = Data("meshchat-ratchet-message".utf8)

    /// A message key as `KDF_CK` computes it: 32 bytes held inline.
    typealias MessageKey = HashedAuthenticationCode<SHA256>

    /// HKDF-Expand's inputs after `T(i-1)`: `info ‖ 0x01` and `info ‖ 0x02`.
    private static let firstBlockInput = [UInt8](messageInfo) + [0x01]
    private static let secondBlockInput = [UInt8](messageInfo) + [0x02]
    /// HKDF-Extract's HMAC keyed with the 32-byte all-zero salt (its pads hashed once), given as the
    /// 64 zero bytes HMAC pads it to.
    private static let zeroSalt = HMAC<SHA256>(key: SymmetricKey(data: [UInt8](repeating: 0, count: SHA256.blockByteCount)))

    /// `KDF_RK`: a Diffie-Hellman output mixed into the root key.
    static func root(_ rootKey: SymmetricKey, _ dhOutput: SharedSecret) -> (root: SymmetricKey, chain: SymmetricKey) {
        let derived = dhOutput.hkdfDerivedSymmetricKey(using: SHA256.self, salt: rootKey.withUnsafeBytes { Data($0) },
                                                       sharedInfo: rootInfo, outputByteCount: 64)
        return derived.withUnsafeBytes { bytes in
            (SymmetricKey(data: bytes.prefix(32)), SymmetricKey(data: bytes.suffix(32)))
        }
    }

    /// `KDF_CK`: one step of a sending or receiving chain (one keyed HMAC, finished twice).
    static func chain(_ chainKey: SymmetricKey) -> (chain: SymmetricKey, message: MessageKey) {
        var keyed = chainKey.withUnsafeBytes { keyedHMAC($0) }
        let message = mac(keyed, byte: 0x01)
        withUnsafeBytes(of: UInt8(0x02)) { keyed.update(data: $0) }
        return (SymmetricKey(data: keyed.finalize()), message)
    }

    /// The AEAD key and nonce of one message key: HKDF-SHA256 (zero salt, ``messageInfo``, 44 bytes),
    /// the key `T(1)` and the nonce the first 12 bytes of `T(2)`.
    static func aead(_ messageKey: UnsafeRawBufferPointer) -> (key: SymmetricKey, nonce: ChaChaPoly.Nonce) {
        var extract = zeroSalt
        extract.update(data: messageKey)
        var second = extract.finalize().withUnsafeBytes { keyedHMAC($0) }
        let t1 = firstBlockInput.withUnsafeBytes { mac(second, $0) }
        // `T(1) ‖ info ‖ 0x02` in one update (each update of the generic HMAC has a fixed cost).
        withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount + secondBlockInput.count, alignment: 1) { input in
            t1.withUnsafeBytes { input.copyMemory(from: $0) }
            secondBlockInput.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: input[SHA256.byteCount...]).copyMemory(from: $0)
            }
            second.update(data: UnsafeRawBufferPointer(input))
            input.initializeMemory(as: UInt8.self, repeating: 0)
        }
        let nonce = second.finalize().withUnsafeBytes { bytes in
            // 12 bytes is exactly a ChaChaPoly nonce, so this cannot fail.
            try! ChaChaPoly.Nonce(data: UnsafeRawBufferPointer(rebasing: bytes.prefix(12)))
        }
        return (SymmetricKey(data: t1), nonce)
    }

    /// ``aead(_:)`` of a message key kept as a `SymmetricKey` (a skipped key).
    static func aead(_ messageKey: SymmetricKey) -> (key: SymmetricKey, nonce: ChaChaPoly.Nonce) {
        messageKey.withUnsafeBytes { aead($0) }
    }

    /// ``aead(_:)`` of a message key just derived.
    static func aead(_ messageKey: MessageKey) -> (key: SymmetricKey, nonce: ChaChaPoly.Nonce) {
        messageKey.withUnsafeBytes { aead($0) }
    }

    /// `HMAC<SHA256>` keyed with `key`, given to it zero-padded to the block, the padding RFC 2104
    /// defines for a shorter key: the same MAC. Only for keys of at most a block (64 bytes): every
    /// key here is 32 bytes (chain keys, PRKs), by construction and as the stored state is checked.
    private static func keyedHMAC(_ key: UnsafeRawBufferPointer) -> HMAC<SHA256> {
        withUnsafeTemporaryAllocation(byteCount: SHA256.blockByteCount, alignment: 1) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            block.copyMemory(from: UnsafeRawBufferPointer(rebasing: key.prefix(SHA256.blockByteCount)))
            defer { block.initializeMemory(as: UInt8.self, repeating: 0) }
            return HMAC<SHA256>(key: SymmetricKey(data: UnsafeRawBufferPointer(block)))
        }
    }

    private static func mac(_ keyed: HMAC<SHA256>, byte: UInt8) -> MessageKey {
        withUnsafeBytes(of: byte) { mac(keyed, $0) }
    }

    private static func mac(_ keyed: HMAC<SHA256>, _ data: UnsafeRawBufferPointer) -> MessageKey {
        var hmac = keyed
        hmac.update(data: data)
        return hmac.finalize()
    }
}
