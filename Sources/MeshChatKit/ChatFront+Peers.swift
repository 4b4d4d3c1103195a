import MeshChat
import MeshSession

extension ChatFront {
    /// The rows of `/peers`: connected, reachable across the mesh, and discovered peers, each with
    /// its away text when it set one (PROTOCOL.md §17.7).
    func peerRows() -> [ChatOutput.PeerRow] {
        let connected = session.connectedPeers
        let routes = Dictionary(session.reachablePeers.map { ($0.peer.id, $0) }, uniquingKeysWith: { first, _ in first })
        var rows = connected.map { peer in
            var row = ChatOutput.PeerRow(id: peer.id.hex, name: peer.displayName, state: "connected", address: session.remoteAddress(of: peer))
            row.hops = 1
            return row
        }
        for route in session.reachablePeers where !connected.contains(route.peer) {
            var row = ChatOutput.PeerRow(id: route.peer.id.hex, name: route.peer.displayName, state: "reachable", address: nil)
            row.hops = route.hops
            row.via = route.nextHop
            rows.append(row)
        }
        let pending = Set(finder?.pendingInvitations ?? [])
        for (peer, address) in finder?.discovered ?? [] where !connected.contains(peer) && routes[peer.id] == nil {
            rows.append(ChatOutput.PeerRow(id: peer.id.hex, name: peer.displayName,
                                           state: pending.contains(peer) ? "invitedYou" : "found", address: address))
        }
        for index in rows.indices {
            if let peer = rows[index].peer { rows[index].away = messenger.away(of: peer) }
        }
        return rows
    }

    /// Every node of the topology with its hops (0 for me, `nil` out of reach) and links.
    func meshRows() -> [ChatOutput.MeshNodeRow] {
        let routes = Dictionary(session.reachablePeers.map { ($0.peer.id, $0) }, uniquingKeysWith: { first, _ in first })
        let me = session.peer.peerID
        let entries = session.topology
        var names: [NodeID: PeerID] = [me.id: me]
        for entry in entries { names[entry.node.id] = entry.node }
        for route in routes.values { names[route.peer.id] = route.peer }
        func peer(_ node: NodeID) -> PeerID { names[node] ?? name(of: node) }
        var rows = entries.map { entry in
            ChatOutput.MeshNodeRow(peer: entry.node.id == me.id ? me : entry.node,
                                   hops: entry.node.id == me.id ? 0 : routes[entry.node.id]?.hops,
                                   links: entry.neighbors.map { .init(peer: peer($0.node), latency: $0.latency) })
        }
        if !rows.contains(where: { $0.peer.id == me.id }) { rows.insert(.init(peer: me, hops: 0, links: []), at: 0) }
        return rows.sorted { ($0.hops ?? Int.max, $0.peer.displayName) < ($1.hops ?? Int.max, $1.peer.displayName) }
    }
}
