public import Crypto
public import Foundation

/// The Noise cipher functions this module implements (Noise revision 34, §12.3 and §12.4).
///
/// Both are 256-bit-key AEADs with a 16-byte tag and a 96-bit nonce built from the 64-bit counter;
/// they differ only in the nonce's byte order: ChaChaPoly is 4 zero bytes then the counter
/// **little-endian**, AESGCM 4 zero bytes then the counter **big-endian**.
public enum NoiseCipher: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `ChaChaPoly`: ChaCha20-Poly1305 (RFC 8439).
    case chaChaPoly = "ChaChaPoly"
    /// `AESGCM`: AES-256 in GCM mode.
    case aesGCM = "AESGCM"

    /// The cipher's name as a Noise protocol name spells it.
    public var description: String { rawValue }
}

/// A Noise cipher state: a key for one ``NoiseCipher`` and a 64-bit nonce (Noise revision 34, §5.1).
///
/// Obtain the transport pair from ``NoiseHandshake/split()``, or build one from a key with
/// ``init(key:)`` (e.g. for keys from ``NoiseHandshake/deriveKey(label:)``).
///
/// The mutating ``encrypt(_:authenticating:)`` and ``decrypt(_:authenticating:)`` use and advance
/// the internal ``nonce``, for in-order transports such as TCP. The explicit-nonce variants
/// ``encrypt(_:nonce:authenticating:)`` and ``decrypt(_:nonce:authenticating:)`` leave the state
/// alone; their caller (a UDP datagram layer) sends the nonce and runs its own replay window.
///
/// The ChaChaPoly nonce is 4 zero bytes followed by the 64-bit counter in little-endian order
/// (§12.3); the AESGCM nonce is 4 zero bytes followed by the counter big-endian (§12.4). The counter value 2^64-1 is reserved (§5.1): an operation at that nonce throws
/// ``NoiseError/Code/nonceExhausted``. Ciphertexts are at most 65535 bytes including the 16-byte
/// tag, so plaintexts are at most 65519 bytes.
///
/// This type is a value: copies are independent, and it is `Sendable`. Never reuse a nonce with
/// the same key: copying a state and encrypting with both copies does exactly that.
public struct NoiseCipherState: Sendable {
    /// The largest Noise message, ciphertext plus tag: 65535 bytes (§3).
    public static let maximumMessageLength = 65535
    /// The authentication tag length of both ciphers: 16 bytes.
    public static let tagLength = 16
    /// The largest plaintext that fits a Noise message: 65519 bytes.
    public static let maximumPlaintextLength = maximumMessageLength - tagLength
    /// The reserved nonce value 2^64-1, used only by ``rekey()``.
    public static let reservedNonce = UInt64.max

    /// The 256-bit key.
    @usableFromInline internal var key: SymmetricKey

    /// The cipher function the key is for.
    public let cipher: NoiseCipher

    /// Storage of ``nonce``; internal so the inlinable hot path can advance it.
    @usableFromInline internal var counter: UInt64

    /// The nonce the next mutating ``encrypt(_:authenticating:)`` or
    /// ``decrypt(_:authenticating:)`` will use; it counts messages processed.
    public var nonce: UInt64 { counter }

    /// Creates a cipher state with a key and nonce 0 (Noise `InitializeKey`).
    ///
    /// - Parameters:
    ///   - key: A 256-bit key.
    ///   - cipher: The cipher function; ChaChaPoly unless given.
    /// - Precondition: `key.bitCount == 256`; a key of any other size is a programming error.
    public init(key: SymmetricKey, cipher: NoiseCipher = .chaChaPoly) {
        self.init(key: key, cipher: cipher, nonce: 0)
    }

    /// Creates a cipher state at a given nonce. Internal: used by tests to reach the reserved nonce.
    internal init(key: SymmetricKey, cipher: NoiseCipher = .chaChaPoly, nonce: UInt64) {
        precondition(key.bitCount == 256, "a Noise cipher key has 256 bits")
        self.key = key
        self.cipher = cipher
        self.counter = nonce
    }

    // MARK: - In-order (stream) operations

    /// Encrypts a message with the current nonce, then advances the nonce (Noise `EncryptWithAd`).
    ///
    /// - Parameters:
    ///   - plaintext: At most ``maximumPlaintextLength`` bytes.
    ///   - ad: Associated data authenticated but not encrypted; empty by default.
    /// - Returns: The ciphertext followed by the 16-byte tag. The result may be a slice of a
    ///   larger buffer (to save a copy on the hot path): index it from `startIndex`, not from 0.
    /// - Throws: ``NoiseError/Code/messageTooLong`` when the plaintext exceeds
    ///   ``maximumPlaintextLength``; ``NoiseError/Code/nonceExhausted`` at nonce 2^64-1. On error
    ///   the nonce does not advance.
    @inlinable
    public mutating func encrypt(
        _ plaintext: some DataProtocol,
        authenticating ad: some DataProtocol = Data()
    ) throws(NoiseError) -> Data {
        let ciphertext = try encrypt(plaintext, nonce: nonce, authenticating: ad)
        counter &+= 1
        return ciphertext
    }

    /// Decrypts a message with the current nonce, then advances the nonce (Noise `DecryptWithAd`).
    ///
    /// - Parameters:
    ///   - ciphertext: Ciphertext followed by its 16-byte tag, at most 65535 bytes.
    ///   - ad: The associated data the sender authenticated; empty by default.
    /// - Returns: The plaintext.
    /// - Throws: ``NoiseError/Code/decryptFailed`` when authentication fails (the tag is checked
    ///   in constant time by ChaChaPoly); ``NoiseError/Code/messageTooShort`` below 16 bytes;
    ///   ``NoiseError/Code/messageTooLong`` above 65535; ``NoiseError/Code/nonceExhausted`` at
    ///   nonce 2^64-1. On error the nonce does not advance (§5.1).
    @inlinable
    public mutating func decrypt(
        _ ciphertext: some DataProtocol,
        authenticating ad: some DataProtocol = Data()
    ) throws(NoiseError) -> Data {
        let plaintext = try decrypt(ciphertext, nonce: nonce, authenticating: ad)
        counter &+= 1
        return plaintext
    }

    // MARK: - Explicit-nonce (datagram) operations

    /// Encrypts a message with an explicit nonce, leaving ``nonce`` unchanged.
    ///
    /// For datagrams: the caller picks a fresh nonce per message (never reusing one with this
    /// key) and sends it alongside the ciphertext.
    ///
    /// - Parameters:
    ///   - plaintext: At most ``maximumPlaintextLength`` bytes.
    ///   - nonce: The 64-bit counter; 2^64-1 is reserved.
    ///   - ad: Associated data authenticated but not encrypted; empty by default.
    /// - Returns: The ciphertext followed by the 16-byte tag (possibly a slice; index from
    ///   `startIndex`).
    /// - Throws: ``NoiseError/Code/messageTooLong`` or ``NoiseError/Code/nonceExhausted``.
    @inlinable
    public func encrypt(
        _ plaintext: some DataProtocol,
        nonce: UInt64,
        authenticating ad: some DataProtocol = Data()
    ) throws(NoiseError) -> Data {
        guard nonce != Self.reservedNonce else { throw .nonceExhausted() }
        let count = plaintext.count
        guard count <= Self.maximumPlaintextLength else {
            throw .messageTooLong("plaintext", count, maximum: Self.maximumPlaintextLength)
        }
        return Self.seal(plaintext, cipher: cipher, key: key, nonce: nonce, authenticating: ad)
    }

    /// Decrypts a message with an explicit nonce, leaving ``nonce`` unchanged.
    ///
    /// For datagrams: the caller reads the nonce from the datagram and checks it against its
    /// replay window after this call succeeds.
    ///
    /// - Parameters:
    ///   - ciphertext: Ciphertext followed by its 16-byte tag, at most 65535 bytes.
    ///   - nonce: The 64-bit counter the sender used; 2^64-1 is reserved.
    ///   - ad: The associated data the sender authenticated; empty by default.
    /// - Returns: The plaintext.
    /// - Throws: ``NoiseError/Code/decryptFailed``, ``NoiseError/Code/messageTooShort``,
    ///   ``NoiseError/Code/messageTooLong`` or ``NoiseError/Code/nonceExhausted``.
    @inlinable
    public func decrypt(
        _ ciphertext: some DataProtocol,
        nonce: UInt64,
        authenticating ad: some DataProtocol = Data()
    ) throws(NoiseError) -> Data {
        guard nonce != Self.reservedNonce else { throw .nonceExhausted() }
        let count = ciphertext.count
        guard count <= Self.maximumMessageLength else {
            throw .messageTooLong("ciphertext", count, maximum: Self.maximumMessageLength)
        }
        guard count >= Self.tagLength else {
            throw .messageTooShort("ciphertext", count, minimum: Self.tagLength)
        }
        return try Self.open(ciphertext, count: count, cipher: cipher, key: key, nonce: nonce, authenticating: ad)
    }

    // MARK: - Rekey

    /// Replaces the key with one derived from it, keeping the nonce (Noise `Rekey`, §4.2, §11.3).
    ///
    /// The new key is the first 32 bytes of `ENCRYPT(k, 2^64-1, zerolen, zeros(32))`. Both peers
    /// must rekey at the same point in the message stream.
    public mutating func rekey() {
        let zeros = Data(repeating: 0, count: 32)
        let sealed = Self.seal(zeros, cipher: cipher, key: key, nonce: Self.reservedNonce, authenticating: Data())
        key = SymmetricKey(data: sealed.prefix(32))
    }

    // MARK: - The ciphers

    /// The 12-byte nonce of `cipher` for `counter`: 4 zero bytes, then the counter little-endian
    /// (ChaChaPoly, §12.3) or big-endian (AESGCM, §12.4), built on the stack and passed to `body`.
    @inlinable
    internal static func withNonceBytes<R>(
        _ cipher: NoiseCipher,
        _ counter: UInt64,
        _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        // Three 32-bit words have no padding: exactly 12 bytes.
        let words: (UInt32, UInt32, UInt32)
        switch cipher {
        case .chaChaPoly:
            words = (0, UInt32(truncatingIfNeeded: counter).littleEndian, UInt32(truncatingIfNeeded: counter >> 32).littleEndian)
        case .aesGCM:
            words = (0, UInt32(truncatingIfNeeded: counter >> 32).bigEndian, UInt32(truncatingIfNeeded: counter).bigEndian)
        }
        return withUnsafeBytes(of: words, body)
    }

    /// Seals `plaintext`, returning ciphertext ‖ tag as a slice of the sealed box (no extra copy).
    @inlinable
    static func seal(
        _ plaintext: some DataProtocol,
        cipher: NoiseCipher,
        key: SymmetricKey,
        nonce counter: UInt64,
        authenticating ad: some DataProtocol
    ) -> Data {
        withNonceBytes(cipher, counter) { bytes in
            // A 12-byte nonce and a 256-bit key (init(key:) checks it) cannot make these throw.
            switch cipher {
            case .chaChaPoly:
                guard let nonce = try? ChaChaPoly.Nonce(data: bytes),
                      let box = try? ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: ad)
                else { preconditionFailure("ChaChaPoly refused a 12-byte nonce or a 256-bit key") }
                return box.combined.dropFirst(12)
            case .aesGCM:
                guard let nonce = try? AES.GCM.Nonce(data: bytes),
                      let box = try? AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: ad),
                      let combined = box.combined
                else { preconditionFailure("AES.GCM refused a 12-byte nonce or a 256-bit key") }
                return combined.dropFirst(12)
            }
        }
    }

    /// Opens ciphertext ‖ tag (`count` ≥ 16 bytes); `nil` when it does not authenticate.
    @inlinable
    static func open(
        _ ciphertext: some DataProtocol,
        count: Int,
        cipher: NoiseCipher,
        key: SymmetricKey,
        nonce counter: UInt64,
        authenticating ad: some DataProtocol
    ) throws(NoiseError) -> Data {
        let plaintext: Data? = withNonceBytes(cipher, counter) { nonce in
            // nonce ‖ ciphertext ‖ tag in one buffer of the exact size: one copy of the input.
            var combined = Data(capacity: 12 + count)
            combined.append(contentsOf: nonce)
            combined.append(contentsOf: ciphertext)
            switch cipher {
            case .chaChaPoly:
                guard let box = try? ChaChaPoly.SealedBox(combined: combined) else { return nil }
                return try? ChaChaPoly.open(box, using: key, authenticating: ad)
            case .aesGCM:
                guard let box = try? AES.GCM.SealedBox(combined: combined) else { return nil }
                return try? AES.GCM.open(box, using: key, authenticating: ad)
            }
        }
        guard let plaintext else { throw .decryptFailed("a message of \(count) bytes") }
        return plaintext
    }
}
