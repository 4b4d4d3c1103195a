import Crypto
import Foundation

/// One end of a Double Ratchet session (Signal's specification, revision 1; since protocol version 6
/// each chain step is one ChaCha20 block, PROTOCOL.md §19.3, ``RatchetKDF``): a new symmetric key
/// for every message and a new Diffie-Hellman exchange whenever the direction of the conversation
/// turns, which gives forward secrecy (a key leaked later does not open earlier messages) and
/// post-compromise security (a session whose state leaked heals after one round trip).
///
/// A value: every input is a `mutating` method that either succeeds or leaves the state exactly as it
/// was (a forged, replayed or corrupted message changes nothing). Randomness is a parameter. Keys
/// that are used are dropped at once; skipped keys (for out-of-order and lost messages) are bounded
/// by ``RatchetLimits``.
///
/// Start a session with ``PrekeyAgreement``: the initiator with ``init(initiatorSecret:responderRatchetKey:associatedData:limits:using:)``,
/// the responder with ``init(responderSecret:ratchetKey:associatedData:limits:)``. The responder can
/// send once it has decrypted the initiator's first message.
public struct DoubleRatchet: Sendable {
    /// Which skipped message key: the sender's ratchet key and the message number.
    struct SkippedIndex: Hashable, Sendable {
        var ratchetKey: Data
        var number: UInt32
    }

    var rootKey: SymmetricKey
    var sendingRatchet: Curve25519.KeyAgreement.PrivateKey {
        didSet { sendingRatchetKey = sendingRatchet.publicKey.rawRepresentation }
    }
    /// ``sendingRatchet``'s public key, the key every message's header carries (kept, not rebuilt per message).
    public internal(set) var sendingRatchetKey: Data
    var receivingRatchet: Data?
    var sendingChain: SymmetricKey?
    var receivingChain: SymmetricKey?
    var sentCount: UInt32 = 0
    var receivedCount: UInt32 = 0
    var previousSentCount: UInt32 = 0
    var skipped: [SkippedIndex: SymmetricKey] = [:]
    /// Skipped keys in the order they were stored, for forgetting the oldest (may hold indexes
    /// already used; compacted as it grows).
    var skippedOrder: [SkippedIndex] = []
    /// Bound into every message's authentication (the two identities, from the agreement).
    public let associatedData: Data
    /// The bounds on skipped keys.
    public let limits: RatchetLimits
    /// A ChaCha20-Poly1305 nonce's size (the box's `combined` starts with it).
    private static let nonceByteCount = 12

    /// Starts the initiator's end, which can send at once.
    /// - Parameters:
    ///   - initiatorSecret: the shared secret ``PrekeyAgreement/initiate(identity:responderIdentity:responderPrekey:ephemeral:)`` gave.
    ///   - responderRatchetKey: the responder's signed prekey (its first ratchet key).
    ///   - associatedData: bytes both ends bind into every message (the agreement's).
    ///   - limits: bounds on skipped keys.
    ///   - generator: the source of the new ratchet key.
    /// - Throws: ``RatchetError`` `invalidKey` when the prekey is a low-order point.
    public init(initiatorSecret: SymmetricKey, responderRatchetKey: Curve25519.KeyAgreement.PublicKey, associatedData: Data,
                limits: RatchetLimits = RatchetLimits(), using generator: inout some RandomNumberGenerator) throws(RatchetError) {
        let ratchet = Self.newRatchetKey(using: &generator)
        let dh = try Self.agree(ratchet, responderRatchetKey)
        let (root, chain) = RatchetKDF.root(initiatorSecret, dh)
        self.rootKey = root
        self.sendingRatchet = ratchet
        self.sendingRatchetKey = ratchet.publicKey.rawRepresentation
        self.receivingRatchet = responderRatchetKey.rawRepresentation
        self.sendingChain = chain
        self.associatedData = associatedData
        self.limits = limits
    }

    /// Starts the responder's end, which can send once it has decrypted the initiator's first message.
    /// - Parameters:
    ///   - responderSecret: the shared secret ``PrekeyAgreement/respond(identity:prekey:initiatorIdentity:initiatorEphemeral:)`` gave.
    ///   - ratchetKey: the signed prekey's private key the initiator used.
    ///   - associatedData: the agreement's associated data.
    ///   - limits: bounds on skipped keys.
    public init(responderSecret: SymmetricKey, ratchetKey: Curve25519.KeyAgreement.PrivateKey, associatedData: Data,
                limits: RatchetLimits = RatchetLimits()) {
        self.rootKey = responderSecret
        self.sendingRatchet = ratchetKey
        self.sendingRatchetKey = ratchetKey.publicKey.rawRepresentation
        self.associatedData = associatedData
        self.limits = limits
    }

    /// Whether ``encrypt(_:additionalData:)`` can be used (false only for a responder that has not yet
    /// received a message).
    public var canSend: Bool { sendingChain != nil }

    /// Encrypts one message with the next message key of the sending chain.
    /// - Parameters:
    ///   - plaintext: the message.
    ///   - additionalData: more bytes to authenticate with this message (for example its routed header).
    /// - Returns: the header and the ciphertext with its 16-byte tag.
    /// - Throws: ``RatchetError`` `notReadyToSend` before a responder has received anything, or
    ///   `tooManySkipped` after 2³² − 1 messages in one chain.
    public mutating func encrypt(_ plaintext: some DataProtocol, additionalData: Data = Data()) throws(RatchetError) -> RatchetMessage {
        try encrypt(plaintext, additionalCount: additionalData.count) { $0.append(bytesOf: additionalData) }
    }

    /// ``encrypt(_:additionalData:)`` with the additional data appended by `appendAdditional` straight
    /// into the AEAD's associated data, so that it needs no buffer of its own.
    /// - Parameters:
    ///   - plaintext: the message.
    ///   - additionalCount: how many bytes `appendAdditional` appends (reserved ahead; a hint).
    ///   - appendAdditional: appends the additional data.
    mutating func encrypt(_ plaintext: some DataProtocol, additionalCount: Int,
                          appendAdditional: (inout [UInt8]) -> Void) throws(RatchetError) -> RatchetMessage {
        guard let chain = sendingChain else {
            throw RatchetError(.notReadyToSend, "the responder has not received the initiator's first message")
        }
        guard sentCount < UInt32.max else { throw RatchetError(.tooManySkipped, "a sending chain of 2^32 - 1 messages") }
        let (next, messageKey) = RatchetKDF.chain(chain)
        let header = RatchetHeader(ratchetKey: sendingRatchetKey, previousCount: previousSentCount, number: sentCount)
        // Sealing with a valid key and nonce cannot fail in swift-crypto.
        let box = try! ChaChaPoly.seal(plaintext, using: messageKey, nonce: RatchetKDF.messageNonce,
                                       authenticating: authenticated(header, additionalCount, appendAdditional))
        sendingChain = next
        sentCount += 1
        // `nonce ‖ ciphertext ‖ tag`: the message keeps the last two, sharing the box's bytes.
        return RatchetMessage(header: header, ciphertext: box.combined.dropFirst(Self.nonceByteCount))
    }

    /// Decrypts a message, stepping the ratchet as its header asks. On any failure the state is unchanged.
    /// - Parameters:
    ///   - message: a message from the other end.
    ///   - additionalData: the bytes the sender authenticated with it.
    ///   - generator: the source of a new ratchet key (used when the message starts a new chain).
    /// - Returns: the plaintext.
    /// - Throws: ``RatchetError`` `authenticationFailed` (tampered, foreign, replayed or forgotten),
    ///   `tooManySkipped` (over ``RatchetLimits/maxSkip``), `malformed`.
    public mutating func decrypt(_ message: RatchetMessage, additionalData: Data = Data(),
                                 using generator: inout some RandomNumberGenerator) throws(RatchetError) -> Data {
        try decrypt(message, additionalCount: additionalData.count, appendAdditional: { $0.append(bytesOf: additionalData) },
                    using: &generator)
    }

    /// ``decrypt(_:additionalData:using:)`` with the additional data appended by `appendAdditional`
    /// (of about `additionalCount` bytes) straight into the AEAD's associated data.
    mutating func decrypt(_ message: RatchetMessage, additionalCount: Int, appendAdditional: (inout [UInt8]) -> Void,
                          using generator: inout some RandomNumberGenerator) throws(RatchetError) -> Data {
        let header = message.header
        if !skipped.isEmpty, case let index = SkippedIndex(ratchetKey: header.ratchetKey, number: header.number),
           let messageKey = skipped[index] {
            let plaintext = try open(message, messageKey: messageKey, additionalCount: additionalCount, appendAdditional: appendAdditional)
            skipped[index] = nil
            return plaintext
        }
        // The usual case, the next message of the current receiving chain: nothing to skip and no
        // ratchet step, so the state changes only once the message has opened (no copy of it).
        if header.number == receivedCount, header.number < UInt32.max, let chain = receivingChain,
           header.ratchetKey == receivingRatchet {
            let (nextChain, messageKey) = RatchetKDF.chain(chain)
            let plaintext = try open(message, messageKey: messageKey, additionalCount: additionalCount, appendAdditional: appendAdditional)
            receivingChain = nextChain
            receivedCount = header.number + 1
            return plaintext
        }
        var next = self
        if header.ratchetKey != receivingRatchet {
            try next.skipKeys(until: header.previousCount)
            try next.ratchetStep(header, using: &generator)
        }
        guard header.number < UInt32.max else { throw RatchetError(.malformed, "a message number of 2^32 - 1") }
        try next.skipKeys(until: header.number)
        guard let chain = next.receivingChain else {
            throw RatchetError(.malformed, "no receiving chain")  // unreachable after a ratchet step
        }
        let (nextChain, messageKey) = RatchetKDF.chain(chain)
        next.receivingChain = nextChain
        next.receivedCount = header.number + 1
        let plaintext = try next.open(message, messageKey: messageKey, additionalCount: additionalCount, appendAdditional: appendAdditional)
        next.forgetOldestSkipped()
        self = next
        return plaintext
    }

    /// The number the next message of the current sending chain gets.
    public var nextMessageNumber: UInt32 { sentCount }

    /// How many skipped message keys are stored.
    public var skippedCount: Int { skipped.count }

    /// Moves the sending chain on to message `number` without sending, dropping the keys in between:
    /// after a restart from a stored state, the numbers that state had reserved may have been used
    /// already, and a message key must never seal two messages.
    /// - Parameter number: the next message number to use; a number at or below the current one changes nothing.
    /// - Throws: ``RatchetError`` `malformed` when the jump exceeds ``RatchetLimits/ceiling`` (a damaged state).
    public mutating func skipSending(to number: UInt32) throws(RatchetError) {
        guard var chain = sendingChain, number > sentCount else { return }
        guard number - sentCount <= UInt32(RatchetLimits.ceiling) else {
            throw RatchetError(.malformed, "a stored reservation \(number - sentCount) messages ahead")
        }
        while sentCount < number {
            chain = RatchetKDF.chain(chain).chain
            sentCount += 1
        }
        sendingChain = chain
    }

    // MARK: Internals

    /// Opens `message` with its message key (the AEAD key, with ``RatchetKDF/messageNonce``).
    private func open(_ message: RatchetMessage, messageKey: SymmetricKey,
                      additionalCount: Int, appendAdditional: (inout [UInt8]) -> Void) throws(RatchetError) -> Data {
        guard message.ciphertext.count >= 16 else {
            throw RatchetError(.malformed, "a ratchet message of \(message.ciphertext.count) bytes (at least 16)")
        }
        // `nonce ‖ ciphertext ‖ tag` in one buffer, the box's own layout (no further copy), written in
        // one access: both copies are sized by the buffers they copy from.
        var combined = Data(count: Self.nonceByteCount + message.ciphertext.count)
        combined.withUnsafeMutableBytes { out in
            var writer = ByteWriter(out)
            RatchetKDF.messageNonce.withUnsafeBytes { writer.put($0) }
            message.ciphertext.withUnsafeBytes { writer.put($0) }
        }
        do {
            let box = try ChaChaPoly.SealedBox(combined: combined)
            return try ChaChaPoly.open(box, using: messageKey, authenticating: authenticated(message.header, additionalCount, appendAdditional))
        } catch {
            throw RatchetError(.authenticationFailed, "a ratchet message did not authenticate")
        }
    }

    /// `associatedData ‖ header ‖ additional data`, the AEAD's associated data, in one array.
    private func authenticated(_ header: RatchetHeader, _ additionalCount: Int,
                               _ appendAdditional: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(associatedData.count + RatchetHeader.byteCount + additionalCount)
        bytes.append(bytesOf: associatedData)
        header.encode(into: &bytes)
        appendAdditional(&bytes)
        return bytes
    }

    /// Derives and keeps the receiving chain's keys up to (not including) message `until`.
    private mutating func skipKeys(until: UInt32) throws(RatchetError) {
        guard var chain = receivingChain, let ratchetKey = receivingRatchet else { return }
        guard until >= receivedCount else { return }
        let maxSkip = min(limits.maxSkip, UInt32(RatchetLimits.ceiling))
        guard until - receivedCount <= maxSkip else {
            throw RatchetError(.tooManySkipped,
                               "a message \(until - receivedCount) ahead of the chain (maximum \(maxSkip))")
        }
        while receivedCount < until {
            let (next, messageKey) = RatchetKDF.chain(chain)
            let index = SkippedIndex(ratchetKey: ratchetKey, number: receivedCount)
            skipped[index] = messageKey
            skippedOrder.append(index)
            chain = next
            receivedCount += 1
        }
        receivingChain = chain
    }

    /// The Diffie-Hellman ratchet: the other end's new ratchet key starts a receiving chain, and a
    /// new key of ours a sending chain.
    private mutating func ratchetStep(_ header: RatchetHeader, using generator: inout some RandomNumberGenerator) throws(RatchetError) {
        guard let theirs = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: header.ratchetKey) else {
            throw RatchetError(.malformed, "a ratchet header with an invalid public key")
        }
        previousSentCount = sentCount
        sentCount = 0
        receivedCount = 0
        receivingRatchet = header.ratchetKey
        (rootKey, receivingChain) = RatchetKDF.root(rootKey, try Self.agree(sendingRatchet, theirs))
        sendingRatchet = Self.newRatchetKey(using: &generator)
        (rootKey, sendingChain) = RatchetKDF.root(rootKey, try Self.agree(sendingRatchet, theirs))
    }

    /// Keeps at most ``RatchetLimits/maxStoredSkipped`` skipped keys, forgetting the oldest.
    private mutating func forgetOldestSkipped() {
        let bound = min(max(limits.maxStoredSkipped, 0), RatchetLimits.ceiling)
        var dropped = 0
        while skipped.count > bound, dropped < skippedOrder.count {
            skipped[skippedOrder[dropped]] = nil
            dropped += 1
        }
        if dropped > 0 { skippedOrder.removeFirst(dropped) }
        if skippedOrder.count > 2 * max(bound, 16) {
            skippedOrder.removeAll { skipped[$0] == nil }
        }
    }

    /// A new ratchet key: 32 bytes from four successive `next()` values, each little-endian (so a
    /// generator that replays known keys reproduces the test vectors).
    static func newRatchetKey(using generator: inout some RandomNumberGenerator) -> Curve25519.KeyAgreement.PrivateKey {
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        for _ in 0..<4 { withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) } }
        // Any 32 bytes are a valid X25519 private key (clamped on use).
        return try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes)
    }

    /// X25519; a low-order public key (whose result would be all zeros) is refused.
    static func agree(_ mine: Curve25519.KeyAgreement.PrivateKey,
                      _ theirs: Curve25519.KeyAgreement.PublicKey) throws(RatchetError) -> SharedSecret {
        do {
            return try mine.sharedSecretFromKeyAgreement(with: theirs)
        } catch {
            throw RatchetError(.invalidKey, "a low-order X25519 public key")
        }
    }
}

/// A ratchet message: the clear header and the ciphertext with its tag.
public struct RatchetMessage: Hashable, Sendable {
    /// The header (authenticated, not encrypted).
    public var header: RatchetHeader
    /// The ciphertext followed by the 16-byte Poly1305 tag.
    public var ciphertext: Data

    /// Creates a message from its parts.
    public init(header: RatchetHeader, ciphertext: Data) {
        self.header = header
        self.ciphertext = ciphertext
    }

    /// `header (40) ‖ ciphertext ‖ tag (16)`.
    public var encoded: Data { header.encoded + ciphertext }

    /// Decodes a message.
    /// - Parameter data: at least 56 bytes; the ciphertext shares its bytes (a slice of it).
    /// - Throws: ``RatchetError`` `malformed`.
    public init(decoding data: Data) throws(RatchetError) {
        guard data.count >= RatchetHeader.byteCount + 16 else {
            throw RatchetError(.malformed, "a ratchet message of \(data.count) bytes (at least \(RatchetHeader.byteCount + 16))")
        }
        let start = data.startIndex
        header = try RatchetHeader(decoding: data[start ..< start + RatchetHeader.byteCount])
        ciphertext = data[(start + RatchetHeader.byteCount)...]
    }
}
