public import Crypto
public import Foundation

/// A Noise handshake in progress, for one side (Noise revision 34, §5.3).
///
/// `NoiseHandshake` is a pure value-type state machine: it does no I/O. Create one per side with
/// the protocol name, role, prologue and keys, then alternate ``writeMessage(payload:)`` and
/// ``readMessage(_:)`` following ``isMyTurnToWrite`` until ``isComplete``; finally take the
/// transport cipher states from ``split()``.
///
/// ```swift
/// var initiator = try NoiseHandshake(protocolName: "Noise_XX_25519_ChaChaPoly_SHA256",
///                                    initiator: true, prologue: Data(), staticKey: myKey)
/// let first = try initiator.writeMessage()         // -> e
/// // ... send, receive the reply ...
/// _ = try initiator.readMessage(reply)             // <- e, ee, s, es
/// let third = try initiator.writeMessage()         // -> s, se
/// let (send, receive) = try initiator.split()
/// ```
///
/// States: the value counts messages (``messageIndex``). Message `i` is written by the
/// initiator when `i` is even and by the responder when it is odd; writing or reading out of
/// turn throws ``NoiseError/Code/wrongTurn``. After the last message ``isComplete`` is `true`,
/// further handshake messages throw ``NoiseError/Code/handshakeAlreadyComplete``, and ``split()``
/// and ``deriveKey(label:)`` become available.
///
/// Failures are atomic: a throwing ``writeMessage(payload:)`` or ``readMessage(_:)`` leaves the
/// value exactly as it was. A failed read still means the peer (or the network) is misbehaving:
/// the caller should normally abandon the handshake.
///
/// One-way patterns (`N`, `K`, `X` and their psk variants) have a single message; afterwards only
/// the initiator sends, with ``split()``'s `send` state, and the responder only receives.
///
/// Randomness: ephemeral keys come from `Curve25519.KeyAgreement.PrivateKey()` unless one is
/// injected (test vectors only). The value never prints keys: its description and mirror show
/// only the protocol, role and progress.
public struct NoiseHandshake: Sendable {
    /// The protocol this handshake runs.
    public let protocolName: NoiseProtocolName
    /// Whether this side is the initiator (writes message 0).
    public let isInitiator: Bool
    /// How many handshake messages this side has written or read so far.
    public private(set) var messageIndex: Int = 0

    private var symmetric: SymmetricState
    private let localStatic: Curve25519.KeyAgreement.PrivateKey?
    private var localEphemeral: Curve25519.KeyAgreement.PrivateKey?
    private let presharedKeys: [SymmetricKey]
    private var presharedKeyIndex = 0
    private let isPSKMode: Bool

    /// The peer's static public key: from the pre-message, or once the peer has sent it.
    ///
    /// For patterns that transmit the static key (e.g. `XX`), check it against the expected
    /// identity before trusting the session.
    public private(set) var remoteStaticKey: Curve25519.KeyAgreement.PublicKey?
    /// The peer's ephemeral public key, once received.
    public private(set) var remoteEphemeralKey: Curve25519.KeyAgreement.PublicKey?

    /// Creates one side of a handshake.
    ///
    /// - Parameters:
    ///   - protocolName: A parsed protocol name, e.g. `Noise_XX_25519_ChaChaPoly_SHA256`.
    ///   - initiator: `true` for the side that writes the first message.
    ///   - prologue: Data both sides must agree on (mixed into the hash, never sent).
    ///   - staticKey: This side's static key pair; required when the pattern sends or uses it.
    ///     Ignored when the pattern never uses this side's static key.
    ///   - remoteStaticKey: The peer's static public key, required when the peer's pre-message
    ///     contains `s` (e.g. the responder's key for `IK`, `NK`, `X`, `K`).
    ///   - presharedKeys: 32-byte keys, one per `psk` token, used in order.
    ///   - ephemeralKey: A fixed ephemeral key, for test vectors only; normally generated.
    /// - Throws: ``NoiseError/Code/missingKey`` when the pattern needs a key not given;
    ///   ``NoiseError/Code/unexpectedKey`` for a remote static key the pattern transmits itself
    ///   or surplus preshared keys; ``NoiseError/Code/invalidKey`` for a preshared key that is
    ///   not 32 bytes; ``NoiseError/Code/unsupportedProtocol`` for pre-messages other than `s`.
    public init(
        protocolName: NoiseProtocolName,
        initiator: Bool,
        prologue: some DataProtocol,
        staticKey: Curve25519.KeyAgreement.PrivateKey? = nil,
        remoteStaticKey: Curve25519.KeyAgreement.PublicKey? = nil,
        presharedKeys: [SymmetricKey] = [],
        ephemeralKey: Curve25519.KeyAgreement.PrivateKey? = nil
    ) throws(NoiseError) {
        let pattern = protocolName.pattern
        let role = initiator ? "initiator" : "responder"
        let name = protocolName.rawValue
        guard (pattern.initiatorPreMessage + pattern.responderPreMessage).allSatisfy({ $0 == .s }) else {
            throw .unsupportedProtocol(name, "only static keys are supported in pre-messages")
        }
        if pattern.needsLocalStatic(initiator: initiator), staticKey == nil {
            throw .missingKey("\(name) needs the \(role)'s static key")
        }
        if pattern.needsRemoteStaticBeforehand(initiator: initiator) {
            guard remoteStaticKey != nil else {
                throw .missingKey("\(name) needs the \(role) to know the peer's static key beforehand")
            }
        } else if remoteStaticKey != nil {
            throw .unexpectedKey(
                "\(name) transmits or never uses the peer's static key; compare remoteStaticKey after the handshake instead"
            )
        }
        let needed = pattern.presharedKeyCount
        guard presharedKeys.count >= needed else {
            throw .missingKey("\(name) needs \(needed) preshared key(s), got \(presharedKeys.count)")
        }
        guard presharedKeys.count <= needed else {
            throw .unexpectedKey("\(name) uses \(needed) preshared key(s), got \(presharedKeys.count)")
        }
        for (index, key) in presharedKeys.enumerated() where key.bitCount != 256 {
            throw .invalidKey("preshared key \(index) has \(key.bitCount / 8) bytes, expected 32")
        }

        self.protocolName = protocolName
        self.isInitiator = initiator
        self.localStatic = staticKey
        self.localEphemeral = ephemeralKey
        self.remoteStaticKey = remoteStaticKey
        self.presharedKeys = presharedKeys
        self.isPSKMode = needed > 0

        // InitializeSymmetric, MixHash(prologue), then the pre-message keys: initiator's first.
        var symmetric = SymmetricState(protocolName: name, cipher: protocolName.cipher)
        symmetric.mixHash(prologue)
        for (owner, preMessage) in [(true, pattern.initiatorPreMessage), (false, pattern.responderPreMessage)] {
            for _ in preMessage {
                let key = owner == initiator ? staticKey?.publicKey : remoteStaticKey
                guard let key else { throw .missingKey("\(name) pre-message needs a static key") }
                symmetric.mixHash(key.rawRepresentation)
            }
        }
        self.symmetric = symmetric
    }

    /// Creates one side of a handshake from a protocol name string.
    ///
    /// - Parameters:
    ///   - protocolName: A full name such as `Noise_XXpsk3_25519_ChaChaPoly_SHA256`.
    ///   - initiator: `true` for the side that writes the first message.
    ///   - prologue: Data both sides must agree on.
    ///   - staticKey: This side's static key pair, when the pattern needs it.
    ///   - remoteStaticKey: The peer's static public key, when a pre-message needs it.
    ///   - presharedKeys: 32-byte keys, one per `psk` token.
    ///   - ephemeralKey: A fixed ephemeral key, for test vectors only.
    /// - Throws: ``NoiseError/Code/unsupportedProtocol`` for a name this module cannot run, and
    ///   otherwise the same errors as the initialiser taking a ``NoiseProtocolName``.
    public init(
        protocolName: String,
        initiator: Bool,
        prologue: some DataProtocol,
        staticKey: Curve25519.KeyAgreement.PrivateKey? = nil,
        remoteStaticKey: Curve25519.KeyAgreement.PublicKey? = nil,
        presharedKeys: [SymmetricKey] = [],
        ephemeralKey: Curve25519.KeyAgreement.PrivateKey? = nil
    ) throws(NoiseError) {
        try self.init(
            protocolName: try NoiseProtocolName(protocolName),
            initiator: initiator,
            prologue: prologue,
            staticKey: staticKey,
            remoteStaticKey: remoteStaticKey,
            presharedKeys: presharedKeys,
            ephemeralKey: ephemeralKey
        )
    }

    // MARK: - Queries

    /// Whether every handshake message has been written or read.
    public var isComplete: Bool { messageIndex >= protocolName.pattern.messages.count }

    /// Whether the next handshake step is this side's ``writeMessage(payload:)``; `false` when
    /// the peer should write next or the handshake is complete.
    public var isMyTurnToWrite: Bool { !isComplete && (messageIndex % 2 == 0) == isInitiator }

    /// The handshake hash `h`: valid at any time, final once ``isComplete`` (§11.2, channel binding).
    ///
    /// Both sides hold the same value after completion; it is not secret but unique per handshake.
    public var handshakeHash: Data { symmetric.handshakeHash }

    // MARK: - Inputs

    /// Writes the next handshake message (Noise `WriteMessage`).
    ///
    /// - Parameter payload: Application data carried in the message; encrypted once a key has
    ///   been established (in clear in e.g. the first message of `XX`). Empty by default.
    /// - Returns: The message to send to the peer, at most 65535 bytes.
    /// - Throws: ``NoiseError/Code/wrongTurn`` when the peer should write,
    ///   ``NoiseError/Code/handshakeAlreadyComplete`` after the last message,
    ///   ``NoiseError/Code/messageTooLong`` when the message would exceed 65535 bytes,
    ///   ``NoiseError/Code/nonceExhausted`` (not reachable in practice). On error nothing changes.
    public mutating func writeMessage(payload: some DataProtocol = Data()) throws(NoiseError) -> Data {
        try checkTurn(writing: true)
        let maximum = NoiseCipherState.maximumMessageLength
        let payloadCount = payload.count
        guard payloadCount <= maximum else { throw .messageTooLong("handshake payload", payloadCount, maximum: maximum) }

        var next = self
        var message = Data()
        for token in protocolName.pattern.messages[messageIndex] {
            switch token {
            case .e:
                let ephemeral = next.localEphemeral ?? Curve25519.KeyAgreement.PrivateKey()
                next.localEphemeral = ephemeral
                let publicKey = ephemeral.publicKey.rawRepresentation
                message.append(publicKey)
                next.symmetric.mixHash(publicKey)
                if isPSKMode { next.symmetric.mixKey(publicKey) }
            case .s:
                guard let localStatic else { throw .missingKey("\(protocolName) needs this side's static key") }
                message.append(try next.symmetric.encryptAndHash(localStatic.publicKey.rawRepresentation))
            case .ee, .es, .se, .ss:
                try next.mixDH(token)
            case .psk:
                next.mixNextPresharedKey()
            }
        }
        message.append(try next.symmetric.encryptAndHash(payload))
        guard message.count <= maximum else {
            throw .messageTooLong("handshake message", message.count, maximum: maximum)
        }
        next.messageIndex += 1
        self = next
        return message
    }

    /// Reads the peer's next handshake message (Noise `ReadMessage`).
    ///
    /// - Parameter message: The bytes received from the peer.
    /// - Returns: The payload the peer sent in this message.
    /// - Throws: ``NoiseError/Code/decryptFailed`` when an encrypted static key or the payload
    ///   fails authentication (tampering, wrong prologue, wrong keys);
    ///   ``NoiseError/Code/messageTooShort`` when key or tag bytes are missing;
    ///   ``NoiseError/Code/messageTooLong`` above 65535 bytes; ``NoiseError/Code/wrongTurn``
    ///   when this side should write; ``NoiseError/Code/handshakeAlreadyComplete`` after the
    ///   last message. On error nothing changes.
    public mutating func readMessage(_ message: some DataProtocol) throws(NoiseError) -> Data {
        try checkTurn(writing: false)
        let maximum = NoiseCipherState.maximumMessageLength
        let bytes = Data(message)
        guard bytes.count <= maximum else { throw .messageTooLong("handshake message", bytes.count, maximum: maximum) }

        var next = self
        var offset = bytes.startIndex
        let keyLength = 32
        let index = messageIndex
        func take(_ count: Int) throws(NoiseError) -> Data {
            guard bytes.endIndex - offset >= count else {
                throw .messageTooShort(
                    "handshake message \(index) (\(protocolName.pattern.name))", bytes.count,
                    minimum: offset - bytes.startIndex + count
                )
            }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
        for token in protocolName.pattern.messages[messageIndex] {
            switch token {
            case .e:
                let raw = try take(keyLength)
                next.remoteEphemeralKey = try Self.publicKey(raw, "remote ephemeral key")
                next.symmetric.mixHash(raw)
                if isPSKMode { next.symmetric.mixKey(raw) }
            case .s:
                let length = keyLength + (next.symmetric.hasKey ? NoiseCipherState.tagLength : 0)
                let sealed = try take(length)
                let raw = try next.symmetric.decryptAndHash(sealed, what: "the remote static key in message \(index)")
                next.remoteStaticKey = try Self.publicKey(raw, "remote static key")
            case .ee, .es, .se, .ss:
                try next.mixDH(token)
            case .psk:
                next.mixNextPresharedKey()
            }
        }
        let payload = try next.symmetric.decryptAndHash(bytes[offset...], what: "the payload of message \(index)")
        next.messageIndex += 1
        self = next
        return Data(payload)
    }

    // MARK: - Results

    /// Splits the finished handshake into the two transport cipher states (Noise `Split`).
    ///
    /// `send` encrypts this side's messages and `receive` decrypts the peer's: for the initiator
    /// `send` is the initiator→responder state, for the responder it is responder→initiator.
    /// Both start at nonce 0. For one-way patterns the responder's `send` must not be used.
    ///
    /// - Returns: The cipher states oriented for this side.
    /// - Throws: ``NoiseError/Code/handshakeNotComplete`` before the last message.
    public func split() throws(NoiseError) -> (send: NoiseCipherState, receive: NoiseCipherState) {
        guard isComplete else { throw .handshakeNotComplete("split()") }
        let states = symmetric.split()
        return isInitiator
            ? (states.initiatorToResponder, states.responderToInitiator)
            : (states.responderToInitiator, states.initiatorToResponder)
    }

    /// Derives an extra 32-byte key bound to this handshake, e.g. for UDP datagram keys.
    ///
    /// Definition (part of the wire spec): with `ck` the final chaining key (the one `Split()`
    /// uses), the key is RFC 5869 HKDF-SHA256 with salt `ck`, a zero-length input key material,
    /// info the UTF-8 bytes of `label`, and output length 32:
    ///
    ///     temp_key = HMAC-SHA256(key: ck, message: "")
    ///     key      = HMAC-SHA256(key: temp_key, message: UTF8(label) ‖ 0x01)
    ///
    /// Noise's own `Split()` computes `HMAC-SHA256(temp_key, 0x01)` and
    /// `HMAC-SHA256(temp_key, k1 ‖ 0x02)` from the same `temp_key`, so any non-empty label gives
    /// a key independent of both transport keys. Both sides derive the same key for the same label.
    ///
    /// - Parameter label: A non-empty, application-chosen label, e.g. `"meshchat datagram i2r"`.
    /// - Returns: A 256-bit key.
    /// - Throws: ``NoiseError/Code/handshakeNotComplete`` before the last message;
    ///   ``NoiseError/Code/invalidArgument`` for an empty label (it would equal the first
    ///   transport key).
    public func deriveKey(label: String) throws(NoiseError) -> SymmetricKey {
        guard isComplete else { throw .handshakeNotComplete("deriveKey(label:)") }
        guard !label.isEmpty else { throw .invalidArgument("deriveKey(label:) needs a non-empty label") }
        return symmetric.deriveKey(label: Data(label.utf8))
    }

    /// The chaining key, for tests that check the ``deriveKey(label:)`` formula. Internal.
    internal var chainingKeyForTesting: Data { symmetric.chainingKey.withUnsafeBytes { Data($0) } }

    // MARK: - Token processing

    private func checkTurn(writing: Bool) throws(NoiseError) {
        let operation = writing ? "writeMessage" : "readMessage"
        guard !isComplete else { throw .handshakeAlreadyComplete(operation) }
        guard isMyTurnToWrite == writing else {
            throw .wrongTurn(operation, protocolName.pattern.name, messageIndex: messageIndex, initiator: isInitiator)
        }
    }

    /// `MixKey(DH(...))` for a DH token, choosing keys by role: `es` is DH(e, rs) for the
    /// initiator and DH(s, re) for the responder; `se` the reverse.
    private mutating func mixDH(_ token: NoiseToken) throws(NoiseError) {
        let useLocalEphemeral: Bool
        let useRemoteEphemeral: Bool
        switch token {
        case .ee: (useLocalEphemeral, useRemoteEphemeral) = (true, true)
        case .ss: (useLocalEphemeral, useRemoteEphemeral) = (false, false)
        case .es: (useLocalEphemeral, useRemoteEphemeral) = (isInitiator, !isInitiator)
        case .se: (useLocalEphemeral, useRemoteEphemeral) = (!isInitiator, isInitiator)
        case .e, .s, .psk: preconditionFailure("mixDH called with non-DH token \(token)")
        }
        guard let local = useLocalEphemeral ? localEphemeral : localStatic else {
            throw .missingKey("\(token) needs this side's \(useLocalEphemeral ? "ephemeral" : "static") key")
        }
        guard let remote = useRemoteEphemeral ? remoteEphemeralKey : remoteStaticKey else {
            throw .missingKey("\(token) needs the peer's \(useRemoteEphemeral ? "ephemeral" : "static") key")
        }
        let secret: SharedSecret
        do {
            secret = try local.sharedSecretFromKeyAgreement(with: remote)
        } catch {
            throw .invalidKey("X25519 key agreement failed for \(token)")
        }
        symmetric.mixKey(secret)
    }

    private mutating func mixNextPresharedKey() {
        // init checked that there is one key per psk token.
        symmetric.mixKeyAndHash(presharedKeys[presharedKeyIndex])
        presharedKeyIndex += 1
    }

    private static func publicKey(_ raw: Data, _ what: String) throws(NoiseError) -> Curve25519.KeyAgreement.PublicKey {
        do {
            return try Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw)
        } catch {
            throw .invalidKey("\(what) is not a valid X25519 public key")
        }
    }
}
