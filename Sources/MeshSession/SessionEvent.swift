import struct Foundation.Data
import struct Foundation.Date
import MeshWire

/// How a payload travels (Multipeer's `MCSessionSendDataMode`).
public enum SendMode: Sendable, Hashable, CustomStringConvertible {
    /// Over the TCP link: ordered, nothing lost while connected; sends wait when the link's
    /// outbound buffer is full (back-pressure). Payloads up to 16 MiB less framing.
    case reliable
    /// As a UDP datagram: may be lost or reordered, never waits. Payloads up to
    /// ``Session/maxUnreliablePayload`` bytes.
    case unreliable

    /// `reliable` or `unreliable`.
    public var description: String { self == .reliable ? "reliable" : "unreliable" }
}

/// A peer's connection state (Multipeer's `MCSessionState`, with the reason for a disconnect).
public enum PeerState: Sendable, Hashable, CustomStringConvertible {
    /// Not connected; `reason` says why the last link ended, when there was one.
    case notConnected(DisconnectReason?)
    /// A link to the peer is being set up: on the dialling side, the peer has proved its identity
    /// and the key confirmation is pending (PROTOCOL.md §4.6).
    case connecting
    /// Connected: sends reach the peer.
    case connected

    /// `notConnected`, `connecting` or `connected`.
    public var description: String {
        switch self {
        case .notConnected: "notConnected"
        case .connecting: "connecting"
        case .connected: "connected"
        }
    }
}

/// Why a link ended: a close code (PROTOCOL.md §9) and a sentence.
public struct DisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// The close code's name, e.g. `keepaliveTimeout`.
    public let code: String
    /// What happened.
    public let message: String
    /// Whether the peer reported this reason (rather than this node deciding it).
    public let isRemote: Bool

    /// Creates a reason.
    /// - Parameters:
    ///   - code: the close code's name.
    ///   - message: what happened.
    ///   - isRemote: whether the peer reported it.
    public init(code: String, message: String, isRemote: Bool) {
        self.code = code
        self.message = message
        self.isRemote = isRemote
    }

    /// "code: message".
    public var description: String { "\(code): \(message)" }
}

/// A line a neighbour sent over its direct link with ``Session/send(text:to:)`` (PROTOCOL.md §6.1).
///
/// This is the session's neighbour-only text message (Multipeer's messages between connected
/// peers), not the meshchat chat application, which runs on its own channel (PROTOCOL.md §17).
public struct TextMessage: Sendable, Hashable {
    /// The message id: 32 hex digits.
    public let id: String
    /// The text.
    public let text: String
    /// When the sender says it sent the line.
    public let sentAt: Date

    /// Creates a text message.
    /// - Parameters:
    ///   - id: 32 hex digits.
    ///   - text: the text.
    ///   - sentAt: the sender's time.
    public init(id: String, text: String, sentAt: Date) {
        self.id = id
        self.text = text
        self.sentAt = sentAt
    }
}

/// Something a peer sent.
public struct ReceivedMessage: Sendable {
    /// What was received.
    public enum Content: Sendable, Hashable {
        /// Opaque bytes from ``Session/send(_:to:mode:)``.
        case data(Data)
        /// A line from a neighbour's ``Session/send(text:to:)``.
        case text(TextMessage)
    }

    /// Who sent it (its origin, for a message relayed across the mesh).
    public let sender: PeerID
    /// How it travelled.
    public let mode: SendMode
    /// The content.
    public let content: Content
    /// How many links it travelled: 1 from a neighbour, more across relays.
    public let hops: Int
    /// Whether it was addressed to this node only (sealed end to end across the mesh, or sent to
    /// this node over its direct link) rather than to every node.
    public let isPrivate: Bool

    /// Creates a received message.
    /// - Parameters:
    ///   - sender: who sent it.
    ///   - mode: how it travelled.
    ///   - content: what it is.
    ///   - hops: links travelled.
    ///   - isPrivate: whether it was addressed to this node only.
    public init(sender: PeerID, mode: SendMode, content: Content, hops: Int = 1, isPrivate: Bool = false) {
        self.sender = sender
        self.mode = mode
        self.content = content
        self.hops = hops
        self.isPrivate = isPrivate
    }
}

/// How this node reaches another across the mesh (PROTOCOL.md §13.2).
public struct MeshRoute: Sendable, Hashable {
    /// The node reached.
    public let peer: PeerID
    /// The number of links on the path (1 for a neighbour).
    public let hops: Int
    /// The neighbour packets to ``peer`` go to first.
    public let nextHop: PeerID
    /// The nodes on the path after this one, ending with ``peer``.
    public let path: [PeerID]
    /// The advertised round trip of each link on the path, in order.
    public let hopLatencies: [Duration]
}

/// One node's advertised links, as this node's link-state database has them (PROTOCOL.md §13.2).
public struct MeshTopologyEntry: Sendable, Hashable {
    /// One advertised link.
    public struct Link: Sendable, Hashable {
        /// The neighbour at the other end.
        public let node: NodeID
        /// Its measured round trip.
        public let latency: Duration
    }

    /// The node that advertised.
    public let node: PeerID
    /// Its neighbours.
    public let neighbors: [Link]
}

/// Everything a session reports, in order (Multipeer's session delegate callbacks, as values).
public enum SessionEvent: Sendable {
    /// A peer's state changed.
    case peerChanged(PeerID, PeerState)
    /// A peer sent data, or a neighbour a line.
    case received(ReceivedMessage)
    /// An outgoing connection (``Session/connect(host:port:)``) failed before a peer was known.
    case connectFailed(address: String, reason: String)
    /// An invitation this node made (``NearbyServiceBrowser/invitePeer(_:to:withContext:timeout:)``)
    /// ended without a connection: declined, timed out, or the peer could not be reached.
    case invitationFailed(PeerID, InvitationFailure)
    /// A node became reachable across the mesh, its route changed, or (with `nil`) it is no
    /// longer reachable (PROTOCOL.md §13.2).
    case reachabilityChanged(PeerID, MeshRoute?)
    /// A node changed its display name (IRC's nick change): its newer link-state advert, or a new
    /// link's handshake, names it differently than before (PROTOCOL.md §13.2.3). `peer` carries
    /// the new name.
    case peerRenamed(PeerID, previousName: String)
    /// A node proved that it replaced its identity key (PROTOCOL.md §20.2): `peer`, with the node id
    /// of the new key, succeeds the node `previous`, by a statement both keys signed, which its
    /// signed advert or its handshake carried. Reported once, the first time the statement is
    /// verified, and before that advert's or link's other events; several rotations oldest first.
    /// Applications may carry over what they kept for `previous` (see ``Session/keyRotations(of:)``).
    case keyRotated(PeerID, previous: NodeID)
    /// A second valid key rotation statement for the node `previous` names another successor than
    /// the first one verified (PROTOCOL.md §20.2): the retired key signed twice, so its private half
    /// is in more than one hand (it leaked), and either successor may be an impostor. `peer` is the
    /// later claimant, `successor` the node the first statement named (which keeps what was carried
    /// to it). Nothing is carried to `peer`; applications withdraw the verification carried to
    /// `successor` and warn. Reported once per conflicting statement.
    ///
    /// `previous` may be a key this node itself retired (``LocalIdentity/rotations``); `successor`
    /// is then the key that followed it here (this node, or an earlier key of it), and `peer`
    /// holds this node's old private key: the user should know.
    case keyRotationDisputed(PeerID, previous: NodeID, successor: NodeID)
}

/// Why an invitation this node made did not connect.
public struct InvitationFailure: Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The invited peer declined (or accepts no invitations).
        case declined
        /// No answer came within the timeout.
        case timedOut
        /// No link could be made, or it failed before the answer.
        case unreachable
    }

    /// The kind of failure.
    public let kind: Kind
    /// What happened, for people (for a decline, the peer's reason: untrusted text).
    public let message: String

    /// Creates a failure.
    /// - Parameters:
    ///   - kind: the kind.
    ///   - message: what happened.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// "kind: message".
    public var description: String { "\(kind.rawValue): \(message)" }
}
