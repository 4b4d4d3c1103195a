import MeshWire

/// The graph the router computes paths on (ROUTING-SPEC §5–§6): a link between A and B exists when
/// both list each other, A's advert giving the latency from A to B.
///
/// Links of this node itself come from its live neighbour table alone: it knows first-hand that
/// they are up, and its neighbours' adverts may still be on their way.
struct Topology: Sendable, Equatable {
    /// A usable link from a node: the neighbour and the latency towards it.
    struct Link: Sendable, Hashable {
        var id: NodeID
        var latency: UInt32
    }

    /// Each node's usable links, ordered by neighbour id.
    private(set) var links: [NodeID: [Link]] = [:]

    /// The empty graph.
    init() {}

    /// Builds the graph.
    /// - Parameters:
    ///   - local: this node.
    ///   - localLinks: this node's neighbours with the latency to use for each.
    ///   - database: the received adverts.
    init(local: NodeID, localLinks: [NodeID: UInt32], database: LinkStateDatabase) {
        var listed: [NodeID: [NodeID: UInt32]] = [:]
        for (origin, entry) in database.entries where origin != local { listed[origin] = entry.listed }
        listed[local] = localLinks
        for (node, neighbors) in listed {
            var usable: [Link] = []
            for (neighbor, latency) in neighbors {
                let mutual: Bool
                if node == local {
                    mutual = true
                } else if neighbor == local {
                    mutual = localLinks[node] != nil
                } else {
                    mutual = listed[neighbor]?[node] != nil
                }
                if mutual { usable.append(Link(id: neighbor, latency: latency)) }
            }
            if node != local, localLinks[node] != nil, neighbors[local] == nil {
                // A neighbour whose advert does not list this node yet: the link is up.
                usable.append(Link(id: local, latency: localLinks[node] ?? 0))
            }
            usable.sort { $0.id < $1.id }
            links[node] = usable
        }
        for neighbor in localLinks.keys where listed[neighbor] == nil {
            links[neighbor] = [Link(id: local, latency: localLinks[neighbor] ?? 0)]
        }
    }

    /// The shortest-path tree rooted at `root`: fewest hops, then least summed latency, then the
    /// path whose node ids (from the root) are lexicographically smallest.
    func shortestPathTree(from root: NodeID) -> ShortestPathTree {
        var tree = ShortestPathTree(root: root)
        guard links[root] != nil else { return tree }
        tree.nodes[root] = .init(parent: nil, hops: 0, latency: 0, linkLatency: 0)
        var layer: [NodeID] = [root]
        var rank: [NodeID: Int] = [root: 0]
        var hops = 0
        while !layer.isEmpty {
            hops += 1
            var best: [NodeID: (latency: UInt64, parentRank: Int, parent: NodeID, link: UInt32)] = [:]
            for node in layer {
                let base = tree.nodes[node]?.latency ?? 0
                let nodeRank = rank[node] ?? 0
                for link in links[node] ?? [] where tree.nodes[link.id] == nil {
                    let candidate = (latency: base + UInt64(link.latency), parentRank: nodeRank, parent: node, link: link.latency)
                    if let current = best[link.id],
                       (current.latency, current.parentRank) <= (candidate.latency, candidate.parentRank) {
                        continue
                    }
                    best[link.id] = candidate
                }
            }
            // Rank the new layer by path order: the parent's rank, then the node's id.
            let next = best.keys.sorted {
                let a = best[$0]!.parentRank, b = best[$1]!.parentRank
                return a != b ? a < b : $0 < $1
            }
            rank = [:]
            for (index, node) in next.enumerated() {
                let choice = best[node]!
                rank[node] = index
                tree.nodes[node] = .init(parent: choice.parent, hops: hops, latency: choice.latency, linkLatency: choice.link)
            }
            layer = next
        }
        return tree
    }
}

/// Shortest paths from one root to every node it reaches.
struct ShortestPathTree: Sendable {
    struct Node: Sendable {
        /// The previous node on the path (nil for the root).
        var parent: NodeID?
        var hops: Int
        /// Summed latency in microseconds.
        var latency: UInt64
        /// The latency of the link from the parent.
        var linkLatency: UInt32
    }

    let root: NodeID
    var nodes: [NodeID: Node] = [:]

    init(root: NodeID) { self.root = root }

    /// The parent of `node` in the tree.
    func parent(of node: NodeID) -> NodeID? { nodes[node]?.parent }

    /// The route from the root to `destination`.
    func route(to destination: NodeID) -> Route? {
        guard destination != root, let node = nodes[destination] else { return nil }
        var path: [NodeID] = []
        var latencies: [UInt32] = []
        var current = destination
        while current != root, let entry = nodes[current] {
            path.append(current)
            latencies.append(entry.linkLatency)
            guard let parent = entry.parent else { break }
            current = parent
        }
        path.reverse()
        latencies.reverse()
        return Route(destination: destination, nextHop: path[0], hops: node.hops, path: path, hopLatenciesMicros: latencies)
    }

    /// Every route from the root, ordered by destination.
    var routes: [Route] {
        nodes.keys.sorted().compactMap { route(to: $0) }
    }
}
