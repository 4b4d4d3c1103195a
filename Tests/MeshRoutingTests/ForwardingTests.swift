import struct Foundation.Data
@testable import MeshRouting
import MeshWire
import Testing

/// Unicast and broadcast forwarding: hop limits, duplicates, missing routes, source trees.
@Suite("Forwarding")
struct ForwardingTests {
    /// 0 – 1 – 2 – 3 as seen from 0 (all adverts received).
    static func line(_ configuration: RoutingConfiguration = .init()) -> Router {
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        for packet in [
            advert(node(1), 1, [node(0), node(2)]),
            advert(node(2), 1, [node(1), node(3)]),
            advert(node(3), 1, [node(2)]),
        ] { _ = router.received(packet, from: node(1), now: .zero) }
        return router
    }

    @Test("a relay forwards with one hop limit less and one hop more; hop limit 1 is delivered but not forwarded")
    func hopLimit() {
        var configuration = RoutingConfiguration()
        configuration.broadcastStrategy = .flood
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let packet = RoutedPacket(origin: node(9), packetID: pid(1), hopLimit: 3, hops: 4, kind: .broadcast)
        let actions = router.received(packet, from: node(1), now: .zero)
        #expect(actions.delivered == [packet])
        #expect(actions.sends.count == 1)
        #expect(actions.sends.first?.packet.hopLimit == 2 && actions.sends.first?.packet.hops == 5)
        let last = RoutedPacket(origin: node(9), packetID: pid(2), hopLimit: 1, kind: .broadcast)
        let lastActions = router.received(last, from: node(1), now: .zero)
        #expect(lastActions.delivered == [last] && lastActions.sends.isEmpty && lastActions.drops.isEmpty)
        let inflated = RoutedPacket(origin: node(9), packetID: pid(3), hopLimit: 200, kind: .broadcast)
        #expect(router.received(inflated, from: node(1), now: .zero).sends.first?.packet.hopLimit == 31)
    }

    @Test("§13.1: a received hop limit of 0 is treated as 1: delivered when it is for this node, never forwarded")
    func hopLimitZero() {
        var configuration = RoutingConfiguration()
        configuration.broadcastStrategy = .flood
        var router = Self.line(configuration)
        _ = router.neighborUp(node(4), latencyMicros: 1000, now: .zero)
        let broadcast = RoutedPacket(origin: node(9), packetID: pid(1), hopLimit: 0, kind: .broadcast)
        let broadcastActions = router.received(broadcast, from: node(1), now: .zero)
        #expect(broadcastActions.delivered == [broadcast] && broadcastActions.sends.isEmpty)
        let mine = RoutedPacket(origin: node(3), packetID: pid(2), hopLimit: 0, kind: .unicast(destination: node(0)))
        #expect(router.received(mine, from: node(1), now: .zero).delivered == [mine])
        let passing = RoutedPacket(origin: node(4), packetID: pid(3), hopLimit: 0, kind: .unicast(destination: node(3)))
        let passingActions = router.received(passing, from: node(4), now: .zero)
        #expect(passingActions.drops == [.hopLimitReached] && passingActions.sends.isEmpty)
    }

    @Test("a relay drops a unicast whose hop limit is used up")
    func unicastHopLimit() {
        var router = Self.line()
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 1, kind: .unicast(destination: node(3)))
        #expect(router.received(packet, from: node(1), now: .zero).drops == [.hopLimitReached])
    }

    @Test("own broadcasts and unicasts carry the configured hop limit")
    func originHopLimit() {
        var router = Self.line()
        let broadcast = router.broadcast(payload: Data([1]), packetID: pid(1), now: .zero)
        #expect(broadcast.sends.map(\.packet.hopLimit) == [7])
        guard case .sent(let actions) = router.unicast(payload: Data([2]), to: node(3), packetID: pid(2), now: .zero) else {
            Issue.record("no route")
            return
        }
        #expect(actions.sends.first?.packet.hopLimit == 7)
        #expect(actions.sends.first?.to == node(1))
    }

    @Test("unicast to an unknown node or one beyond the hop limit is noRoute at the origin")
    func noRouteAtOrigin() {
        var configuration = RoutingConfiguration()
        configuration.hopLimit = 2
        var router = Self.line(configuration)
        #expect(router.unicast(payload: Data(), to: node(7), packetID: pid(1), now: .zero) == .noRoute)
        #expect(router.unicast(payload: Data(), to: node(3), packetID: pid(2), now: .zero) == .noRoute)
        #expect(router.unicast(payload: Data(), to: node(2), packetID: pid(3), now: .zero) != .noRoute)
    }

    @Test("a relay without a route drops a unicast with noRoute")
    func noRouteAtRelay() {
        var router = Self.line()
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 5, kind: .unicast(destination: node(8)))
        #expect(router.received(packet, from: node(1), now: .zero).drops == [.noRoute])
    }

    @Test("a unicast seen twice is dropped as a duplicate; one to this node is delivered once")
    func unicastDuplicates() {
        var router = Self.line()
        _ = router.neighborUp(node(4), latencyMicros: 1000, now: .zero)
        let relay = RoutedPacket(origin: node(4), packetID: pid(1), hopLimit: 5, kind: .unicast(destination: node(3)))
        #expect(router.received(relay, from: node(4), now: .zero).sends.map(\.to) == [node(1)])
        #expect(router.received(relay, from: node(4), now: .zero).drops == [.duplicate])
        let mine = RoutedPacket(origin: node(4), packetID: pid(2), hopLimit: 5, kind: .unicast(destination: node(0)))
        #expect(router.received(mine, from: node(4), now: .zero).delivered == [mine])
        #expect(router.received(mine, from: node(1), now: .zero).drops == [.duplicate])
    }

    @Test("a unicast whose next hop is the neighbour it came from is dropped as a loop")
    func loop() {
        var router = Self.line()
        let packet = RoutedPacket(origin: node(2), packetID: pid(1), hopLimit: 5, kind: .unicast(destination: node(3)))
        #expect(router.received(packet, from: node(1), now: .zero).drops == [.routingLoop])
    }

    @Test("the duplicate cache holds at most duplicateCacheCapacity ids and forgets the oldest first")
    func duplicateCacheBound() {
        var configuration = RoutingConfiguration()
        configuration.duplicateCacheCapacity = 2
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        func receive(_ n: UInt64) -> [RouterAction] {
            router.received(RoutedPacket(origin: node(9), packetID: pid(n), hopLimit: 3, kind: .broadcast), from: node(1), now: .zero)
        }
        for n: UInt64 in 1...3 { #expect(receive(n).delivered.count == 1) }
        #expect(router.duplicates.count == 2)
        #expect(receive(3).drops == [.duplicate])
        #expect(receive(1).delivered.count == 1, "1 was evicted")
        #expect(receive(2).delivered.count == 1, "2 was evicted by 1")
    }

    @Test("a packet id is forgotten duplicateLifetime after it was first seen")
    func duplicateExpiry() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        let packet = RoutedPacket(origin: node(9), packetID: pid(1), hopLimit: 3, kind: .broadcast)
        #expect(router.received(packet, from: node(1), now: .zero).delivered.count == 1)
        #expect(router.received(packet, from: node(1), now: at(ms: 299_999)).drops == [.duplicate])
        #expect(router.received(packet, from: node(1), now: at(ms: 300_000)).delivered.count == 1)
    }

    /// 0 with neighbours 1, 2, 3 (1 ms) and 4 (9 ms); 1–2 and 2–4 are linked too (1 ms); all adverts known.
    static func star(strategy: BroadcastStrategy) -> Router {
        var configuration = RoutingConfiguration()
        configuration.broadcastStrategy = strategy
        var router = makeRouter(configuration)
        for n: UInt8 in 1...3 { _ = router.neighborUp(node(n), latencyMicros: 1000, now: .zero) }
        _ = router.neighborUp(node(4), latencyMicros: 9000, now: .zero)
        for packet in [
            advert(node(1), 1, [node(0), node(2)]),
            advert(node(2), 1, [node(0), node(1), node(4)]),
            advert(node(3), 1, [node(0)]),
            advert(node(4), 1, [node(0), node(2)]),
        ] { _ = router.received(packet, from: node(1), now: .zero) }
        return router
    }

    @Test("source tree: a relay forwards only to the neighbours it is the tree parent of")
    func sourceTree() {
        var router = Self.star(strategy: .sourceTree)
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 5, kind: .broadcast)
        // In 1's tree: 0 and 2 are children of 1, 3 of 0, and 4 of 2 (2 ms beats 10 ms).
        #expect(router.received(packet, from: node(1), now: at(ms: 1000)).targets(of: pid(1)) == [node(3)])
    }

    @Test("source tree: a copy from a node that is not the tree parent falls back to flooding")
    func sourceTreeDisagreement() {
        var router = Self.star(strategy: .sourceTree)
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 5, hops: 1, kind: .broadcast)
        #expect(router.received(packet, from: node(2), now: at(ms: 1000)).targets(of: pid(1)) == [node(3), node(4)])
    }

    @Test("source tree: within broadcastSettleTime of a topology change relays flood")
    func settleTime() {
        var router = Self.star(strategy: .sourceTree)
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 5, kind: .broadcast)
        #expect(router.received(packet, from: node(1), now: at(ms: 999)).targets(of: pid(1)) == [node(2), node(3), node(4)])
    }

    @Test("flooding: every neighbour but the sender and the origin")
    func flooding() {
        var router = Self.star(strategy: .flood)
        let packet = RoutedPacket(origin: node(1), packetID: pid(1), hopLimit: 5, kind: .broadcast)
        #expect(router.received(packet, from: node(1), now: at(ms: 5000)).targets(of: pid(1)) == [node(2), node(3), node(4)])
    }
}
