@_exported import MeshTrust
import Crypto
import MeshLink
import struct Foundation.Data

extension Session {
    // MARK: Identity trust (PROTOCOL.md §20)

    /// The Ed25519 identity key (32 raw bytes) this session has verified for a node: from the
    /// handshake of a neighbour, or from the signed advert of any node the mesh has told it about
    /// (its node id is derived from this key, §2.2). This node's own key for ``peer``.
    /// - Parameter peer: a node.
    /// - Returns: the key, or `nil` when neither a handshake nor an advert of that node has arrived.
    public func identityKey(of peer: PeerID) -> Data? {
        mesh.identityKey(of: peer.id)
    }

    /// The safety number of this node and a peer (PROTOCOL.md §20.1): 60 digits, the same on both
    /// sides; users who compare them (aloud or side by side) know that each holds the other's real
    /// identity key and that no one in between substituted one.
    /// - Parameter peer: a node whose identity key is known (see ``identityKey(of:)``).
    /// - Returns: the number, or `nil` when the peer's key is not known yet.
    public func safetyNumber(with peer: PeerID) -> SafetyNumber? {
        guard let key = identityKey(of: peer), let theirs = try? Curve25519.Signing.PublicKey(rawRepresentation: key) else {
            return nil
        }
        return SafetyNumber(self.peer.identity.signingKey.publicKey, theirs)
    }

    /// The verified key rotation statements (PROTOCOL.md §20.2) that lead to a node's current
    /// identity key, newest first: the first one's ``KeyRotation/newKey`` is the node's key, each
    /// further one's the previous one's ``KeyRotation/oldKey``. Each was also reported once as
    /// ``SessionEvent/keyRotated(_:previous:)``.
    /// - Parameter peer: a node.
    /// - Returns: the statements its latest advert or handshake carried, empty when none.
    public func keyRotations(of peer: PeerID) -> [KeyRotation] {
        mesh.keyRotations(of: peer.id)
    }

    /// The node id of an identity key (PROTOCOL.md §2.2), `nil` when it is not an Ed25519 key.
    /// - Parameter identityKey: 32 raw bytes.
    /// - Returns: the node id.
    public static func nodeID(identityKey: Data) -> NodeID? {
        RotationBook.nodeID(identityKey)
    }
}

extension LocalPeer {
    /// Replaces the identity kept in a data directory with fresh keys, which carry on the old node's
    /// name, verification and history at every peer that checks the statement (PROTOCOL.md §20.2):
    /// the statement is signed with the old and the new key and stored beside the new key file, the
    /// old private key is deleted, and a node started from the directory afterwards carries the
    /// statement in its adverts and handshakes. The node id changes (it derives from the key, §2.2).
    ///
    /// Call it only while no node runs from the directory (the chat holds a lock on it for that).
    /// - Parameters:
    ///   - dataDirectory: the directory ``init(displayName:dataDirectory:)`` loads the keys from.
    ///   - nowMilliseconds: the wall clock in Unix milliseconds, the statement's issue time.
    /// - Returns: the statement (its old and new key).
    /// - Throws: ``SessionError`` `identityFile` when the directory holds no key file or the files cannot be written.
    public static func rotateIdentity(in dataDirectory: String, nowMilliseconds: UInt64) throws(SessionError) -> KeyRotation {
        let (_, new) = try IdentityStore(directory: dataDirectory).rotate(nowMilliseconds: nowMilliseconds)
        // rotate() puts the new statement first.
        return KeyRotation(new.rotations[0])
    }
}
