import MeshSession

/// `/mesh` as text: the shortest-path tree from me drawn with box characters, each node with its
/// link's round trip, then the links the tree leaves out and the nodes out of reach.
enum MeshGraphText {
    static func render(_ rows: [ChatOutput.MeshNodeRow]) -> [String] {
        guard let me = rows.first(where: { $0.hops == 0 }) else { return ["* the mesh is empty"] }
        let byID = Dictionary(rows.map { ($0.peer.id, $0) }, uniquingKeysWith: { first, _ in first })
        // Breadth-first from me over advertised links, in name order, gives the tree.
        var parent: [NodeID: (NodeID, Duration)] = [:]
        var order: [NodeID] = [me.peer.id]
        var seen: Set<NodeID> = [me.peer.id]
        var index = 0
        while index < order.count {
            let node = order[index]
            index += 1
            let links = (byID[node]?.links ?? []).sorted { ($0.peer.displayName, $0.peer.id) < ($1.peer.displayName, $1.peer.id) }
            for link in links where !seen.contains(link.peer.id) && byID[link.peer.id]?.hops != nil {
                seen.insert(link.peer.id)
                parent[link.peer.id] = (node, link.latency)
                order.append(link.peer.id)
            }
        }
        var children: [NodeID: [NodeID]] = [:]
        for node in order.dropFirst() { children[parent[node]!.0, default: []].append(node) }

        let nodes = rows.filter { $0.hops != nil }.count, links = Self.linkCount(rows)
        var lines = ["* mesh: \(nodes) node\(nodes == 1 ? "" : "s") reachable, \(links) link\(links == 1 ? "" : "s")"]
        func name(_ node: NodeID) -> String { byID[node]?.peer.shownName ?? node.shortHex }
        lines.append("\(name(me.peer.id)) (you)")
        func draw(_ node: NodeID, prefix: String) {
            let kids = children[node] ?? []
            for (n, child) in kids.enumerated() {
                let last = n == kids.count - 1
                let latency = parent[child].map { " \(JSONRenderer.milliseconds($0.1)) ms" } ?? ""
                lines.append("\(prefix)\(last ? "└─ " : "├─ ")\(name(child))\(latency)")
                draw(child, prefix: prefix + (last ? "   " : "│  "))
            }
        }
        draw(me.peer.id, prefix: "")
        var extra: [String] = []
        var listed: Set<[NodeID]> = []
        for row in rows where row.hops != nil {
            for link in row.links where byID[link.peer.id]?.hops != nil {
                let pair = [row.peer.id, link.peer.id].sorted()
                let inTree = parent[link.peer.id]?.0 == row.peer.id || parent[row.peer.id]?.0 == link.peer.id
                if !inTree, listed.insert(pair).inserted {
                    extra.append("\(name(pair[0])) ─ \(name(pair[1])) \(JSONRenderer.milliseconds(link.latency)) ms")
                }
            }
        }
        if !extra.isEmpty { lines.append("also linked: " + extra.sorted().joined(separator: ", ")) }
        let away = rows.filter { $0.hops == nil }.map(\.peer.shownName).sorted()
        if !away.isEmpty { lines.append("out of reach: " + away.joined(separator: ", ")) }
        return lines
    }

    private static func linkCount(_ rows: [ChatOutput.MeshNodeRow]) -> Int {
        var pairs: Set<[NodeID]> = []
        for row in rows where row.hops != nil {
            for link in row.links { pairs.insert([row.peer.id, link.peer.id].sorted()) }
        }
        return pairs.count
    }
}
