@_exported import struct MeshWire.NodeID
@_exported import MeshDiscovery
@_exported import struct MeshRouting.RoutingConfiguration
@_exported import enum MeshRouting.BroadcastStrategy
import MeshLink

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
    /// - Throws: ``SessionError`` `invalidDisplayName` when the name is empty or longer than 63 bytes.
    public init(id: NodeID, displayName: String) throws(SessionError) {
        if let problem = displayNameProblem(displayName) { throw .invalidDisplayName(problem) }
        self.id = id
        self.displayName = displayName
    }

    init(remote: RemotePeer) {
        self.id = remote.nodeID
        self.displayName = remote.displayName
    }

    /// Equality on the node id only.
    public static func == (lhs: PeerID, rhs: PeerID) -> Bool { lhs.id == rhs.id }
    /// Hashes the node id only.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// `name (id prefix)`, e.g. `alice (3fa2c1d0)`.
    public var description: String { "\(displayName) (\(id.shortHex))" }
}

/// This node: its ``PeerID`` and the long-term keys behind it.
///
/// Create it with ``init(displayName:dataDirectory:)``, which loads the keys from the data
/// directory or creates them there the first time. The private keys never leave this value.
public struct LocalPeer: Sendable, CustomStringConvertible {
    /// The public handle of this node.
    public let peerID: PeerID
    /// The long-term keys.
    public let identity: LocalIdentity
    /// The data directory the keys were loaded from, when they were (the default home of the
    /// session's resource directory, ``ResourceConfiguration/directory``).
    public let dataDirectory: String?

    /// Loads (or creates, the first time) the keys in `dataDirectory` and names this node.
    /// - Parameters:
    ///   - displayName: 1–63 bytes of UTF-8.
    ///   - dataDirectory: where the key file lives (created with mode 0700 when missing).
    /// - Throws: ``SessionError`` for an invalid name or a key file that cannot be read or written.
    public init(displayName: String, dataDirectory: String) throws(SessionError) {
        let identity = try IdentityStore(directory: dataDirectory).loadOrCreate()
        try self.init(displayName: displayName, identity: identity, dataDirectory: dataDirectory)
    }

    /// Names a node with keys held in memory (tests, embedding apps with their own storage).
    /// - Parameters:
    ///   - displayName: 1–63 bytes of UTF-8.
    ///   - identity: the keys.
    ///   - dataDirectory: the node's data directory, if it has one (resources are kept under it).
    /// - Throws: ``SessionError`` `invalidDisplayName`.
    public init(displayName: String, identity: LocalIdentity, dataDirectory: String? = nil) throws(SessionError) {
        self.peerID = try PeerID(id: identity.nodeID, displayName: displayName)
        self.identity = identity
        self.dataDirectory = dataDirectory
    }

    /// The same node under another display name (the keys, and so the id, stay).
    /// - Parameter displayName: 1–63 bytes of UTF-8.
    /// - Returns: the renamed node.
    /// - Throws: ``SessionError`` `invalidDisplayName`.
    public func renamed(to displayName: String) throws(SessionError) -> LocalPeer {
        try LocalPeer(displayName: displayName, identity: identity, dataDirectory: dataDirectory)
    }

    /// The peer id; keys are never printed.
    public var description: String { peerID.description }
}
