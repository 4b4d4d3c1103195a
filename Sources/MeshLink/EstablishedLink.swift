import struct Foundation.Data

/// A link whose handshake completed: who the peer is and the keys to talk to it.
public struct EstablishedLink: Sendable {
    /// The authenticated peer.
    public let peer: RemotePeer
    /// This side's role in the handshake (decides the duplicate-link tie-break, §4.7).
    public let role: HandshakeStateMachine.Role
    /// The transport cipher states with record framing (§5).
    public var channel: SecureChannel
    /// The cipher suite of the link's records and datagrams (§4.11).
    public let suite: CipherSuite
    /// The keys for unreliable datagrams (§8.1).
    public let datagramKeys: DatagramKeys
    /// The final handshake hash `h`.
    public let handshakeHash: Data
    /// Responder only: the invitation the initiator sent in message 3 (§4.8), if any.
    public let invitation: InvitationRequest?
}

/// An invitation as carried in handshake message 3 (PROTOCOL.md §4.8): the link is held by the
/// responder until its application accepts (an `invitationAccepted` envelope) or declines (a
/// goodbye with `invitationDeclined`), or the timeout passes.
public struct InvitationRequest: Sendable, Hashable {
    /// The inviter's context: untrusted bytes, at most ``WireLimits/maxInvitationContext``.
    public var context: Data
    /// How long the inviter waits for the answer, in ms (``WireLimits/invitationTimeoutMilliseconds``).
    public var timeoutMilliseconds: UInt32

    /// Creates an invitation.
    /// - Parameters:
    ///   - context: the context bytes.
    ///   - timeoutMilliseconds: the timeout.
    public init(context: Data, timeoutMilliseconds: UInt32) {
        self.context = context
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}
