import MeshLink
import MeshWire
import NIOCore

/// A peer that has proved its identity in a handshake and waits to be admitted (PROTOCOL.md §4.9).
///
/// This type is thread-safe (a value).
public struct AdmissionRequest: Sendable {
    /// The authenticated peer.
    public let peer: RemotePeer
    /// This side's handshake role: `initiator` when this node dialled.
    public let role: HandshakeStateMachine.Role
    /// The remote TCP address.
    public let remoteAddress: SocketAddress?

    /// Creates a request.
    /// - Parameters:
    ///   - peer: the authenticated peer.
    ///   - role: this side's role.
    ///   - remoteAddress: the remote address.
    public init(peer: RemotePeer, role: HandshakeStateMachine.Role, remoteAddress: SocketAddress?) {
        self.peer = peer
        self.role = role
        self.remoteAddress = remoteAddress
    }
}

/// Whether a handshaking link's peer may have the link (PROTOCOL.md §4.9).
public enum AdmissionDecision: Sendable, Hashable {
    /// Go on: the initiator sends message 3, the responder the key confirmation.
    case admit
    /// Refuse: an ABORT frame with the code and reason goes to the peer, and the link closes
    /// before it is established on either side.
    case refuse(CloseCode, reason: String)
}

/// Decides, off the event loop, whether a link's peer is admitted; the future may complete on any
/// loop. A link waits for it within its handshake deadline (§4.5); the decider must bound its own wait.
public typealias LinkAdmission = @Sendable (AdmissionRequest, any EventLoop) -> EventLoopFuture<AdmissionDecision>
