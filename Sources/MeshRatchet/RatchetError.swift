/// Why a ratchet operation failed. Every failure leaves the session's state as it was before the
/// call, so a forged or corrupted message costs nothing but the work of checking it.
public struct RatchetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Hashable, Sendable {
        /// The message did not authenticate (tampered, wrong session, or a key already used: a replay).
        case authenticationFailed
        /// The message needs more skipped keys than ``RatchetLimits/maxSkip`` allows.
        case tooManySkipped
        /// The header or a stored state is malformed.
        case malformed
        /// The session cannot send yet: the responder has not received the initiator's first message.
        case notReadyToSend
        /// A signed prekey's signature does not verify, or a public key is invalid.
        case invalidKey
        /// The packet names a session, or a signed prekey, this node does not hold (lost, forgotten
        /// or never made): the sender needs a new session (PROTOCOL.md §19.7).
        case unknownSession
    }

    /// What kind of failure; equality compares only this.
    public let code: Code
    /// What failed, with the value and the limit where there is one. Never holds key material.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, for logs.
    public var description: String { message }

    public static func == (lhs: RatchetError, rhs: RatchetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
