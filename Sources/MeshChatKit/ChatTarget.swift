import Foundation
import MeshSession
import MeshStore

/// Where typed lines go, and the conversation (buffer) a line belongs to: the whole mesh, a
/// room, or a private conversation with one peer.
public enum ChatTarget: Sendable, Hashable {
    /// Everyone in the mesh (broadcast lines).
    case mesh
    /// A joined room.
    case room(RoomRef)
    /// A private conversation with one peer (`/query`, or a private line that arrived).
    case peer(PeerID)

    /// What identifies the conversation: a peer's conversation is its node, whatever its name.
    public enum Key: Sendable, Hashable {
        /// The mesh.
        case mesh
        /// A room.
        case room(RoomRef)
        /// A peer's node.
        case peer(NodeID)
    }

    /// The conversation's identity (a renamed peer keeps its buffer).
    public var key: Key {
        switch self {
        case .mesh: .mesh
        case .room(let room): .room(room)
        case .peer(let peer): .peer(peer.id)
        }
    }

    /// The name shown in the prompt and the status line: `mesh`, `#dev` (`#dev 🔒`), `@bob`;
    /// a peer's name is made printable (``TerminalStyle/safe(_:)``) and cut at
    /// ``maxLabelCharacters``.
    public var label: String {
        let raw: String
        switch self {
        case .mesh: raw = "mesh"
        case .room(let room): raw = room.description
        case .peer(let peer): raw = "@" + peer.shownName
        }
        let safe = TerminalStyle.safe(raw).replacingOccurrences(of: "\n", with: " ")
        return safe.count > Self.maxLabelCharacters ? safe.prefix(Self.maxLabelCharacters - 1) + "…" : safe
    }

    /// The most characters of a conversation's name in the prompt and the status line.
    public static let maxLabelCharacters = 24

    /// The conversation an output belongs to, or `nil` for the one being looked at (notices,
    /// answers to commands): a room line goes to its room, a private line to the other peer's
    /// conversation, a line to everyone to the mesh.
    /// - Parameter output: what the chat front shows.
    /// - Returns: the conversation.
    public static func of(_ output: ChatOutput) -> ChatTarget? {
        switch output {
        case .message(_, let from, _, _, _, let isPrivate, let room, _, _):
            if let room { return .room(room) }
            return isPrivate ? .peer(from) : .mesh
        case .sent(_, _, let to, let isPrivate, _, let room, _):
            if let room { return .room(room) }
            if isPrivate, let peer = to.first { return .peer(peer) }
            return isPrivate ? nil : .mesh
        default:
            return nil
        }
    }
}
