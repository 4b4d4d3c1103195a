import MeshSession

extension ChatOutput {
    /// The answer to `/whois @peer`: what this node knows of a peer.
    public struct Whois: Sendable, Hashable {
        /// The peer.
        public let peer: PeerID
        /// Its identity key's fingerprint (PROTOCOL.md §20.1), once its advert or a link brought the key.
        public var fingerprint: String?
        /// Whether the user verified it (`/trust`, PROTOCOL.md §20.3).
        public var verified = false
        /// Links to it across the mesh, `nil` when it is out of reach.
        public var hops: Int?
        /// The nodes a line to it passes, the peer last (empty when out of reach).
        public var route: [PeerID] = []
        /// Its address, when it is a direct neighbour.
        public var address: String?
        /// The cipher suite of the link to it (PROTOCOL.md §4.11), when it is a direct neighbour.
        public var suite: CipherSuite?
        /// The place data sets it advertises (names).
        public var dataSets: [String] = []
        /// Its away text (`/away`, PROTOCOL.md §17.7), when it set one.
        public var away: String?

        /// Creates an answer that knows only the peer.
        /// - Parameter peer: the peer.
        public init(peer: PeerID) {
            self.peer = peer
        }
    }
}
