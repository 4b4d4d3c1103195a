/// An error from the Noise handshake or a Noise cipher state.
///
/// Errors carry a ``code`` for programs and a ``description`` for people that names what failed,
/// the limit and the value, e.g. "message of 65536 bytes exceeds the Noise maximum 65535".
/// Two errors are equal when their codes are equal, so tests and callers can match on
/// `error.code == .decryptFailed` without caring about the text.
///
/// Messages never contain key material, shared secrets, hashes or plaintext: they are safe to log.
public struct NoiseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of Noise error this is.
    public enum Code: Hashable, Sendable {
        /// The protocol name is malformed, or names a pattern, modifier, DH, cipher or hash this
        /// implementation does not support (only `25519`, `ChaChaPoly`, `AESGCM` and `SHA256` are).
        case unsupportedProtocol
        /// A key has the wrong size or is otherwise unusable (e.g. a 31-byte public key in a
        /// handshake message, a preshared key that is not 32 bytes).
        case invalidKey
        /// Authenticated decryption failed: the message was tampered with, truncated, sent under a
        /// different key or prologue, or replayed at a different nonce.
        case decryptFailed
        /// A handshake or transport message is longer than the Noise maximum of 65535 bytes.
        case messageTooLong
        /// A message is shorter than its pattern requires (missing key bytes or tag).
        case messageTooShort
        /// The cipher state's nonce reached 2^64-1, which Noise reserves; rekey or re-handshake.
        case nonceExhausted
        /// `writeMessage` was called when the peer should write, or `readMessage` when this side should.
        case wrongTurn
        /// An operation that needs a finished handshake (`split`, `deriveKey`) was called too early.
        case handshakeNotComplete
        /// A handshake message was written or read after the handshake finished.
        case handshakeAlreadyComplete
        /// The pattern needs a key that was not given: a local static key, the remote static key
        /// of a pre-message, or a preshared key.
        case missingKey
        /// A key was given that the pattern cannot use (e.g. a remote static key for `XX`, whose
        /// responder sends its static key in the handshake), or too many preshared keys.
        case unexpectedKey
        /// An argument is out of its domain (e.g. an empty label for `deriveKey`).
        case invalidArgument
    }

    /// What kind of error this is.
    public let code: Code
    /// A human-readable explanation naming what failed; never contains key material.
    public let message: String

    /// The explanation, for logs and error events.
    public var description: String { message }

    /// Creates an error with a code and an explanation.
    ///
    /// Prefer the static constructors inside this module; this initialiser exists so that code
    /// built on MeshNoise can wrap its own diagnostics in the same type.
    ///
    /// - Parameters:
    ///   - code: What kind of error this is.
    ///   - message: A human-readable explanation; must not contain key material.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: `true` when both errors have the same ``code``.
    public static func == (lhs: NoiseError, rhs: NoiseError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with ``==(_:_:)``.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

// MARK: - Constructors

extension NoiseError {
    @usableFromInline @inline(never)
    static func unsupportedProtocol(_ name: String, _ why: String) -> NoiseError {
        NoiseError(.unsupportedProtocol, "unsupported Noise protocol \"\(name)\": \(why)")
    }

    @usableFromInline @inline(never)
    static func invalidKey(_ why: String) -> NoiseError { NoiseError(.invalidKey, why) }

    @usableFromInline @inline(never)
    static func decryptFailed(_ what: String) -> NoiseError {
        NoiseError(.decryptFailed, "authentication failed while decrypting \(what)")
    }

    @usableFromInline @inline(never)
    static func messageTooLong(_ what: String, _ length: Int, maximum: Int) -> NoiseError {
        NoiseError(.messageTooLong, "\(what) of \(length) bytes exceeds the maximum \(maximum)")
    }

    @usableFromInline @inline(never)
    static func messageTooShort(_ what: String, _ length: Int, minimum: Int) -> NoiseError {
        NoiseError(.messageTooShort, "\(what) of \(length) bytes is shorter than the minimum \(minimum)")
    }

    @usableFromInline @inline(never)
    static func nonceExhausted() -> NoiseError {
        NoiseError(.nonceExhausted, "cipher state nonce reached 2^64-1, which Noise reserves; rekey or handshake again")
    }

    @usableFromInline @inline(never)
    static func wrongTurn(_ operation: String, _ pattern: String, messageIndex: Int, initiator: Bool) -> NoiseError {
        let role = initiator ? "initiator" : "responder"
        let writer = messageIndex % 2 == 0 ? "initiator" : "responder"
        return NoiseError(
            .wrongTurn,
            "\(operation) out of turn: \(pattern) message \(messageIndex) is written by the \(writer), this side is the \(role)"
        )
    }

    @usableFromInline @inline(never)
    static func handshakeNotComplete(_ operation: String) -> NoiseError {
        NoiseError(.handshakeNotComplete, "\(operation) needs a completed handshake")
    }

    @usableFromInline @inline(never)
    static func handshakeAlreadyComplete(_ operation: String) -> NoiseError {
        NoiseError(.handshakeAlreadyComplete, "\(operation) after the handshake completed; use the split cipher states")
    }

    @usableFromInline @inline(never)
    static func missingKey(_ why: String) -> NoiseError { NoiseError(.missingKey, why) }

    @usableFromInline @inline(never)
    static func unexpectedKey(_ why: String) -> NoiseError { NoiseError(.unexpectedKey, why) }

    @usableFromInline @inline(never)
    static func invalidArgument(_ why: String) -> NoiseError { NoiseError(.invalidArgument, why) }
}
