/// Why a signed or sealed mesh payload was refused (PROTOCOL.md §13.4–§13.6).
///
/// Every case names what was wrong; none of them carries key material or plaintext. Equality
/// compares ``code`` only.
public struct EndToEndError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// The bytes are not the expected protobuf message, or a field has the wrong size.
        case malformed
        /// The identity key does not derive to the packet's origin node id.
        case wrongOrigin
        /// An Ed25519 signature does not verify.
        case badSignature
        /// A sealed packet does not decrypt for this node (not for us, altered, or replayed into
        /// another header).
        case cannotOpen
        /// The payload is larger than one sealed packet can carry.
        case tooLarge
        /// The packet's end-to-end session cannot be used here: this node does not hold it (or the
        /// signed prekey it began on), or its message is further ahead of its chain than MAX_SKIP,
        /// which no later message of the chain can be either; the sender needs a new session (§19.7).
        case unknownSession
        /// No session can send and the recipient's signed prekey is not known yet.
        case noPrekey
    }

    /// The kind of failure.
    public let code: Code
    /// What was wrong, for logs.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// "code: message".
    public var description: String { "\(code.rawValue): \(message)" }

    /// Compares ``code`` only.
    public static func == (lhs: EndToEndError, rhs: EndToEndError) -> Bool { lhs.code == rhs.code }

    /// Hashes ``code`` only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
