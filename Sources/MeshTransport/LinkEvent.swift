import MeshLink
import MeshWire
import NIOCore

/// What a link tells the code above it, in order, through its `NIOAsyncChannel`.
public enum LinkEvent: Sendable {
    /// Dialling side only: the peer proved its identity (handshake message 2) and the link waits for
    /// the key confirmation (PROTOCOL.md §4.6).
    case connecting(RemotePeer)
    /// The handshake completed and the keys were confirmed; the link carries messages now.
    case established(LinkInfo)
    /// An application envelope (chat, data, invitation answer) arrived. Keepalives and goodbyes
    /// are handled inside.
    case envelope(Envelope)
    /// A keepalive pong arrived: the link's measured round trip (PROTOCOL.md §7), which the mesh
    /// advertises as the link's latency (§13.2).
    case roundTrip(nanoseconds: UInt64)
    /// A ``LinkHandler/Marker`` the code above put into the stream (never from the peer).
    case marker(Int)
    /// The link is closing, and why. The last event of a link that had a reason to close.
    case closed(LinkCloseReason)
}

/// An established link's peer and keys.
public struct LinkInfo: Sendable {
    /// The authenticated peer.
    public let peer: RemotePeer
    /// This side's handshake role.
    public let role: HandshakeStateMachine.Role
    /// The remote TCP address.
    public let remoteAddress: SocketAddress?
    /// The cipher suite the handshake negotiated (PROTOCOL.md §4.11).
    public let suite: CipherSuite
    /// The keys for unreliable datagrams on this link.
    public let datagramKeys: DatagramKeys
    /// Responder only: the invitation the initiator made (PROTOCOL.md §4.8); `nil` for a plain link.
    public let invitation: InvitationRequest?
    /// The shortest time from a handshake message this side wrote to the peer's next one, in
    /// nanoseconds: the link's first round-trip estimate (it includes the peer's handshake
    /// computation), advertised as its latency until keepalives measure it (PROTOCOL.md §13.2.3).
    public let handshakeRoundTrip: UInt64?
}
