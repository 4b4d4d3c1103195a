import Crypto
import Foundation
import Logging
import MeshLink
import MeshRouting
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// The mesh node as a value, pumped against other node values on a line A—B—C with explicit time:
/// no sockets, no tasks, no sleeps.
@Suite("Mesh node state machine")
struct MeshNodeStateMachineTests {
    /// Node values wired by hand, with a clock the test moves.
    struct Line {
        static let names = ["alice", "bob", "carol"]
        var nodes: [MeshNodeStateMachine]
        var ids: [NodeID]
        var now = RouterInstant.zero
        var nowMilliseconds: Int64 = 1_800_000_000_000
        var random = SplitMix64(seed: 14)
        /// What each node reported, in order.
        var events: [[SessionEvent]]
        var channelMessages: [[MeshNodeStateMachine.ChannelDelivery]]
        /// Every routed packet each node was handed, with the neighbour it came from.
        var arrived: [[(RoutedPayload, from: Int)]]
        /// Links as pairs of node indices.
        var links: Set<[Int]> = []

        init(count: Int = 3) {
            let peers = (0..<count).map(MeshNodeStateMachineTests.peer)
            nodes = peers.map {
                MeshNodeStateMachine(peer: $0, configuration: RoutingConfiguration(), initialSequence: 1, now: .zero,
                                     logger: MeshNodeStateMachineTests.logger)
            }
            ids = peers.map(\.identity.nodeID)
            events = Array(repeating: [], count: count)
            channelMessages = Array(repeating: [], count: count)
            arrived = Array(repeating: [], count: count)
        }

        func index(of node: NodeID) -> Int { ids.firstIndex(of: node)! }

        /// Links `a` and `b` as an admitted link would (the handshake proved both keys).
        mutating func link(_ a: Int, _ b: Int) {
            links.insert([a, b].sorted())
            for (here, there) in [(a, b), (b, a)] {
                let peer = nodes[there].me
                let key = nodes[there].identity.staticKey.publicKey.rawRepresentation
                let step = nodes[here].neighborUp(peer, staticKey: key, latency: .milliseconds(1), now: now)
                take(step, at: here)
            }
        }

        /// Records a step's events and hands its packets on, breadth first, until nothing moves.
        /// - Returns: the steps of the nodes the packets reached, by node.
        @discardableResult
        mutating func take(_ step: MeshNodeStateMachine.Step, at node: Int) -> [MeshNodeStateMachine.Step] {
            var steps: [MeshNodeStateMachine.Step] = []
            var queue: [(to: Int, from: Int, RoutedPayload)] = []
            func record(_ step: MeshNodeStateMachine.Step, at node: Int) {
                events[node] += step.events
                channelMessages[node] += step.channelMessages
                for (neighbor, routed) in step.sends { queue.append((index(of: neighbor), node, routed)) }
            }
            record(step, at: node)
            var handled = 0
            while !queue.isEmpty {
                let (to, from, routed) = queue.removeFirst()
                handled += 1
                precondition(handled < 10_000, "the line does not settle")
                guard links.contains([to, from].sorted()) else { continue }
                arrived[to].append((routed, from))
                let next = nodes[to].received(routed, from: ids[from], now: now, nowMilliseconds: nowMilliseconds, random: &random)
                steps.append(next)
                record(next, at: to)
            }
            return steps
        }

        /// Moves the clock and fires every node's due timer.
        mutating func advance(_ duration: Duration) {
            now = now + duration
            nowMilliseconds += Int64(duration.components.seconds * 1000)
            for node in nodes.indices where nodes[node].nextDeadline.map({ $0 <= now }) ?? false {
                take(nodes[node].timerFired(now: now), at: node)
            }
        }

        /// The data messages a node received, with their hop counts.
        func received(at node: Int) -> [(Data, hops: Int, sender: String)] {
            events[node].compactMap { event in
                guard case .received(let message) = event, case .data(let data) = message.content else { return nil }
                return (data, message.hops, message.sender.displayName)
            }
        }

        /// A line A—B—C whose adverts have spread.
        static func settled() -> Line {
            var line = Line()
            line.link(0, 1)
            line.link(1, 2)
            // The advert rate limit batches the second link's change; the timer sends it.
            for _ in 0..<5 { line.advance(.seconds(1)) }
            return line
        }
    }

    @Test("adverts teach the far end's name, key and two-hop route")
    func advertLearning() {
        let line = Line.settled()
        let route = line.nodes[0].route(to: line.ids[2])
        #expect(route?.hops == 2)
        #expect(route?.nextHop.id == line.ids[1])
        #expect(line.nodes[0].peer(line.ids[2])?.displayName == "carol")
        #expect(line.nodes[2].peer(line.ids[0])?.displayName == "alice")
        #expect(line.events[0].contains { event in
            if case .reachabilityChanged(let peer, let route?) = event { return peer.id == line.ids[2] && route.hops == 2 }
            return false
        })
    }

    @Test("identity keys are known from the handshake for neighbours and from signed adverts two hops away")
    func identityKeys() {
        let line = Line.settled()
        let alice = line.nodes[0].identityKey(of: line.ids[0])
        let carol = line.nodes[2].identityKey(of: line.ids[2])
        #expect(alice?.count == 32 && carol?.count == 32 && alice != carol)
        #expect(line.nodes[2].identityKey(of: line.ids[0]) == alice)
        #expect(line.nodes[0].identityKey(of: line.ids[2]) == carol)
        #expect(line.nodes[1].identityKey(of: line.ids[0]) == alice)
        #expect(line.nodes[0].identityKey(of: NodeID.random()) == nil)
    }

    @Test("a sealed packet from A is relayed by B and opened only at C")
    func sealedRelayed() throws {
        var line = Line.settled()
        let step = try #require(try line.nodes[0].sendSealed(.data(Self.data("for carol")), to: line.ids[2], now: line.now,
                                                             nowMilliseconds: line.nowMilliseconds, random: &line.random))
        #expect(step.sends.map { $0.0 } == [line.ids[1]])
        line.take(step, at: 0)
        let atC = line.received(at: 2)
        #expect(atC.count == 1)
        #expect(atC.first?.0 == Data("for carol".utf8))
        #expect(atC.first?.hops == 2)
        #expect(atC.first?.sender == "alice")
        #expect(line.received(at: 1).isEmpty)
        // B saw only ciphertext: the plaintext is nowhere in the packet it relayed.
        let relayed = try #require(line.arrived[1].last?.0)
        #expect(relayed.sealed.range(of: Data("for carol".utf8)) == nil)
    }

    @Test("a node that is not reachable gets nothing sent")
    func sealedUnreachable() throws {
        var line = Line()
        let step = try line.nodes[0].sendSealed(.data(Self.data("x")), to: line.ids[2], now: line.now,
                                                nowMilliseconds: line.nowMilliseconds, random: &line.random)
        #expect(step.map { _ in true } == nil)
    }

    @Test("a broadcast reaches every node once, with its hop count")
    func broadcast() {
        var line = Line.settled()
        let step = line.nodes[0].broadcast(.data(Self.data("hello all")), sentAt: line.nowMilliseconds, now: line.now, random: &line.random)
        line.take(step, at: 0)
        #expect(line.received(at: 1).map(\.hops) == [1])
        #expect(line.received(at: 2).map(\.hops) == [2])
        #expect(line.received(at: 2).first?.sender == "alice")
        #expect(line.received(at: 0).isEmpty)
    }

    @Test("a replayed sealed packet or broadcast is dropped")
    func replayDropped() throws {
        var line = Line.settled()
        let sealed = try #require(try line.nodes[0].sendSealed(.data(Self.data("once")), to: line.ids[1], now: line.now,
                                                               nowMilliseconds: line.nowMilliseconds, random: &line.random))
        line.take(sealed, at: 0)
        line.take(line.nodes[0].broadcast(.data(Self.data("once too")), sentAt: line.nowMilliseconds, now: line.now, random: &line.random), at: 0)
        #expect(line.received(at: 1).count == 2)
        var replayed = 0
        for (packet, from) in line.arrived[1] where from == 0 {
            switch packet.payload {
            case .sealed?, .broadcast?: replayed += 1
            default: continue
            }
            let again = line.nodes[1].received(packet, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
            #expect(again.events.isEmpty)
            #expect(again.sends.isEmpty)
            #expect(again.violation == nil)
        }
        #expect(replayed == 2)
        #expect(line.received(at: 1).count == 2)
    }

    @Test("a malformed header closes the link and changes nothing")
    func malformedHeader() {
        var line = Line.settled()
        var routed = RoutedPayload()
        routed.origin = Data([1, 2, 3])
        routed.packetID = Data(count: PacketID.byteCount)
        routed.sealed = Data(count: 32)
        let before = line.nodes[1].reachable.map(\.peer.id)
        let step = line.nodes[1].received(routed, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
        #expect(step.violation?.contains("origin has 3 bytes") == true)
        #expect(step.sends.isEmpty && step.events.isEmpty)
        #expect(line.nodes[1].reachable.map(\.peer.id) == before)
    }

    @Test("relaying beyond a neighbour's budget drops the excess until the bucket refills (§13.11)")
    func relayBudget() {
        var line = Line.settled()
        let relay = NeighborWork.relaying.budget
        var relayed = 0
        for _ in 0..<(relay.burst + 100) {
            let step = line.nodes[1].received(Self.transit(from: line.ids[0], to: line.ids[2], random: &line.random),
                                              from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
            #expect(step.violation == nil)
            relayed += step.sends.count
        }
        #expect(relayed == relay.burst)
        line.now = line.now + .seconds(1)
        let later = line.nodes[1].received(Self.transit(from: line.ids[0], to: line.ids[2], random: &line.random),
                                           from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
        #expect(later.sends.map { $0.0 } == [line.ids[2]])
    }

    @Test("a neighbour's broadcasts over budget make its reader wait (§13.11)")
    func broadcastBudgetWait() {
        var line = Line.settled()
        let burst = NeighborWork.broadcast.budget.burst
        var delivered = 0
        for _ in 0..<(burst + 10) {
            let step = line.nodes[0].broadcast(.data(Self.data("b")), sentAt: line.nowMilliseconds, now: line.now, random: &line.random)
            guard let packet = step.sends.first(where: { $0.0 == line.ids[1] })?.1 else { continue }
            #expect(line.nodes[1].budgetWait(packet, from: line.ids[0], now: line.now) == nil || delivered >= burst)
            let at = line.nodes[1].received(packet, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
            delivered += at.events.filter { if case .received = $0 { true } else { false } }.count
        }
        #expect(delivered == burst)
        let next = line.nodes[0].broadcast(.data(Self.data("b")), sentAt: line.nowMilliseconds, now: line.now, random: &line.random)
        let packet = next.sends.first { $0.0 == line.ids[1] }!.1
        #expect(line.nodes[1].budgetWait(packet, from: line.ids[0], now: line.now) != nil)
    }

    @Test("pings are answered with pongs up to 20 a second, and a pong marks its ping answered (§13.10)")
    func pongBudget() throws {
        var line = Line.settled()
        var answered: [UInt64] = []
        var started: [UInt64] = []
        let count = MeshNodeStateMachine.maxPongsPerSecond + 5
        for _ in 0..<count {
            var ping = Meshchat_V1_Ping()
            ping.nonce = line.nodes[0].startPing(random: &line.random)
            started.append(ping.nonce)
            let step = try #require(try line.nodes[0].sendSealed(.ping(ping), to: line.ids[2], now: line.now,
                                                                 nowMilliseconds: line.nowMilliseconds, random: &line.random))
            answered += line.take(step, at: 0).flatMap(\.answeredPings)
        }
        #expect(answered == Array(started.prefix(MeshNodeStateMachine.maxPongsPerSecond)))
        #expect(Set(started).count == count)
        #expect(line.nodes[0].ping(started[0]) == .answered)
        #expect(line.nodes[0].ping(started[count - 1]) == .sent)
        // The next wall-clock second has a fresh budget.
        line.nowMilliseconds += 1000
        var ping = Meshchat_V1_Ping()
        ping.nonce = line.nodes[0].startPing(random: &line.random)
        let step = try #require(try line.nodes[0].sendSealed(.ping(ping), to: line.ids[2], now: line.now,
                                                             nowMilliseconds: line.nowMilliseconds, random: &line.random))
        #expect(line.take(step, at: 0).flatMap(\.answeredPings) == [ping.nonce])
        // A pong for a forgotten ping answers nothing.
        line.nodes[0].forgetPing(started[0])
        #expect(line.nodes[0].ping(started[0]) == nil)
        var late = Meshchat_V1_Pong()
        late.nonce = started[0]
        let pong = try #require(try line.nodes[2].sendSealed(.pong(late), to: line.ids[0], now: line.now,
                                                             nowMilliseconds: line.nowMilliseconds, random: &line.random))
        #expect(line.take(pong, at: 2).flatMap(\.answeredPings).isEmpty)
        #expect(line.nodes[0].ping(started[0]) == nil)
    }

    @Test("a rename reaches the far end as peerRenamed through the next advert")
    func rename() throws {
        var line = Line.settled()
        let renamed = try PeerID(id: line.ids[0], displayName: "alicia")
        line.take(line.nodes[0].rename(renamed, now: line.now), at: 0)
        for _ in 0..<3 { line.advance(.seconds(1)) }
        #expect(line.events[2].contains { event in
            if case .peerRenamed(let peer, let previous) = event { return peer.displayName == "alicia" && previous == "alice" }
            return false
        })
        #expect(line.nodes[2].peer(line.ids[0])?.displayName == "alicia")
    }

    @Test("a channel attachment set at A is read at C from A's advert (§13.12)")
    func attachment() {
        var line = Line.settled()
        line.take(line.nodes[0].setAttachment(Data("pin".utf8), channel: 70_000, now: line.now), at: 0)
        for _ in 0..<3 { line.advance(.seconds(1)) }
        #expect(line.nodes[2].attachment(of: line.ids[0], channel: 70_000) == Data("pin".utf8))
        #expect(line.nodes[0].attachment(of: line.ids[0], channel: 70_000) == Data("pin".utf8))
        #expect(line.nodes[0].setAttachment(Data("pin".utf8), channel: 70_000, now: line.now).sends.isEmpty)
    }

    @Test("sealed data whose clock is over ten minutes off is dropped (§13.6)")
    func staleSealedData() throws {
        var line = Line.settled()
        let step = try #require(try line.nodes[0].sendSealed(.data(Self.data("old")), to: line.ids[1], now: line.now,
                                                             nowMilliseconds: line.nowMilliseconds - 601_000, random: &line.random))
        line.take(step, at: 0)
        #expect(line.received(at: 1).isEmpty)
    }

    /// Node `index` of a line (alice, bob, carol), with fixed keys.
    static func peer(_ index: Int) -> LocalPeer {
        let signing = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: UInt8(2 * index + 1), count: 32))
        let agreement = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: UInt8(2 * index + 2), count: 32))
        return try! LocalPeer(displayName: Line.names[index], identity: try! LocalIdentity(signingKey: signing, staticKey: agreement))
    }

    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func data(_ text: String) -> Meshchat_V1_Data {
        var data = Meshchat_V1_Data()
        data.payload = Data(text.utf8)
        return data
    }

    /// A sealed packet in transit from `origin` to `destination` (its body never opened on the way).
    static func transit(from origin: NodeID, to destination: NodeID, random: inout SplitMix64) -> RoutedPayload {
        var routed = RoutedPayload()
        routed.origin = Data(origin.bytes)
        routed.destination = Data(destination.bytes)
        routed.packetID = Data(PacketID(high: random.next(), low: random.next()).bytes)
        routed.hopLimit = 7
        routed.sealed = Data(count: 64)
        return routed
    }
}
