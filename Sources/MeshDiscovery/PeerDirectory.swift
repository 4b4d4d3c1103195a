import MeshCore

/// Where a discovered peer can be reached: one resolved address.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The address as text (`192.0.2.7`, `fe80::1%eth0`).
    public var address: String
    /// The TCP port.
    public var port: Int
    /// The interface it was seen on (empty when unknown).
    public var interfaceName: String
    /// The IP protocol.
    public var ipProtocol: IPProtocol

    /// Creates an endpoint.
    /// - Parameters:
    ///   - address: the address as text.
    ///   - port: the TCP port.
    ///   - interfaceName: the interface.
    ///   - ipProtocol: the IP protocol.
    public init(address: String, port: Int, interfaceName: String, ipProtocol: IPProtocol) {
        self.address = address
        self.port = port
        self.interfaceName = interfaceName
        self.ipProtocol = ipProtocol
    }

    /// `192.0.2.7:7000` or `[fe80::1%eth0]:7000`.
    public var description: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }

    /// Order of preference for connecting: IPv4 first, then global IPv6, then link-local IPv6.
    var preference: Int {
        switch ipProtocol {
        case .ipv4: 0
        case .ipv6: address.lowercased().hasPrefix("fe80") ? 2 : 1
        }
    }
}

/// A peer found by browsing: its advertisement and every address it was resolved at.
public struct DiscoveredPeer: Sendable, Hashable {
    /// What the peer announced.
    public var advertisement: Advertisement
    /// Its addresses, best first (IPv4, then global IPv6, then link-local IPv6).
    public var endpoints: [Endpoint]
    /// The DNS-SD instance names it is published under (usually one).
    public var instanceNames: [String]
}

/// Folds DNS-SD sightings into peers (pure; no I/O).
///
/// A peer is one node id, however many interfaces, protocols and instance names it is seen
/// on: the first valid sighting makes it ``Change/found(_:)``, later sightings that add or change
/// an address or the advertisement make it ``Change/updated(_:)``, and the removal of its last
/// sighting makes it ``Change/lost(_:)``. This node's own advertisement is never a peer. A
/// sighting whose TXT record is invalid is ``Change/ignored(_:reason:)`` (the shell logs it) and
/// forgotten. An instance whose TXT now names another node moves to that node.
public struct PeerDirectory: Sendable {
    /// What an input changed.
    public enum Change: Sendable, Hashable {
        /// A new peer.
        case found(DiscoveredPeer)
        /// A known peer with a new address, instance or advertisement.
        case updated(DiscoveredPeer)
        /// A peer with no sighting left.
        case lost(DiscoveredPeer)
        /// A sighting refused: its TXT record is invalid.
        case ignored(ServiceInstance, reason: String)
    }

    private struct Sighting: Sendable {
        var node: NodeID
        var advertisement: Advertisement
        var endpoint: Endpoint
    }

    private let localNode: NodeID
    private let protocolVersion: UInt32
    private var sightings: [ServiceInstance: Sighting] = [:]
    private var peers: [NodeID: DiscoveredPeer] = [:]

    /// Creates an empty directory.
    /// - Parameters:
    ///   - localNode: this node, whose own advertisement is skipped.
    ///   - protocolVersion: the version this node speaks; peers announcing another are ignored.
    public init(localNode: NodeID, protocolVersion: UInt32) {
        self.localNode = localNode
        self.protocolVersion = protocolVersion
    }

    /// The peers known now, by node id.
    public var all: [DiscoveredPeer] { peers.values.sorted { $0.advertisement.nodeID < $1.advertisement.nodeID } }

    /// The peer with this node id, if it is known.
    /// - Parameter node: a node id.
    /// - Returns: the peer.
    public func peer(_ node: NodeID) -> DiscoveredPeer? { peers[node] }

    /// An instance was resolved.
    /// - Parameter service: the resolution.
    /// - Returns: the changes, in order (an instance that moved to another node may lose one
    ///   peer and find another).
    public mutating func resolved(_ service: ResolvedService) -> [Change] {
        let advertisement: Advertisement
        do {
            advertisement = try Advertisement.decode(service.txt)
        } catch {
            return removed(service.instance) + [.ignored(service.instance, reason: error.message)]
        }
        if advertisement.nodeID == localNode { return removed(service.instance) }
        if advertisement.protocolVersion != protocolVersion {
            return removed(service.instance) + [.ignored(service.instance, reason:
                "it speaks protocol version \(advertisement.protocolVersion); this node speaks \(protocolVersion)")]
        }
        var changes: [Change] = []
        if let old = sightings[service.instance], old.node != advertisement.nodeID {
            changes += removed(service.instance)
        }
        let endpoint = Endpoint(address: service.address, port: service.port,
                                interfaceName: service.instance.interfaceName, ipProtocol: service.instance.ipProtocol)
        sightings[service.instance] = Sighting(node: advertisement.nodeID, advertisement: advertisement, endpoint: endpoint)
        let before = peers[advertisement.nodeID]
        let after = rebuild(advertisement.nodeID, latest: advertisement)
        if before == nil, let after {
            changes.append(.found(after))
        } else if let after, after != before {
            changes.append(.updated(after))
        }
        return changes
    }

    /// An instance went away.
    /// - Parameter instance: the sighting removed.
    /// - Returns: `lost` when it was the peer's last sighting, `updated` when the peer lost an
    ///   address, nothing when the instance was unknown.
    public mutating func removed(_ instance: ServiceInstance) -> [Change] {
        guard let old = sightings.removeValue(forKey: instance) else { return [] }
        let before = peers[old.node]
        guard let after = rebuild(old.node, latest: nil) else {
            return before.map { [.lost($0)] } ?? []
        }
        return after == before ? [] : [.updated(after)]
    }

    /// Forgets everything (the browse stopped); every known peer is lost.
    /// - Returns: one `lost` per peer.
    public mutating func removeAll() -> [Change] {
        let lost = all.map { Change.lost($0) }
        sightings = [:]
        peers = [:]
        return lost
    }

    private mutating func rebuild(_ node: NodeID, latest: Advertisement?) -> DiscoveredPeer? {
        let mine = sightings.filter { $0.value.node == node }
        guard !mine.isEmpty else {
            peers[node] = nil
            return nil
        }
        let advertisement = latest ?? peers[node]?.advertisement ?? mine.first!.value.advertisement
        var endpoints: [Endpoint] = []
        for endpoint in mine.values.map(\.endpoint).sorted(by: Self.endpointOrder) where !endpoints.contains(endpoint) {
            endpoints.append(endpoint)
        }
        let names = Set(mine.keys.map(\.name)).sorted()
        let peer = DiscoveredPeer(advertisement: advertisement, endpoints: endpoints, instanceNames: names)
        peers[node] = peer
        return peer
    }

    private static func endpointOrder(_ a: Endpoint, _ b: Endpoint) -> Bool {
        (a.preference, a.interfaceName, a.address, a.port) < (b.preference, b.interfaceName, b.address, b.port)
    }
}
