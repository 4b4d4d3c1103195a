import Foundation
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import Places
import MeshFiles

/// What the chat front shows, as values: the renderers turn each into a JSON line or text.
public enum ChatOutput: Sendable {
    /// The session is listening.
    case ready(id: String, name: String, port: Int)
    /// A peer's state changed.
    case peer(PeerID, state: String, address: String?, reason: DisconnectReason?)
    /// A chat line arrived: to the whole mesh, to a room (`room`), or private to this node; `hops` links travelled;
    /// `mention` when it names me or a mention word (``Attention``); `action` for an action line
    /// (`/me`, shown `* alice waves`).
    case message(id: String, from: PeerID, text: String, sentAt: Date, hops: Int = 1, isPrivate: Bool = false, room: RoomRef? = nil,
                 mention: Bool = false, action: Bool = false)
    /// Opaque data arrived (from a library user's `send`).
    case data(from: PeerID, mode: SendMode, payload: Data)
    /// A typed line was accepted: stored on disk, then `sent` at once or `queued` until a route
    /// appears. `to` is the private line's peer, or the connected peers for a line to the mesh;
    /// `room` the room it went to (`nil`: everyone, or the private line's peer).
    /// `action` for an action line (`/me`).
    case sent(id: String, text: String, to: [PeerID], isPrivate: Bool = false, status: String = "sent", room: RoomRef? = nil,
              action: Bool = false)
    /// One of my lines changed status: `sent`, `delivered` (receipt from the destination), `expired`.
    case receipt(id: String, status: String, to: PeerID?)
    /// A node became reachable across the mesh (`hops`, first link `via`), or not (`hops` nil).
    case reachability(PeerID, hops: Int?, via: PeerID?)
    /// The answer to `/route`: each link of the path with its advertised round trip.
    case route(PeerID, links: [RouteLink])
    /// The answer to `/history`.
    case history([HistoryLine])
    /// The answer to `/peers`.
    case peers([PeerRow])
    /// The answer to `/help`.
    case help(String)
    /// The answer to `/code`: this node's connection code (PROTOCOL.md §4.10).
    case code(String)
    /// An outgoing connection failed.
    case connectFailed(address: String, reason: String)
    /// A peer was discovered (`isNew`), or its advertisement or addresses changed (text mode
    /// shows only the first).
    case found(PeerID, addresses: [String], info: [String: String], isNew: Bool = true)
    /// A discovered peer went away.
    case lost(PeerID)
    /// This node is announced on the network.
    case advertising(name: String, service: String)
    /// An invitation was sent to a peer (`sent`), or received from one (`received`);
    /// `awaitsAnswer` when the user must `/accept` or `/decline` it (`--manual`).
    case invitation(PeerID, direction: String, contextBytes: Int, awaitsAnswer: Bool = false)
    /// An invitation this node made did not connect.
    case invitationFailed(PeerID, kind: String, message: String)
    /// A received invitation ended without an answer taking effect (expired, withdrawn).
    case invitationEnded(PeerID, reason: String)
    /// The answer to `/here`: my location, if set, with where that is (the nearest place in my data).
    case here(Coordinate?, description: String?)
    /// The answer to `/near`: places with distance and bearing from the lookup's point, and
    /// where each came from.
    case places(LookupResult)
    /// My pin was stored and shared (`sentToNobody`: no peer is connected; nodes get it when
    /// they become reachable).
    case pinned(SharedPin, sentToNobody: Bool)
    /// Another node's pin arrived; `from` is my location, for distance and bearing.
    case pin(SharedPin, from: Coordinate?)
    /// A pin was withdrawn (mine by `/unpin`, or another's by its author).
    case unpinned(SharedPin, mine: Bool)
    /// The answer to `/pins`: live pins, numbered; `from` is my location.
    case pins([SharedPin], from: Coordinate?)
    /// `/pins --geojson FILE` wrote `count` pins.
    case exported(file: String, count: Int)
    /// The answer to `/map`: the picture (text) or the plain description (JSON, or not a terminal).
    case map([String])
    /// The answer to `/mesh`: every node this node knows with its advertised links; `hops` is
    /// `nil` for a node out of reach, 0 for me.
    case mesh([MeshNodeRow])
    /// The answer to `/ping`: the round trip across `hops` links, or `nil` when no pong came in time.
    case pong(PeerID, roundTrip: Duration?, hops: Int)
    /// The answer to `/verify`: the safety number with a peer and each side's half (its key's
    /// fingerprint, PROTOCOL.md §20.1).
    case verify(PeerID, SafetyNumber, mine: String, theirs: String)
    /// `/trust` or `/untrust` recorded whether the user verified a peer (PROTOCOL.md §20.3).
    case trust(PeerID, verified: Bool)
    /// The verified peers, when `/trust` lists them.
    case trusted([PeerID])
    /// A node claims a name another node (`holder`) holds: it is a different peer, shown flagged
    /// and reachable only by its id prefix (PROTOCOL.md §20.3).
    case nameConflict(PeerID, holder: PeerID)
    /// A peer replaced its key by a verified rotation (PROTOCOL.md §20.2): `peer` (the new node id)
    /// holds the names, verification and conversation of `previous`; `verified` when it was verified.
    case keyRotated(PeerID, previous: NodeID, verified: Bool)
    /// A retired key named a second successor (PROTOCOL.md §20.2): its private key leaked. `first`
    /// keeps the conversation (its verification withdrawn when `unverified`); `claimant` gets nothing.
    case keyDisputed(previous: NodeID, first: PeerID, claimant: PeerID, unverified: Bool)
    /// The blocked peers, after `/block` or `/unblock` or when listed.
    case blocked([PeerID])
    /// A display name changed: mine after `/nick` (`isMe`), or a peer's; `peer` has the new name.
    case nick(PeerID, previous: String, isMe: Bool)
    /// I joined a room (`/join`); it is now where typed lines go.
    case joined(RoomRef)
    /// I left a room (`/leave`); typed lines go to `now` (`nil`: the whole mesh).
    case left(RoomRef, now: RoomRef?)
    /// The answer to `/rooms`: joined rooms, and the one typed lines go to.
    case rooms([RoomRef], active: RoomRef?)
    /// A file transfer began, progressed, or ended (`/send`, or a file from a peer; PROTOCOL.md §16).
    case file(FileTransferEvent)
    /// The answer to `/files`: the transfers running now.
    case files([FileTransferProgress])
    /// Something went wrong; nothing was sent.
    case error(String)
    /// A notice for people (text mode only).
    case notice(String)
    /// Where typed lines go now: the mesh, a room or one peer (`/query`). The terminal's prompt
    /// says it (``Conversations/prompt(for:)``) and, with `scrollback`, shows that conversation's
    /// lines again (switching buffers); no line of its own in JSON or text (`joined`, `left` and
    /// each `sent` say it there; `/query`, `/switch` and `/window` add a notice in text).
    case target(ChatTarget, scrollback: [Conversations.Entry]? = nil)
    /// The buffers with their unread counts changed: the terminal's status line (no line in JSON or text).
    case buffers([Conversations.BufferStatus])
    /// A line calls the user (a mention, a private line): the terminal rings its bell (no line in JSON or text).
    case bell
    /// The answer to `/search`: the stored lines that contain the text, oldest first.
    case search(String, [HistoryLine])
    /// The answer to `/whois`.
    case whois(Whois)
    /// `/away` set (`text`) or cleared (`nil`) the away text peers see.
    case away(String?)

    /// One link of a route: the node it reaches and its latency.
    public struct RouteLink: Sendable, Hashable {
        /// The node at the end of the link.
        public let peer: PeerID
        /// Its advertised round trip.
        public let latency: Duration

        /// Creates a link.
        /// - Parameters:
        ///   - peer: the node reached.
        ///   - latency: the round trip.
        public init(peer: PeerID, latency: Duration) {
            self.peer = peer
            self.latency = latency
        }
    }

    /// One line of `/history`.
    public struct HistoryLine: Sendable, Hashable {
        /// Message id.
        public let id: String
        /// Its author.
        public let from: PeerID
        /// For a private line: the other party (the recipient of mine, me for theirs).
        public let with: PeerID?
        /// The text.
        public let text: String
        /// When the author wrote it.
        public let sentAt: Date
        /// Whether I wrote it.
        public let isOutgoing: Bool
        /// queued, sent, delivered, expired (mine) or received.
        public let status: String
        /// Links travelled (received lines).
        public let hops: Int?
        /// The room of a room line.
        public let room: RoomRef?
        /// Whether it is an action line (`/me`).
        public let isAction: Bool

        /// Creates a line.
        public init(id: String, from: PeerID, with: PeerID?, text: String, sentAt: Date, isOutgoing: Bool, status: String, hops: Int?,
                    room: RoomRef? = nil, isAction: Bool = false) {
            self.room = room
            self.isAction = isAction
            self.id = id
            self.from = from
            self.with = with
            self.text = text
            self.sentAt = sentAt
            self.isOutgoing = isOutgoing
            self.status = status
            self.hops = hops
        }
    }

    /// One node of `/mesh`.
    public struct MeshNodeRow: Sendable, Hashable {
        /// The node.
        public let peer: PeerID
        /// Links from me (0 for me), or `nil` when out of reach.
        public let hops: Int?
        /// Its advertised links: the node at the other end and the round trip.
        public let links: [RouteLink]

        /// Creates a row.
        /// - Parameters:
        ///   - peer: the node.
        ///   - hops: links from me, `nil` when out of reach.
        ///   - links: its links.
        public init(peer: PeerID, hops: Int?, links: [RouteLink]) {
            self.peer = peer
            self.hops = hops
            self.links = links
        }
    }

    /// One row of `/peers`.
    public struct PeerRow: Sendable {
        /// Node id.
        public let id: String
        /// Display name.
        public let name: String
        /// `connected`, …
        public let state: String
        /// Remote address, when known.
        public let address: String?
        /// Links to it across the mesh, when reachable.
        public var hops: Int?
        /// The neighbour its packets go to first, when reachable.
        public var via: PeerID?
        /// Its away text (`/away`, PROTOCOL.md §17.7), when it set one.
        public var away: String?

        /// Creates a row.
        /// - Parameters:
        ///   - id: node id (hex).
        ///   - name: display name.
        ///   - state: the peer's state.
        ///   - address: remote address, when known.
        public init(id: String, name: String, state: String, address: String?) {
            self.id = id
            self.name = name
            self.state = state
            self.address = address
        }

        /// The row's peer, for its marks (``PeerMarks``); `nil` when the id or name is not valid.
        var peer: PeerID? {
            (try? NodeID(hex: id)).flatMap { try? PeerID(id: $0, displayName: name) }
        }
    }
}
