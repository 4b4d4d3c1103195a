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
}
