import Foundation
import MeshSession

/// How the chat shows a peer's standing in the name book (PROTOCOL.md §20.3): verified peers are
/// marked ✓, a key claiming a name another key holds is flagged "(new key 3f2a1b2c)".
///
/// The book is a task-local value set by ``ChatFront/emit(_:)`` around each output, so that every
/// renderer (text, JSON, terminal, completion) shows the same standing without each output carrying
/// it; outside such a scope nobody is marked.
public enum PeerMarks {
    /// The name book outputs are rendered with (`nil`: no marks).
    @TaskLocal public static var book: NameBook?

    /// How `peer`'s claim to its display name stands in ``book``.
    /// - Parameter peer: a peer as an output names it.
    /// - Returns: the standing, or `nil` without a book or when nobody holds the name.
    public static func standing(of peer: PeerID) -> NameBook.Standing? {
        book?.standing(of: peer.id, name: peer.displayName)
    }

    /// The JSON members that tell scripts a peer's standing: `verified` always, and for a new key
    /// claiming a held name `newKey: true` and `nameHolder` (the holder's id).
    /// - Parameter peer: the peer.
    /// - Returns: the members to append to its object.
    static func jsonMembers(_ peer: PeerID) -> [(String, JSONValue)] {
        switch standing(of: peer) {
        case .newKey(let holder):
            return [("verified", .bool(book?.isVerified(peer.id) ?? false)), ("newKey", true), ("nameHolder", .string(holder.hex))]
        case .verified:
            return [("verified", true)]
        case .holder, nil:
            return [("verified", .bool(book?.isVerified(peer.id) ?? false))]
        }
    }
}

extension PeerID {
    /// The name as the chat shows it: "bob ✓" when verified, "bob (new key 3f2a1b2c)" when another
    /// key holds the name (see ``PeerMarks``), else the display name.
    public var shownName: String {
        switch PeerMarks.standing(of: self) {
        case .verified: return "\(displayName) ✓"
        case .newKey: return "\(displayName)\(PeerMarks.book?.isVerified(id) == true ? " ✓" : "") (new key \(id.shortHex))"
        case .holder, nil: return PeerMarks.book?.isVerified(id) == true ? "\(displayName) ✓" : displayName
        }
    }

    /// The name with its id prefix, as notices show a peer: "bob ✓ (1a2b3c4d)", or
    /// "bob (new key 3f2a1b2c)" (the id is in the flag already).
    public var shown: String {
        if case .newKey = PeerMarks.standing(of: self) { return shownName }
        return "\(shownName) (\(id.shortHex))"
    }
}
