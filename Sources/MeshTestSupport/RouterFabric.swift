import struct Foundation.Data
import MeshRouting
import MeshWire

/// Routers on an in-memory fabric with explicit links, a virtual clock and a fixed delay per
/// link, for routing tests and benchmarks.
///
/// Packets in flight are processed in time order (ties in the order they were sent); router
/// timers fire at their ``Router/nextDeadline``. A packet whose link was cut while it was in
/// flight is lost. The fabric counts every transmission (every ``RouterAction/send(_:to:)``),
/// every application delivery per node and packet id, and every packet id each node forwarded.
///
/// Nodes are numbered `0..<count`; their ids (``nodeID(_:)``) are pseudo-random, so the id order
/// is not the numbering.
public struct RouterFabric {
    /// An undirected link between two node numbers.
    public struct Link: Hashable, Sendable {
        /// The lower node number.
        public let a: Int
        /// The higher node number.
        public let b: Int

        /// Creates a link; the order of the ends does not matter.
        /// - Parameters:
        ///   - x: one end.
        ///   - y: the other end.
        public init(_ x: Int, _ y: Int) {
            a = min(x, y)
            b = max(x, y)
        }
    }

    private struct InFlight {
        var at: RouterInstant
        var order: Int
        var packet: RoutedPacket
        var from: Int
        var to: Int
    }

    /// The current virtual time.
    public private(set) var now: RouterInstant
    /// The delay of every link.
    public let linkDelay: Duration
    /// The node ids, by number.
    public let ids: [NodeID]
    /// The routers, by number.
    public private(set) var routers: [Router]
    /// The links that are up.
    public private(set) var links: Set<Link> = []

    /// Every transmission so far.
    public private(set) var transmissions = 0
    /// Transmissions of adverts so far.
    public private(set) var advertTransmissions = 0
    /// Transmissions per packet id (broadcasts and unicasts).
    public private(set) var transmissionsByPacket: [PacketID: Int] = [:]
    /// Application deliveries (broadcasts and unicasts) per node number and packet id.
    public private(set) var deliveries: [[PacketID: Int]]
    /// Per node number and packet id: how many inputs made the node send that packet (1 at most
    /// when there are no loops).
    public private(set) var forwardings: [[PacketID: Int]]
    /// Drops per reason.
    public private(set) var drops: [DropReason: Int] = [:]
    /// Sends to a node that is not a neighbour (a router bug).
    public private(set) var sendsToNonNeighbors = 0
    /// When each node last reported a reachability change.
    public private(set) var lastReachabilityChange: [RouterInstant?]

    private var inFlight: [InFlight] = []
    private var sendOrder = 0
    private var deadlines: [RouterInstant?]
    private var index: [NodeID: Int] = [:]
    private var nextPacket: UInt64 = 1

    /// The links of a line of `count` nodes: 0—1—…—(count−1).
    public static func line(_ count: Int) -> [(Int, Int)] { (0..<max(0, count - 1)).map { ($0, $0 + 1) } }

    /// The links of a ring of `count` nodes.
    public static func ring(_ count: Int) -> [(Int, Int)] { line(count) + [(count - 1, 0)] }

    /// The links of a rows × columns grid; node `row * columns + column`.
    public static func grid(rows: Int, columns: Int) -> [(Int, Int)] {
        var links: [(Int, Int)] = []
        for row in 0..<rows {
            for column in 0..<columns {
                let n = row * columns + column
                if column + 1 < columns { links.append((n, n + 1)) }
                if row + 1 < rows { links.append((n, n + columns)) }
            }
        }
        return links
    }

    /// The id of node number `number`: 16 pseudo-random bytes seeded by the number.
    /// - Parameter number: the node number.
    /// - Returns: the id.
    public static func nodeID(_ number: Int) -> NodeID {
        var rng = SplitMix64(seed: 0x6d65_7368 &+ UInt64(number))
        return try! NodeID(bytes: rng.bytes(NodeID.byteCount))
    }

    /// Creates `count` routers with no links.
    /// - Parameters:
    ///   - count: the number of nodes.
    ///   - configuration: every router's configuration.
    ///   - linkDelay: the one-way delay of every link (also the latency the routers are told).
    ///   - start: the initial virtual time.
    public init(count: Int, configuration: RoutingConfiguration = .init(), linkDelay: Duration = .milliseconds(1), start: RouterInstant = .zero) {
        now = start
        self.linkDelay = linkDelay
        ids = (0..<count).map(Self.nodeID)
        routers = ids.map { id in
            Router(localNode: id, configuration: configuration, initialSequence: 1, now: start) { advert in
                Data("signed \(advert.origin.shortHex) #\(advert.sequence)".utf8)
            }
        }
        deliveries = Array(repeating: [:], count: count)
        forwardings = Array(repeating: [:], count: count)
        lastReachabilityChange = Array(repeating: nil, count: count)
        deadlines = Array(repeating: nil, count: count)
        for (number, id) in ids.enumerated() { index[id] = number }
    }

    /// The number of nodes.
    public var count: Int { ids.count }

    /// The node number of `id`.
    /// - Parameter id: a node id of this fabric.
    /// - Returns: its number.
    public func number(of id: NodeID) -> Int? { index[id] }

    // MARK: - Topology

    /// Brings up a link now: both routers get ``Router/neighborUp(_:latencyMicros:now:)``.
    /// - Parameters:
    ///   - x: one end.
    ///   - y: the other end.
    public mutating func connect(_ x: Int, _ y: Int) {
        guard x != y, links.insert(Link(x, y)).inserted else { return }
        let micros = UInt32(linkDelay.components.seconds * 1_000_000 + linkDelay.components.attoseconds / 1_000_000_000_000)
        let (idX, idY) = (ids[x], ids[y])
        input(x) { $0.neighborUp(idY, latencyMicros: micros, now: $1) }
        input(y) { $0.neighborUp(idX, latencyMicros: micros, now: $1) }
    }

    /// Cuts a link now: both routers get ``Router/neighborDown(_:now:)``; packets on it are lost.
    /// - Parameters:
    ///   - x: one end.
    ///   - y: the other end.
    public mutating func disconnect(_ x: Int, _ y: Int) {
        guard links.remove(Link(x, y)) != nil else { return }
        let (idX, idY) = (ids[x], ids[y])
        input(x) { $0.neighborDown(idY, now: $1) }
        input(y) { $0.neighborDown(idX, now: $1) }
    }

    /// Hop distances on the true topology from `source` (breadth-first search).
    /// - Parameter source: the node number.
    /// - Returns: the distance of every node it reaches, itself included (0).
    public func distances(from source: Int) -> [Int: Int] {
        var adjacency: [Int: [Int]] = [:]
        for link in links {
            adjacency[link.a, default: []].append(link.b)
            adjacency[link.b, default: []].append(link.a)
        }
        var distance = [source: 0]
        var queue = [source]
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            for next in adjacency[node] ?? [] where distance[next] == nil {
                distance[next] = distance[node]! + 1
                queue.append(next)
            }
        }
        return distance
    }

    /// How every router's routes differ from breadth-first search on the true topology: each
    /// node must have a route with the right hop count to every node within `maxHops`, and none
    /// to any other node.
    /// - Parameter maxHops: the advert range (``RoutingConfiguration/maxHopLimit``).
    /// - Returns: one line per difference; empty when all routes are right.
    public func routeMismatches(maxHops: Int = Int(RoutingConfiguration.maxHopLimit)) -> [String] {
        var problems: [String] = []
        for source in 0..<count {
            let expected = distances(from: source).filter { $0.key != source && $0.value <= maxHops }
            var actual: [Int: Int] = [:]
            for route in routers[source].reachable {
                guard let destination = index[route.destination] else {
                    problems.append("node \(source) has a route to unknown \(route.destination.shortHex)")
                    continue
                }
                actual[destination] = route.hops
            }
            for (destination, hops) in expected.sorted(by: { $0.key < $1.key }) where actual[destination] != hops {
                problems.append("node \(source) → \(destination): \(actual[destination].map { "\($0) hops" } ?? "no route"), expected \(hops)")
            }
            for destination in actual.keys.sorted() where expected[destination] == nil {
                problems.append("node \(source) → \(destination): route of \(actual[destination]!) hops to a node it cannot reach")
            }
        }
        return problems
    }

    // MARK: - Traffic

    /// Sends a broadcast from a node now.
    /// - Parameters:
    ///   - source: the node number.
    ///   - payload: the payload.
    /// - Returns: the packet id.
    @discardableResult
    public mutating func broadcast(from source: Int, payload: Data = Data()) -> PacketID {
        let packetID = freshPacketID()
        input(source) { $0.broadcast(payload: payload, packetID: packetID, now: $1) }
        return packetID
    }

    /// Sends a unicast now.
    /// - Parameters:
    ///   - source: the sending node number.
    ///   - destination: the receiving node number.
    ///   - payload: the payload.
    /// - Returns: the packet id, or `nil` when the sender had no route.
    public mutating func unicast(from source: Int, to destination: Int, payload: Data = Data()) -> PacketID? {
        let packetID = freshPacketID()
        let target = ids[destination]
        var sent = true
        input(source) { router, now in
            switch router.unicast(payload: payload, to: target, packetID: packetID, now: now) {
            case .sent(let actions): return actions
            case .noRoute:
                sent = false
                return []
            }
        }
        return sent ? packetID : nil
    }

    /// The number of nodes that delivered `packetID` exactly once, and whether any delivered it more often.
    /// - Parameter packetID: the packet.
    /// - Returns: the node numbers that delivered it (each once) and those that delivered it twice or more.
    public func receivers(of packetID: PacketID) -> (once: Set<Int>, repeated: Set<Int>) {
        var once: Set<Int> = []
        var repeated: Set<Int> = []
        for (number, counts) in deliveries.enumerated() {
            switch counts[packetID] ?? 0 {
            case 0: break
            case 1: once.insert(number)
            default: repeated.insert(number)
            }
        }
        return (once, repeated)
    }

    /// The largest number of times any node forwarded one packet id (1 when there are no loops).
    public var maxForwardingsPerPacket: Int {
        forwardings.map { $0.values.max() ?? 0 }.max() ?? 0
    }

    // MARK: - Running

    /// Processes packets and timers up to `now + duration`, then sets the clock there.
    /// - Parameter duration: how long to run.
    public mutating func run(for duration: Duration) {
        let end = now + duration
        while step(until: end) {}
        now = max(now, end)
    }

    /// Processes packets and timers until nothing is in flight and no router has a deadline
    /// within `horizon` (refreshes and expiries are further away).
    /// - Parameter horizon: how far ahead a deadline still counts as pending work.
    /// - Returns: the virtual time when it settled.
    @discardableResult
    public mutating func settle(horizon: Duration = .seconds(1)) -> RouterInstant {
        while step(until: now + horizon) {}
        return now
    }

    /// Processes the next packet or timer at or before `limit`.
    /// - Returns: `false` when there was none.
    private mutating func step(until limit: RouterInstant) -> Bool {
        let packetAt = inFlight.first?.at
        var timerAt: RouterInstant?
        for deadline in deadlines { if let deadline, timerAt == nil || deadline < timerAt! { timerAt = deadline } }
        if let timerAt, timerAt <= limit, packetAt == nil || timerAt <= packetAt! {
            now = max(now, timerAt)
            for number in 0..<count {
                if let deadline = deadlines[number], deadline <= now { input(number) { $0.timerFired(now: $1) } }
            }
            return true
        }
        guard let packetAt, packetAt <= limit else { return false }
        let event = inFlight.removeFirst()
        now = max(now, packetAt)
        guard links.contains(Link(event.from, event.to)) else { return true }
        let sender = ids[event.from]
        input(event.to) { $0.received(event.packet, from: sender, now: $1) }
        return true
    }

    /// Feeds one input to a router and carries out its actions.
    private mutating func input(_ number: Int, _ body: (inout Router, RouterInstant) -> [RouterAction]) {
        let actions = body(&routers[number], now)
        deadlines[number] = routers[number].nextDeadline
        var forwarded: Set<PacketID> = []
        for action in actions {
            switch action {
            case .send(let packet, let neighbor):
                transmissions += 1
                if case .advert = packet.kind {
                    advertTransmissions += 1
                } else {
                    transmissionsByPacket[packet.packetID, default: 0] += 1
                    forwarded.insert(packet.packetID)
                }
                guard let to = index[neighbor], links.contains(Link(number, to)) else {
                    sendsToNonNeighbors += 1
                    continue
                }
                enqueue(InFlight(at: now + linkDelay, order: 0, packet: packet, from: number, to: to))
            case .deliver(let packet):
                if case .advert = packet.kind { continue }
                deliveries[number][packet.packetID, default: 0] += 1
            case .reachabilityChanged:
                lastReachabilityChange[number] = now
            case .dropped(_, let reason):
                drops[reason, default: 0] += 1
            }
        }
        for packetID in forwarded { forwardings[number][packetID, default: 0] += 1 }
    }

    private mutating func enqueue(_ event: InFlight) {
        var event = event
        sendOrder += 1
        event.order = sendOrder
        // Same delay for every link: events arrive in sending order, so appending keeps the queue
        // sorted; search from the back for the general case.
        var position = inFlight.count
        while position > 0, inFlight[position - 1].at > event.at { position -= 1 }
        inFlight.insert(event, at: position)
    }

    private mutating func freshPacketID() -> PacketID {
        nextPacket += 1
        return PacketID(high: 0x7061_636b_6574_0000, low: nextPacket)
    }
}
