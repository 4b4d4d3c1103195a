import Crypto
import CryptoExtras
import struct Foundation.Data

/// The key derivations of the ratchet (PROTOCOL.md §19.3, protocol version 6):
///
/// - `KDF_RK(rk, dh)`: HKDF-SHA256 with salt `rk`, input `dh`, info `"meshchat-ratchet-root"`,
///   64 bytes: the new root key, then the new chain key (Signal's specification, §5.2; once per
///   Diffie-Hellman step).
/// - `KDF_CK(ck)`: the first ChaCha20 block (RFC 8439 §2.3) under the chain key, nonce 0, counter 0:
///   64 bytes, the next chain key then the message key (the "fast-key-erasure" construction; §19.5
///   argues it).
/// - A message key is the ChaCha20-Poly1305 key of exactly one message, with the all-zero nonce.
///
/// Version 5 derived the chain with `HMAC-SHA256` and expanded each message key with HKDF: about five
/// HMACs per message and side, which were most of a line's cost (README, "End-to-end sealing"). Now
/// a message costs one ChaCha20 block and the AEAD it needs anyway, and no hash. The ChaCha20 block
/// is BoringSSL's (`Insecure.ChaCha20CTR`, swift-crypto's `CryptoExtras`): nothing is implemented here.
/// The vectors in `Protocol/vectors/ratchet.json` and `Protocol/reference/ratchet.py --check` hold
/// the bytes.
enum RatchetKDF {
    static let rootInfo = Data("meshchat-ratchet-root".utf8)

    /// A message key: the ChaCha20-Poly1305 key of one message.
    typealias MessageKey = SymmetricKey

    /// ChaCha20's input for a chain step: 64 zero bytes (the keystream block is the output).
    private static let zeroBlock = Data(count: 64)
    /// The chain step's ChaCha20 nonce (12 zero bytes; the counter is 0).
    private static let chainNonce = try! Insecure.ChaCha20CTR.Nonce(data: [UInt8](repeating: 0, count: 12))
    /// The AEAD nonce of every message: 12 zero bytes (each message key seals one message).
    static let messageNonce = try! ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12))

    /// `KDF_RK`: a Diffie-Hellman output mixed into the root key.
    static func root(_ rootKey: SymmetricKey, _ dhOutput: SharedSecret) -> (root: SymmetricKey, chain: SymmetricKey) {
        let derived = dhOutput.hkdfDerivedSymmetricKey(using: SHA256.self, salt: rootKey.withUnsafeBytes { Data($0) },
                                                       sharedInfo: rootInfo, outputByteCount: 64)
        return derived.withUnsafeBytes { bytes in
            (SymmetricKey(data: bytes.prefix(32)), SymmetricKey(data: bytes.suffix(32)))
        }
    }

    /// `KDF_CK`: one step of a sending or receiving chain, one ChaCha20 block under the chain key.
    /// Chain keys are 32 bytes by construction (``root(_:_:)``, this function) and as a stored
    /// state is checked, so ChaCha20 cannot refuse the key.
    static func chain(_ chainKey: SymmetricKey) -> (chain: SymmetricKey, message: MessageKey) {
        var block = try! Insecure.ChaCha20CTR.encrypt(zeroBlock, using: chainKey, nonce: chainNonce)
        // One access to the block: both keys are read as plain buffers (a `Slice` of one goes through
        // Foundation's generic `ContiguousBytes` witness), then the block is zeroed.
        return block.withUnsafeMutableBytes { bytes in
            precondition(bytes.count == 64)  // one ChaCha20 block of the 64-byte input
            let keys = (SymmetricKey(data: UnsafeRawBufferPointer(rebasing: bytes[0 ..< 32])),
                        SymmetricKey(data: UnsafeRawBufferPointer(rebasing: bytes[32 ..< 64])))
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            return keys
        }
    }
}
