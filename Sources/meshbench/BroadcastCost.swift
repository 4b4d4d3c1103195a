import ArgumentParser
import MeshRouting
import MeshTestSupport

/// Figure 2: transmissions per broadcast on the 50-node 5×10 grid, source-tree forwarding (the
/// default) against naive flooding, on ``RouterFabric`` (the pure routers, virtual time, 1 ms links).
///
/// Each strategy gets its own fabric: all links up, settled, then 2 s past the broadcast settle
/// time. Then every node broadcasts once, one at a time, each settled before the next. Counted:
/// every transmission of the broadcast's packet id, and every node that delivered it.
enum BroadcastCostBench {
    /// The options of this figure.
    struct Options: ParsableArguments {
        @Option(name: .customLong("grid-rows"), help: "Rows of the broadcast grid.") var rows = 5
        @Option(name: .customLong("grid-columns"), help: "Columns of the broadcast grid.") var columns = 10
    }

    /// What the broadcasts of one configuration cost.
    struct Cost {
        /// Broadcasts sent (one per node).
        var broadcasts = 0
        /// Transmissions of all of them.
        var transmissions = 0
        /// Nodes that delivered them (exactly once each).
        var deliveries = 0
        /// Deliveries beyond the first at a node (must be 0).
        var duplicates = 0
        /// Nodes within the hop limit that did not deliver (must be 0).
        var missed = 0
        /// Advert transmissions until the fabric converged.
        var advertTransmissions = 0
    }

    /// The links of a rows × columns grid, node `row * columns + column`.
    static func grid(rows: Int, columns: Int) -> [(Int, Int)] { RouterFabric.grid(rows: rows, columns: columns) }

    /// Broadcasts once from every node of a converged grid fabric.
    static func measure(rows: Int, columns: Int, hopLimit: UInt8, strategy: BroadcastStrategy) -> Cost {
        var configuration = RoutingConfiguration()
        configuration.hopLimit = hopLimit
        configuration.broadcastStrategy = strategy
        let count = rows * columns
        var fabric = RouterFabric(count: count, configuration: configuration)
        for (a, b) in grid(rows: rows, columns: columns) { fabric.connect(a, b) }
        fabric.settle()
        fabric.run(for: .seconds(2))
        var cost = Cost(advertTransmissions: fabric.advertTransmissions)
        for origin in 0..<count {
            let id = fabric.broadcast(from: origin)
            fabric.settle()
            let expected = Set(fabric.distances(from: origin).filter { $0.key != origin && $0.value <= Int(hopLimit) }.keys)
            let receivers = fabric.receivers(of: id)
            cost.broadcasts += 1
            cost.transmissions += fabric.transmissionsByPacket[id] ?? 0
            cost.deliveries += receivers.once.count + receivers.repeated.count
            cost.duplicates += receivers.repeated.reduce(0) { $0 + (fabric.deliveries[$1][id] ?? 1) - 1 }
            cost.missed += expected.subtracting(receivers.once).subtracting(receivers.repeated).count
        }
        return cost
    }

    /// Runs the figure at hop limit 16 (every node in range) and at the default 7.
    static func run(_ options: Options) -> MeshTable {
        progress("broadcast cost: \(options.rows)×\(options.columns) grid on the router fabric")
        var rows: [MeshRow] = []
        var notes: [String] = []
        let diameter = options.rows + options.columns - 2
        for hopLimit in [UInt8(max(16, diameter)), RoutingConfiguration().hopLimit] {
            let tree = measure(rows: options.rows, columns: options.columns, hopLimit: hopLimit, strategy: .sourceTree)
            let flood = measure(rows: options.rows, columns: options.columns, hopLimit: hopLimit, strategy: .flood)
            let n = Double(tree.broadcasts)
            let goal = Int(hopLimit) >= diameter ? "\(options.rows * options.columns - 1) (one per receiver)" : "1 per delivery"
            rows.append(MeshRow("transmissions per broadcast, hop limit \(hopLimit) (mean of \(tree.broadcasts) origins)", "",
                                Double(tree.transmissions) / n, Double(flood.transmissions) / n, goal: goal))
            rows.append(MeshRow("transmissions per delivery, hop limit \(hopLimit)", "",
                                Double(tree.transmissions) / Double(max(tree.deliveries, 1)),
                                Double(flood.transmissions) / Double(max(flood.deliveries, 1)), goal: "1.00"))
            rows.append(MeshRow("deliveries per broadcast, hop limit \(hopLimit)", "",
                                Double(tree.deliveries) / n, Double(flood.deliveries) / n))
            notes.append("hop limit \(hopLimit): duplicate deliveries \(tree.duplicates) (tree) / \(flood.duplicates) (flood), "
                         + "nodes in range that missed a broadcast \(tree.missed) / \(flood.missed), "
                         + "advert transmissions to converge \(tree.advertTransmissions) / \(flood.advertTransmissions)")
        }
        notes.insert("Pure routers (MeshRouting) on MeshTestSupport.RouterFabric: virtual time, 1 ms links, converged and settled "
                     + "before the broadcasts; every node broadcasts once, one at a time. Baseline: the same routers with "
                     + "broadcastStrategy = .flood. Hop limit \(max(16, diameter)) reaches every node (grid diameter \(diameter)); 7 is the default.",
                     at: 0)
        return MeshTable(title: "Broadcast cost on the \(options.rows)×\(options.columns) grid (\(options.rows * options.columns) nodes)",
                         subject: "source tree (default)", baselineName: "flooding", rows: rows, notes: notes)
    }
}
