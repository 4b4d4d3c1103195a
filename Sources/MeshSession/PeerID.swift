@_exported import MeshCore
@_exported import MeshDiscovery
@_exported import struct MeshRouting.RoutingConfiguration
@_exported import enum MeshRouting.BroadcastStrategy
@_exported import enum MeshLink.CipherSuite
import MeshLink

extension PeerID {
    /// The peer at the other end of an authenticated link, whose name the handshake checked (§2.3).
    init(remote: RemotePeer) {
        self.init(id: remote.nodeID, validatedDisplayName: remote.displayName)
    }

    /// ``init(id:displayName:)`` for the session API, which throws ``SessionError``.
    init(checking displayName: String, for id: NodeID) throws(SessionError) {
        do {
            try self.init(id: id, displayName: displayName)
        } catch {
            throw .invalidDisplayName(error.message)
        }
    }
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
        self.peerID = try PeerID(checking: displayName, for: identity.nodeID)
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
