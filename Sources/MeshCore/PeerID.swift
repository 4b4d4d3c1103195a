/// A peer as the application sees it: a stable node id and a display name
/// (Multipeer's `MCPeerID`, with an id that survives renames).
///
/// Two `PeerID`s are equal when their node ids are equal; the display name is informational and
/// may change between sessions. This type is thread-safe.
public struct PeerID: Hashable, Sendable, CustomStringConvertible {
    /// The stable id derived from the peer's identity key (PROTOCOL.md §2.2).
    public let id: NodeID
    /// The name the peer chose: 1–63 bytes of UTF-8, not unique.
    public let displayName: String

    /// Creates a peer id.
    /// - Parameters:
    ///   - id: the node id.
    ///   - displayName: the display name.
    /// - Throws: ``CoreError`` `invalidDisplayName` when the name is empty or longer than 63 bytes.
    public init(id: NodeID, displayName: String) throws(CoreError) {
        if let problem = Self.displayNameProblem(displayName) { throw .invalidDisplayName(problem) }
        self.init(id: id, validatedDisplayName: displayName)
    }

    /// Creates a peer id from a name this package has already checked with
    /// ``displayNameProblem(_:)`` (a completed handshake's, for instance).
    /// - Parameters:
    ///   - id: the node id.
    ///   - validatedDisplayName: a display name known to be 1–63 bytes of UTF-8.
    package init(id: NodeID, validatedDisplayName: String) {
        self.id = id
        self.displayName = validatedDisplayName
    }

    /// Equality on the node id only.
    public static func == (lhs: PeerID, rhs: PeerID) -> Bool { lhs.id == rhs.id }
    /// Hashes the node id only.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// `name (id prefix)`, e.g. `alice (3fa2c1d0)`.
    public var description: String { "\(displayName) (\(id.shortHex))" }
}

extension PeerID {
    /// The length of a display name in UTF-8 bytes (PROTOCOL.md §2.3): 1 to 63.
    public static let displayNameBytes = 1...63

    /// Checks a display name against PROTOCOL.md §2.3: 1 to 63 bytes of UTF-8.
    /// - Parameter name: the proposed name.
    /// - Returns: `nil` when valid, otherwise a sentence saying what is wrong.
    public static func displayNameProblem(_ name: String) -> String? {
        let count = name.utf8.count
        let limit = displayNameBytes
        if count == 0 {
            return "the display name is empty; it must be \(limit.lowerBound) to \(limit.upperBound) bytes of UTF-8"
        }
        if count > limit.upperBound {
            return "the display name is \(count) bytes of UTF-8; the maximum is \(limit.upperBound)"
        }
        return nil
    }
}
