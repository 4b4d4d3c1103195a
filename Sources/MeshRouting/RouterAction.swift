import MeshWire

/// A route from this node to another, along the shortest path (ROUTING-SPEC §6).
public struct Route: Sendable, Hashable {
    /// The node the route leads to.
    public var destination: NodeID
    /// The neighbour to send to.
    public var nextHop: NodeID
    /// The number of links on the path.
    public var hops: Int
    /// The nodes on the path, from the next hop to the destination (this node excluded).
    public var path: [NodeID]
    /// The latency of each link on the path in microseconds, as advertised by the sending side
    /// of the link; `hopLatenciesMicros[i]` is the link into `path[i]`.
    public var hopLatenciesMicros: [UInt32]

    /// Creates a route.
    /// - Parameters:
    ///   - destination: the last node.
    ///   - nextHop: the first node.
    ///   - hops: the number of links.
    ///   - path: the nodes after this one.
    ///   - hopLatenciesMicros: the latency of each link.
    public init(destination: NodeID, nextHop: NodeID, hops: Int, path: [NodeID], hopLatenciesMicros: [UInt32]) {
        self.destination = destination
        self.nextHop = nextHop
        self.hops = hops
        self.path = path
        self.hopLatenciesMicros = hopLatenciesMicros
    }

    /// The summed latency of the path in microseconds.
    public var latencyMicros: UInt64 { hopLatenciesMicros.reduce(0) { $0 + UInt64($1) } }
}

/// A change in which nodes this node can reach, or how.
public enum ReachabilityChange: Sendable, Hashable {
    /// A node that was unreachable now has this route.
    case reachable(Route)
    /// A reachable node's next hop, hop count or path changed (a latency change alone is not
    /// reported; ``Router/route(to:)`` always has the current figures).
    case changed(Route)
    /// The node can no longer be reached.
    case unreachable(NodeID)

    /// The node the change is about.
    public var destination: NodeID {
        switch self {
        case .reachable(let route), .changed(let route): route.destination
        case .unreachable(let node): node
        }
    }
}

/// Why the router did not process or forward a packet.
public enum DropReason: Sendable, Hashable {
    /// The packet id (for adverts: the origin and a sequence at or below the stored one) was seen before.
    case duplicate
    /// A relay has no route to the unicast's destination; the origin's end-to-end retransmission
    /// recovers once the routes converge.
    case noRoute
    /// A relay would have to forward a unicast whose hop limit is used up.
    case hopLimitReached
    /// A unicast's next hop is the neighbour it just came from: the two nodes' databases disagree.
    case routingLoop
    /// An advert from an origin not in the database, which already holds
    /// ``RoutingConfiguration/maxNodes`` origins.
    case tooManyNodes
    /// An advert listing more than ``RoutingConfiguration/maxNeighborsPerAdvert`` neighbours.
    case tooManyNeighbors
    /// An advert whose origin differs from its packet's origin.
    case invalidAdvert
    /// The neighbour it came from used up its budget for this work (``NeighborWork``).
    case overBudget(NeighborWork)
}

/// What the shell must do after an input to the ``Router``.
public enum RouterAction: Sendable, Hashable {
    /// Send the packet to this neighbour.
    case send(RoutedPacket, to: NodeID)
    /// Hand the packet to the layer above: a broadcast or a unicast for this node (first copy
    /// only), or a received advert that is new (so the layer above can read its attachment).
    case deliver(RoutedPacket)
    /// The routes changed; one action lists every change of the input, ordered by destination.
    case reachabilityChanged([ReachabilityChange])
    /// The packet was dropped for this reason (for logs and counters; nothing to do).
    case dropped(RoutedPacket, DropReason)
}

/// The result of ``Router/unicast(payload:to:packetID:now:)``.
public enum UnicastOutcome: Sendable, Hashable {
    /// The packet is on its way (or delivered locally when addressed to this node).
    case sent([RouterAction])
    /// No route to the destination, or it is further away than the hop limit.
    case noRoute
}
