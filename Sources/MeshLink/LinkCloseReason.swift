import MeshWire

/// Why a link ended or a handshake failed: a close code and a sentence for people.
///
/// ``isRemote`` tells whether the peer reported this reason (an ABORT frame or a goodbye) or this
/// side decided it. Equality compares code and origin.
public struct LinkCloseReason: Error, Sendable, Hashable, CustomStringConvertible {
    /// The close code (PROTOCOL.md §9).
    public let code: CloseCode
    /// What happened, e.g. "handshake message 2 failed to authenticate …".
    public let message: String
    /// Whether the remote peer reported this reason.
    public let isRemote: Bool

    /// Creates a reason.
    /// - Parameters:
    ///   - code: the close code.
    ///   - message: an explanation for people.
    ///   - isRemote: whether the peer reported it.
    public init(_ code: CloseCode, _ message: String, isRemote: Bool = false) {
        self.code = code
        self.message = message
        self.isRemote = isRemote
    }

    /// A reason derived from a wire decoding error.
    /// - Parameter error: the error.
    public init(_ error: WireError) {
        self.init(error.closeCode, error.message)
    }

    /// "code: message", with "peer said" for remote reasons.
    public var description: String {
        isRemote ? "\(code) (peer said: \(message))" : "\(code): \(message)"
    }

    /// Equality on code and origin.
    public static func == (lhs: LinkCloseReason, rhs: LinkCloseReason) -> Bool {
        lhs.code == rhs.code && lhs.isRemote == rhs.isRemote
    }

    /// Hashes code and origin.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(isRemote)
    }
}
