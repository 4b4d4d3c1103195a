@testable import MeshRouting
import MeshWire
import Testing

/// The graph (bidirectional check) and path selection with its tie-breaks.
@Suite("Paths")
struct PathTests {
    @Test("a link counts only when both ends list each other")
    func bidirectional() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.received(advert(node(1), 1, [node(0), node(2)]), from: node(1), now: .zero)
        _ = router.received(advert(node(2), 1, [node(3)]), from: node(1), now: .zero)
        #expect(router.route(to: node(2)) == nil, "2 does not list 1")
        let actions = router.received(advert(node(2), 2, [node(1), node(3)]), from: node(1), now: .zero)
        #expect(router.route(to: node(2))?.path == [node(1), node(2)])
        #expect(router.route(to: node(3)) == nil, "3 has no advert")
        #expect(actions.changes == [.reachable(router.route(to: node(2))!)])
    }

    @Test("this node's own links count at once, before the neighbour's advert lists it")
    func ownLinksAtOnce() {
        var router = makeRouter()
        let actions = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        #expect(actions.changes == [.reachable(Route(destination: node(1), nextHop: node(1), hops: 1, path: [node(1)], hopLatenciesMicros: [1000]))])
    }

    /// 0 with neighbours 1, 2, 3; 1 and 2 both link to 4; 3 links to 5 which links to 4.
    static func diamond(latency1: UInt32, latency2: UInt32, first: Bool = true) -> Router {
        var router = makeRouter()
        for n: UInt8 in 1...3 { _ = router.neighborUp(node(n), latencyMicros: 1000, now: .zero) }
        var adverts = [
            advert(node(1), 1, [node(0), node(4)], latencies: [node(4): latency1]),
            advert(node(2), 1, [node(0), node(4)], latencies: [node(4): latency2]),
            advert(node(3), 1, [node(0), node(5)]),
            advert(node(5), 1, [node(3), node(4)]),
            advert(node(4), 1, [node(1), node(2), node(5)]),
        ]
        if !first { adverts.reverse() }
        for packet in adverts { _ = router.received(packet, from: node(3), now: .zero) }
        return router
    }

    @Test("equal hops and latency: the lower next hop wins")
    func tieBreakByNextHop() {
        let router = Self.diamond(latency1: 1000, latency2: 1000)
        #expect(router.route(to: node(4))?.nextHop == node(1))
        #expect(router.route(to: node(4))?.hopLatenciesMicros == [1000, 1000])
    }

    @Test("equal hops: the lower summed latency wins over the lower id")
    func latencyBeforeId() {
        let router = Self.diamond(latency1: 5000, latency2: 2000)
        #expect(router.route(to: node(4))?.nextHop == node(2))
        #expect(router.route(to: node(4))?.latencyMicros == 3000)
    }

    @Test("fewer hops win over lower latency")
    func hopsFirst() {
        var router = Self.diamond(latency1: 900_000, latency2: 900_000)
        #expect(router.route(to: node(4))?.hops == 2)
        // 5 gets a direct, fast link to 0's neighbour 3 only: the 3-hop path via 5 is not chosen.
        _ = router.received(advert(node(5), 2, [node(3), node(4)], latency: 1), from: node(3), now: .zero)
        #expect(router.route(to: node(4))?.path == [node(1), node(4)])
    }

    @Test("the choice does not depend on the order the adverts arrived in")
    func deterministic() {
        let a = Self.diamond(latency1: 1000, latency2: 1000, first: true)
        let b = Self.diamond(latency1: 1000, latency2: 1000, first: false)
        #expect(a.reachable == b.reachable)
        #expect(a.reachable.map(\.destination) == [node(1), node(2), node(3), node(4), node(5)])
    }

    @Test("one reachability action lists every change of an input")
    func oneActionPerInput() {
        var router = Self.diamond(latency1: 1000, latency2: 1000)
        let actions = router.neighborDown(node(3), now: at(ms: 1000))
        #expect(actions.reachabilityActions == 1)
        #expect(actions.changes.map(\.destination) == [node(3), node(5)])
        #expect(actions.changes.first == .changed(router.route(to: node(3))!))
        #expect(router.route(to: node(3))?.path == [node(1), node(4), node(5), node(3)])
        #expect(actions.changes.last == .changed(router.route(to: node(5))!))
        let down = router.neighborDown(node(1), now: at(ms: 2000))
        #expect(down.reachabilityActions == 1)
        #expect(down.changes.map(\.destination) == [node(1), node(3), node(4), node(5)])
        #expect(router.route(to: node(1))?.path == [node(2), node(4), node(1)])
    }
}
