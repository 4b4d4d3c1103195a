import struct Foundation.Data
@testable import MeshRouting
import MeshWire
import Testing

/// Own adverts (origination, batching, refresh, restart) and received ones (sequence, expiry, bounds).
@Suite("Adverts")
struct AdvertTests {
    @Test("the defaults are the spec's")
    func defaults() {
        let configuration = RoutingConfiguration()
        #expect(configuration.hopLimit == 7)
        #expect(configuration.broadcastStrategy == .sourceTree)
        #expect(configuration.minAdvertInterval == .milliseconds(50))
        #expect(configuration.advertRefreshInterval == .seconds(30))
        #expect(configuration.advertLifetime == .seconds(120))
        #expect(configuration.duplicateCacheCapacity == 8192)
        #expect(configuration.duplicateLifetime == .seconds(300))
        #expect(configuration.maxNodes == 1024)
        #expect(configuration.maxNeighborsPerAdvert == 256)
        #expect(configuration.validationFailure == nil)
        var bad = configuration
        bad.hopLimit = 33
        #expect(bad.validationFailure != nil)
    }

    @Test("the first neighbour change goes out at once, signed, with hop limit 32")
    func firstChangeAtOnce() {
        var router = makeRouter()
        let actions = router.neighborUp(node(1), latencyMicros: 800, now: .zero)
        #expect(actions.sends.count == 1)
        let (packet, to) = actions.sends[0]
        #expect(to == node(1))
        #expect(packet.hopLimit == 32 && packet.hops == 0)
        guard case .advert(let advert) = packet.kind else { Issue.record("not an advert"); return }
        #expect(advert.origin == node(0) && advert.sequence == 1)
        #expect(advert.neighbors == [AdvertNeighbor(id: node(1), latencyMicros: 800)])
        #expect(advert.attachment == Data("sig 1".utf8))
        #expect(router.currentSequence == 1)
    }

    @Test("changes within minAdvertInterval batch into one advert at the end of the interval")
    func batching() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: at(ms: 0))
        // A new neighbour gets the current advert (sequence 1) at once; no new one is made yet.
        #expect(router.neighborUp(node(2), latencyMicros: 1000, now: at(ms: 10)).sentAdverts.map(\.sequence) == [1])
        #expect(router.neighborUp(node(3), latencyMicros: 1000, now: at(ms: 20)).sentAdverts.map(\.sequence) == [1])
        #expect(router.neighborDown(node(1), now: at(ms: 30)).sentAdverts.isEmpty)
        #expect(router.nextDeadline == at(ms: 50))
        #expect(router.timerFired(now: at(ms: 49)).sentAdverts.isEmpty)
        let adverts = router.timerFired(now: at(ms: 50)).sentAdverts
        #expect(adverts.count == 1)
        #expect(adverts.first?.sequence == 2)
        #expect(adverts.first?.neighbors.map(\.id) == [node(2), node(3)])
        // Quiet for longer than the interval: the next change goes out at once again.
        #expect(router.neighborUp(node(4), latencyMicros: 1000, now: at(ms: 200)).sentAdverts.map(\.sequence) == [3])
    }

    @Test("a changed attachment (a new display name) makes a new advert at once, or at the end of the batching interval")
    func attachmentChanged() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: at(ms: 0))
        // Within 50 ms of the last advert: it waits for the timer.
        #expect(router.attachmentChanged(now: at(ms: 10)).sentAdverts.isEmpty)
        #expect(router.nextDeadline == at(ms: 50))
        #expect(router.timerFired(now: at(ms: 50)).sentAdverts.map(\.sequence) == [2])
        // Later: at once, with the same neighbours and the next sequence.
        let adverts = router.attachmentChanged(now: at(ms: 500)).sentAdverts
        #expect(adverts.map(\.sequence) == [3])
        #expect(adverts.first?.neighbors.map(\.id) == [node(1)])
    }

    @Test("without changes the advert is refreshed every 30 s with the next sequence")
    func refresh() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        #expect(router.nextDeadline == at(ms: 30_000))
        #expect(router.timerFired(now: at(ms: 29_999)).sentAdverts.isEmpty)
        let adverts = router.timerFired(now: at(ms: 30_000)).sentAdverts
        #expect(adverts.map(\.sequence) == [2])
        #expect(adverts.first?.neighbors.map(\.id) == [node(1)])
        #expect(router.nextDeadline == at(ms: 60_000))
    }

    @Test("a newer sequence replaces the stored advert; the same or an older one is a duplicate and not forwarded")
    func sequences() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let first = router.received(advert(node(9), 5, [node(1)]), from: node(1), now: at(ms: 1))
        #expect(first.delivered.count == 1)
        #expect(first.sends.map(\.to) == [node(2)])
        #expect(first.sends.first?.packet.hopLimit == 31)
        #expect(first.sends.first?.packet.hops == 1)
        let again = router.received(advert(node(9), 5, [node(1)]), from: node(2), now: at(ms: 2))
        #expect(again.drops == [.duplicate] && again.sends.isEmpty && again.delivered.isEmpty)
        let older = router.received(advert(node(9), 4, [node(1), node(2)]), from: node(2), now: at(ms: 3))
        #expect(older.drops == [.duplicate] && older.sends.isEmpty)
        let newer = router.received(advert(node(9), 6, [node(2)]), from: node(2), now: at(ms: 4))
        #expect(newer.delivered.count == 1 && newer.sends.map(\.to) == [node(1)])
        #expect(router.database.first { $0.origin == node(9) }?.sequence == 6)
    }

    @Test("an advert of this node's earlier run makes it jump past that sequence and re-originate")
    func ownOriginJump() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        // Its own echo is a duplicate.
        let echo = router.received(advert(node(0), 1, [node(1)]), from: node(1), now: at(ms: 1))
        #expect(echo.drops == [.duplicate])
        let stale = router.received(advert(node(0), 1000, [node(7)]), from: node(1), now: at(ms: 100))
        #expect(stale.delivered.isEmpty)
        #expect(stale.sentAdverts.map(\.sequence) == [1001])
        #expect(stale.sentAdverts.first?.neighbors.map(\.id) == [node(1)])
        #expect(router.currentSequence == 1001)
        #expect(!router.database.contains { $0.origin == node(0) && $0.sequence == 1000 })
    }

    @Test("a received advert expires advertLifetime after its receipt")
    func expiry() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.received(advert(node(1), 1, [node(0), node(2)]), from: node(1), now: at(ms: 1000))
        _ = router.received(advert(node(2), 1, [node(1)]), from: node(1), now: at(ms: 1000))
        #expect(router.route(to: node(2))?.hops == 2)
        #expect(router.nextDeadline == at(ms: 30_000))
        _ = router.timerFired(now: at(ms: 30_000))
        _ = router.timerFired(now: at(ms: 60_000))
        _ = router.timerFired(now: at(ms: 90_000))
        #expect(router.nextDeadline == at(ms: 120_000))
        _ = router.timerFired(now: at(ms: 120_000))
        #expect(router.nextDeadline == at(ms: 121_000))
        #expect(router.timerFired(now: at(ms: 120_999)).changes.isEmpty)
        let actions = router.timerFired(now: at(ms: 121_000))
        #expect(actions.changes == [.unreachable(node(2))])
        #expect(router.route(to: node(1))?.hops == 1, "a live neighbour stays reachable")
        #expect(router.database.map(\.origin) == [node(0)])
    }

    @Test("adverts from new origins beyond maxNodes are dropped (all reachable, one neighbour); known origins still update")
    func maxNodes() {
        var configuration = RoutingConfiguration()
        configuration.maxNodes = 2
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        #expect(router.received(advert(node(1), 1, [node(0), node(2)]), from: node(1), now: .zero).drops.isEmpty)
        #expect(router.received(advert(node(2), 1, [node(1)]), from: node(1), now: .zero).drops.isEmpty)
        #expect(router.received(advert(node(3), 1, [node(1)]), from: node(1), now: .zero).drops == [.tooManyNodes])
        #expect(router.received(advert(node(2), 2, [node(1), node(3)]), from: node(1), now: .zero).drops.isEmpty)
        #expect(router.database.count == 3, "two received plus its own")
    }

    @Test("adverts listing more than maxNeighborsPerAdvert neighbours are dropped; own adverts list the fastest")
    func maxNeighbors() {
        var configuration = RoutingConfiguration()
        configuration.maxNeighborsPerAdvert = 3
        configuration.minAdvertInterval = .zero
        var router = makeRouter(configuration)
        for n: UInt8 in 1...4 { _ = router.neighborUp(node(n), latencyMicros: UInt32(5000 - Int(n) * 1000), now: .zero) }
        let long = advert(node(9), 1, [node(1), node(2), node(3), node(4)])
        #expect(router.received(long, from: node(1), now: .zero).drops == [.tooManyNeighbors])
        #expect(router.database.first?.neighbors.map(\.id) == [node(2), node(3), node(4)])
    }

    @Test("a new neighbour is sent this node's advert and every stored advert")
    func databaseSync() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.received(advert(node(1), 1, [node(0), node(5)]), from: node(1), now: at(ms: 1))
        _ = router.received(advert(node(5), 1, [node(1)], hopLimit: 31), from: node(1), now: at(ms: 1))
        // Within the interval: its current advert now, the new one later.
        let actions = router.neighborUp(node(2), latencyMicros: 1000, now: at(ms: 10))
        let toNew = actions.sends.filter { $0.to == node(2) }
        #expect(toNew.map(\.packet.origin) == [node(0), node(1), node(5)])
        #expect(toNew.last?.packet.hopLimit == 30)
        #expect(router.timerFired(now: at(ms: 50)).sentAdverts.first?.neighbors.map(\.id) == [node(1), node(2)])
    }

    @Test("latency changes re-advertise only beyond 25 % and 1 ms")
    func latencyChanges() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 10_000, now: .zero)
        #expect(router.neighborLatency(node(1), micros: 12_400, now: at(ms: 100)).sentAdverts.isEmpty)
        #expect(router.neighborLatency(node(1), micros: 7_600, now: at(ms: 200)).sentAdverts.isEmpty)
        let changed = router.neighborLatency(node(1), micros: 12_600, now: at(ms: 300)).sentAdverts
        #expect(changed.first?.neighbors.first?.latencyMicros == 12_600)
        // 25 % of a small value is under 1 ms: not worth an advert.
        var fast = makeRouter()
        _ = fast.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        #expect(fast.neighborLatency(node(1), micros: 1900, now: at(ms: 100)).sentAdverts.isEmpty)
        #expect(fast.neighborLatency(node(1), micros: 2100, now: at(ms: 200)).sentAdverts.count == 1)
    }
}
