/// Why a link was closed (PROTOCOL.md §9).
///
/// Sent as one byte in an ABORT frame during the handshake and as `Goodbye.code` afterwards.
/// Some codes are local only: they describe why this peer closed and are never sent.
public enum CloseCode: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The user disconnected or the peer is shutting down.
    case normal = 0
    /// A malformed frame, record or envelope, or a frame type not allowed in the current phase.
    case protocolViolation = 1
    /// A frame length above ``WireLimits/maxFrameLength``.
    case frameTooLarge = 2
    /// A handshake message failed to authenticate (tampering or a different prologue).
    case handshakeFailed = 3
    /// The handshake did not complete in time.
    case handshakeTimeout = 4
    /// The peer speaks another protocol version.
    case unsupportedVersion = 5
    /// The peer uses another service type.
    case serviceMismatch = 6
    /// A bad display name, identity key or static-key signature.
    case invalidIdentity = 7
    /// Nothing was received for the liveness bound (local only).
    case keepaliveTimeout = 8
    /// Another link to the same node won the tie-break (§4.7).
    case duplicateConnection = 9
    /// The peer is this node.
    case selfConnection = 10
    /// A reassembled message above ``WireLimits/maxMessageSize``.
    case messageTooLarge = 11
    /// The listener already has the maximum number of handshakes in progress (local only).
    case tooManyHandshakes = 12
    /// The invited side declined the invitation, or accepts none (§4.8).
    case invitationDeclined = 13
    /// The invitation was not answered within its timeout (§4.8).
    case invitationTimeout = 14
    /// The connection ended without a goodbye: reset, end of stream or a socket error (local only:
    /// a peer killed or cut off is lost, not "closed normally").
    case connectionLost = 15
    /// The peer's application did not admit this node, or did not decide in time (§4.9).
    case notAdmitted = 16
    /// The cipher suite negotiation did not end on the suite both ends' offers select: a forged or
    /// repeated RETRY, or a responder whose offer contradicts the suite in use (§4.11).
    case suiteDowngrade = 17

    /// Decodes a received code; an unknown code reads as ``protocolViolation`` (§9).
    /// - Parameter wireValue: the byte or `Goodbye.code` value received.
    public init(wireValue: UInt32) {
        self = UInt8(exactly: wireValue).flatMap(CloseCode.init(rawValue:)) ?? .protocolViolation
    }

    /// The code's name as PROTOCOL.md §9 spells it, e.g. `frameTooLarge`.
    public var description: String {
        switch self {
        case .normal: "normal"
        case .protocolViolation: "protocolViolation"
        case .frameTooLarge: "frameTooLarge"
        case .handshakeFailed: "handshakeFailed"
        case .handshakeTimeout: "handshakeTimeout"
        case .unsupportedVersion: "unsupportedVersion"
        case .serviceMismatch: "serviceMismatch"
        case .invalidIdentity: "invalidIdentity"
        case .keepaliveTimeout: "keepaliveTimeout"
        case .duplicateConnection: "duplicateConnection"
        case .selfConnection: "selfConnection"
        case .messageTooLarge: "messageTooLarge"
        case .tooManyHandshakes: "tooManyHandshakes"
        case .invitationDeclined: "invitationDeclined"
        case .invitationTimeout: "invitationTimeout"
        case .connectionLost: "connectionLost"
        case .notAdmitted: "notAdmitted"
        case .suiteDowngrade: "suiteDowngrade"
        }
    }
}
