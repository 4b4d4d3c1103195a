import MeshRouting
import MeshTestSupport
import MeshWire
import Testing

/// Fifty-odd routers on the in-memory fabric (1 ms links, virtual time): routes against
/// breadth-first search, exactly-once broadcast and unicast, no loops, partitions, link breaks.
@Suite("Fabric")
struct FabricTests {
    static func configuration(hopLimit: UInt8 = 7, strategy: BroadcastStrategy = .sourceTree) -> RoutingConfiguration {
        var configuration = RoutingConfiguration()
        configuration.hopLimit = hopLimit
        configuration.broadcastStrategy = strategy
        return configuration
    }

    /// A converged fabric: links up at time 0, settled, then past the broadcast settle time.
    static func converged(_ count: Int, _ links: [(Int, Int)], _ configuration: RoutingConfiguration) -> RouterFabric {
        var fabric = RouterFabric(count: count, configuration: configuration)
        for (a, b) in links { fabric.connect(a, b) }
        fabric.settle()
        fabric.run(for: .seconds(2))
        return fabric
    }

    static func line(_ count: Int) -> [(Int, Int)] { RouterFabric.line(count) }
    static func ring(_ count: Int) -> [(Int, Int)] { RouterFabric.ring(count) }
    static func grid(rows: Int, columns: Int) -> [(Int, Int)] { RouterFabric.grid(rows: rows, columns: columns) }

    /// Broadcasts from `origins`; checks each reached exactly the nodes within `hopLimit` once.
    /// - Returns: the transmissions per broadcast.
    static func checkBroadcasts(_ fabric: inout RouterFabric, from origins: [Int], hopLimit: Int) -> [Int] {
        var counts: [Int] = []
        for origin in origins {
            let id = fabric.broadcast(from: origin)
            fabric.settle()
            let expected = Set(fabric.distances(from: origin).filter { $0.key != origin && $0.value <= hopLimit }.keys)
            let receivers = fabric.receivers(of: id)
            #expect(receivers.once == expected, "broadcast from \(origin)")
            #expect(receivers.repeated.isEmpty, "broadcast from \(origin) delivered twice")
            counts.append(fabric.transmissionsByPacket[id] ?? 0)
        }
        return counts
    }

    /// Unicasts between seeded random pairs; each is delivered once with one transmission per hop.
    static func checkUnicasts(_ fabric: inout RouterFabric, pairs: Int, seed: UInt64, hopLimit: Int = 7) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<pairs {
            let source = Int.random(in: 0..<fabric.count, using: &rng)
            var destination = Int.random(in: 0..<fabric.count, using: &rng)
            if destination == source { destination = (destination + 1) % fabric.count }
            let hops = fabric.distances(from: source)[destination]
            guard let hops, hops <= hopLimit else {
                #expect(fabric.unicast(from: source, to: destination) == nil, "\(source) → \(destination) beyond the hop limit")
                continue
            }
            guard let id = fabric.unicast(from: source, to: destination) else {
                Issue.record("no route \(source) → \(destination) (\(hops) hops)")
                continue
            }
            fabric.settle()
            #expect(fabric.receivers(of: id).once == [destination], "\(source) → \(destination)")
            #expect(fabric.transmissionsByPacket[id] == hops, "\(source) → \(destination)")
        }
    }

    @Test("line of 33 (hop limit 32): routes match BFS, broadcast reaches all, unicast end to end")
    func line33() {
        var fabric = Self.converged(33, Self.line(33), Self.configuration(hopLimit: 32))
        #expect(fabric.routeMismatches() == [])
        #expect(Self.checkBroadcasts(&fabric, from: [0, 16, 32], hopLimit: 32) == [32, 32, 32])
        let id = fabric.unicast(from: 0, to: 32)
        fabric.settle()
        #expect(id.map { fabric.transmissionsByPacket[$0] } == 32)
        #expect(fabric.sendsToNonNeighbors == 0 && fabric.maxForwardingsPerPacket == 1)
    }

    @Test("line of 50: adverts reach 32 hops, so routes exist exactly within 32 hops; hop limit 7 bounds broadcasts")
    func line50() {
        var fabric = Self.converged(50, Self.line(50), Self.configuration())
        #expect(fabric.routeMismatches(maxHops: 32) == [])
        #expect(fabric.unicast(from: 0, to: 40) == nil)
        #expect(fabric.unicast(from: 0, to: 8) == nil, "beyond the hop limit of 7")
        #expect(Self.checkBroadcasts(&fabric, from: [0, 20, 49], hopLimit: 7) == [7, 14, 7])
        Self.checkUnicasts(&fabric, pairs: 30, seed: 1)
        #expect(fabric.maxForwardingsPerPacket == 1)
    }

    @Test("ring of 50: routes match BFS, broadcasts exactly once within the hop limit, unicasts exactly once")
    func ring50() {
        var fabric = Self.converged(50, Self.ring(50), Self.configuration())
        #expect(fabric.routeMismatches() == [])
        #expect(Self.checkBroadcasts(&fabric, from: [0, 13, 37], hopLimit: 7) == [14, 14, 14])
        Self.checkUnicasts(&fabric, pairs: 40, seed: 2)
        #expect(fabric.maxForwardingsPerPacket == 1 && fabric.sendsToNonNeighbors == 0)
    }

    @Test("5×10 grid: source-tree broadcasts cost N−1 transmissions; flooding costs more")
    func grid() {
        let links = Self.grid(rows: 5, columns: 10)
        var tree = Self.converged(50, links, Self.configuration(hopLimit: 16))
        #expect(tree.routeMismatches() == [])
        let treeCounts = Self.checkBroadcasts(&tree, from: [0, 9, 24, 40, 49], hopLimit: 16)
        #expect(treeCounts == Array(repeating: 49, count: 5))
        Self.checkUnicasts(&tree, pairs: 50, seed: 3, hopLimit: 16)
        #expect(tree.maxForwardingsPerPacket == 1)

        var flood = Self.converged(50, links, Self.configuration(hopLimit: 16, strategy: .flood))
        let floodCounts = Self.checkBroadcasts(&flood, from: [0, 9, 24, 40, 49], hopLimit: 16)
        #expect(floodCounts.allSatisfy { $0 > 49 })
        #expect(flood.maxForwardingsPerPacket == 1)
        print("grid 5×10 transmissions per broadcast: source tree \(treeCounts), flooding \(floodCounts); adverts to converge: \(tree.advertTransmissions)")
    }

    @Test("5×10 grid cut in two and healed: no route across while cut, routes back after")
    func partition() {
        let links = Self.grid(rows: 5, columns: 10)
        var fabric = Self.converged(50, links, Self.configuration(hopLimit: 16))
        let cut = (0..<5).map { ($0 * 10 + 4, $0 * 10 + 5) }
        for (a, b) in cut { fabric.disconnect(a, b) }
        fabric.settle()
        fabric.run(for: .seconds(2))
        #expect(fabric.routeMismatches() == [])
        #expect(fabric.unicast(from: 0, to: 9) == nil)
        #expect(fabric.unicast(from: 49, to: 20) == nil)
        let left = (0..<50).filter { $0 % 10 < 5 }
        #expect(Self.checkBroadcasts(&fabric, from: [0, 49], hopLimit: 16).allSatisfy { $0 == left.count - 1 })
        for (a, b) in cut { fabric.connect(a, b) }
        fabric.settle()
        #expect(fabric.routeMismatches() == [])
        fabric.run(for: .seconds(2))
        Self.checkUnicasts(&fabric, pairs: 30, seed: 4, hopLimit: 16)
        #expect(Self.checkBroadcasts(&fabric, from: [0], hopLimit: 16) == [49])
        #expect(fabric.maxForwardingsPerPacket == 1 && fabric.sendsToNonNeighbors == 0)
    }

    @Test("10-node line: a broken link is reflected in every node's routes within a few link delays")
    func breakConvergence() {
        var fabric = Self.converged(10, Self.line(10), Self.configuration())
        let broken = fabric.now
        fabric.disconnect(4, 5)
        fabric.settle()
        #expect(fabric.routeMismatches() == [])
        let last = fabric.lastReachabilityChange.compactMap { $0 }.max() ?? broken
        let convergence = last - broken
        print("10-node line: every node's routes reflect the break after \(convergence)")
        #expect(convergence < .seconds(2))
        #expect(convergence <= .milliseconds(10))
        #expect((0..<10).allSatisfy { fabric.lastReachabilityChange[$0].map { $0 >= broken } == true })
    }

    @Test("random link flaps (seeded) ending stable: routes match BFS, broadcasts exactly once")
    func flaps() {
        let links = Self.grid(rows: 5, columns: 10)
        var fabric = Self.converged(50, links, Self.configuration(hopLimit: 16))
        var rng = SplitMix64(seed: 7)
        var up = Set(links.map { RouterFabric.Link($0.0, $0.1) })
        for _ in 0..<200 {
            let (a, b) = links[Int.random(in: 0..<links.count, using: &rng)]
            let link = RouterFabric.Link(a, b)
            if up.remove(link) != nil { fabric.disconnect(a, b) } else { up.insert(link); fabric.connect(a, b) }
            fabric.run(for: .microseconds(Int64.random(in: 0...20_000, using: &rng)))
        }
        // End stable: every link up except a few.
        for (a, b) in links where !up.contains(RouterFabric.Link(a, b)) {
            up.insert(RouterFabric.Link(a, b))
            fabric.connect(a, b)
        }
        for (a, b) in [(0, 1), (22, 23), (37, 47)] { fabric.disconnect(a, b) }
        fabric.settle()
        #expect(fabric.routeMismatches() == [])
        fabric.run(for: .seconds(2))
        #expect(Self.checkBroadcasts(&fabric, from: [0, 25, 49], hopLimit: 16) == [49, 49, 49])
        Self.checkUnicasts(&fabric, pairs: 30, seed: 8, hopLimit: 16)
        #expect(fabric.maxForwardingsPerPacket == 1 && fabric.sendsToNonNeighbors == 0)
    }
}
