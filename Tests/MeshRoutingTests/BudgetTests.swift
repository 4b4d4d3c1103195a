@testable import MeshRouting
import MeshWire
import Testing

/// Per-neighbour budgets (PROTOCOL.md §13.11) and the full database's evictions.
@Suite("Neighbour budgets")
struct BudgetTests {
    @Test("a token bucket gives its burst at once, then its rate, and never more than its burst")
    func tokenBucket() {
        var bucket = TokenBucket(burst: 3, perSecond: 2, now: .zero)
        func takeFive(at now: RouterInstant) -> [Bool] { (0..<5).map { _ in bucket.take(now: now) } }
        let first = takeFive(at: .zero)
        #expect(first == [true, true, true, false, false])
        #expect(bucket.take(now: at(ms: 499)) == false)
        #expect(bucket.take(now: at(ms: 500)) == true)
        // A long pause refills only up to the burst.
        let refilled = takeFive(at: at(ms: 60_000))
        #expect(refilled == [true, true, true, false, false])
        // A clock going backwards adds nothing.
        #expect(bucket.take(now: .zero) == false)
    }

    @Test("an empty bucket says how long until its next token, and nothing while it has one; waiting that long is enough")
    func tokenBucketWait() {
        var bucket = TokenBucket(burst: 2, perSecond: 4, now: .zero)
        #expect(bucket.wait(now: .zero) == nil)
        _ = bucket.take(now: .zero)
        _ = bucket.take(now: .zero)
        let wait = bucket.wait(now: .zero)
        #expect(wait.map { $0 >= .milliseconds(250) && $0 <= .milliseconds(251) } == true, "\(String(describing: wait))")
        #expect(bucket.take(now: at(ms: 249)) == false)
        #expect(bucket.wait(now: at(ms: 251)) == nil)
        #expect(bucket.take(now: at(ms: 251)) == true)
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        for _ in 0..<NeighborWork.broadcast.budget.burst { _ = router.takeBudget(.broadcast, from: node(1), now: .zero) }
        #expect(router.budgetWait(.broadcast, from: node(1), now: .zero) != nil, "a neighbour past its broadcast burst waits")
        #expect(router.budgetWait(.broadcast, from: node(2), now: .zero) == nil, "another neighbour does not")
    }

    @Test("a bucket says how long until several units are due, and a wait above its burst counts as the burst")
    func tokenBucketWaitForUnits() {
        var bucket = TokenBucket(burst: 8, perSecond: 4, now: .zero)
        #expect(bucket.wait(units: 8, now: .zero) == nil)
        let tookSix = bucket.take(6, now: .zero)
        #expect(tookSix)
        #expect(bucket.wait(units: 2, now: .zero) == nil)
        let wait = bucket.wait(units: 5, now: .zero)
        #expect(wait.map { $0 >= .milliseconds(750) && $0 <= .milliseconds(751) } == true, "3 units at 4 a second: \(String(describing: wait))")
        let early = bucket.take(5, now: at(ms: 749))
        #expect(!early)
        #expect(bucket.wait(units: 5, now: at(ms: 751)) == nil)
        let onTime = bucket.take(5, now: at(ms: 751))
        #expect(onTime)
        #expect(bucket.wait(units: 100, now: at(ms: 60_000)) == nil, "more than the burst waits for a full bucket, not forever")
    }

    @Test("several kinds of work for one packet are taken all or none; units count against the burst")
    func takeAll() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        // Another neighbour opening too: the work-conserving derivation budget binds (§13.11).
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let taken1 = router.takeBudget(.derivation, units: 1, from: node(2), now: .zero)
        #expect(taken1)
        let burst = NeighborWork.opening.budget.burst
        for _ in 0..<(burst - 1) { _ = router.takeBudget(.opening, from: node(1), now: .zero) }
        let derivation = NeighborWork.derivation.budget.burst
        let first = router.takeBudget(all: [(.opening, 1), (.derivation, 100)], from: node(1), now: .zero)
        #expect(first == nil)
        // The opening bucket is empty now: nothing of the next packet is taken, its derivation included.
        let second = router.takeBudget(all: [(.derivation, 10), (.opening, 1)], from: node(1), now: .zero)
        #expect(second == .opening)
        #expect(router.budgets.dropped[.opening] == 1)
        let rest = router.takeBudget(.derivation, units: derivation - 100, from: node(1), now: .zero)
        #expect(rest, "the failed packet took no derivation")
        let over = router.takeBudget(.derivation, units: 1, from: node(1), now: .zero)
        #expect(!over)
        var bucket = TokenBucket(burst: 10, perSecond: 10, now: .zero)
        let tooMany = bucket.take(11, now: .zero), all = bucket.take(10, now: .zero)
        #expect(!tooMany, "more than the burst is never granted")
        #expect(all)
    }

    @Test("a work-conserving budget lets a lone neighbour past its bucket; once another neighbour is charged, each has its fixed budget: the newcomer its full burst, the borrower an empty bucket")
    func workConserving() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let budget = NeighborWork.sessionRelaying.budget
        for _ in 0..<(budget.burst / 5 + 100) {
            let taken2 = router.takeBudget(all: [(.sessionRelaying, 5)], from: node(1), now: .zero)
            #expect(taken2 == nil, "alone: never over budget")
        }
        #expect(router.budgetWait(.sessionRelaying, units: 5, from: node(1), now: .zero) == nil, "alone: the reader never waits")
        #expect(router.budgets.borrowed[.sessionRelaying] == 100 && router.budgets.dropped[.sessionRelaying] == nil)
        // The relaying budget (prekey messages: public-key work at the next hop) stays fixed.
        #expect(!NeighborWork.relaying.isWorkConserving && !NeighborWork.opening.isWorkConserving)
        let t = RouterInstant.zero + .microseconds(100)  // 0.8 tokens refilled
        let taken3 = router.takeBudget(all: [(.sessionRelaying, budget.burst)], from: node(2), now: t)
        #expect(taken3 == nil, "the newcomer's full burst")
        let wait = router.budgetWait(.sessionRelaying, units: 5, from: node(1), now: t)
        #expect(wait.map { $0 > .zero } == true, "the borrower waits now: its bucket was emptied")
        let taken4 = router.takeBudget(all: [(.sessionRelaying, 5)], from: node(1), now: t)
        #expect(taken4 == .sessionRelaying)
        // After the other neighbour's last charge plus the window, the lone one borrows again.
        let later = t + NeighborBudgets.contentionWindow
        #expect(router.budgetWait(.sessionRelaying, units: 5, from: node(1), now: later) == nil)
        let taken5 = router.takeBudget(all: [(.sessionRelaying, budget.burst + 5)], from: node(1), now: later)
        #expect(taken5 == nil)
        // A link that went down is no competitor.
        _ = router.takeBudget(.derivation, units: 1, from: node(2), now: later)
        _ = router.neighborDown(node(2), now: later)
        let taken6 = router.takeBudget(all: [(.derivation, NeighborWork.derivation.budget.burst * 2)], from: node(1), now: later)
        #expect(taken6 == nil)
    }

    @Test("a lone neighbour whose sealed packet failed to open gets its fixed derivation budget for the contention window, then borrows again; other neighbours and kinds are untouched")
    func failedWorkEndsBorrowing() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let burst = NeighborWork.derivation.budget.burst
        #expect(router.takeBudget(all: [(.derivation, burst)], from: node(1), now: .zero) == nil)
        #expect(router.takeBudget(all: [(.derivation, 257)], from: node(1), now: .zero) == nil, "alone: it borrows")
        router.noteFailedWork(.derivation, from: node(1), now: .zero)
        let t = RouterInstant.zero + .microseconds(100)
        #expect(router.budgetWait(.derivation, units: 257, from: node(1), now: t) != nil, "after a failure its reader waits")
        #expect(router.takeBudget(all: [(.derivation, 257)], from: node(1), now: t) == .derivation, "after a failure: its fixed budget")
        // Session relaying (the relay's own work, which cannot fail here) still borrows.
        #expect(router.takeBudget(all: [(.sessionRelaying, NeighborWork.sessionRelaying.budget.burst * 2)], from: node(1), now: t) == nil)
        // Another neighbour's failure does not touch node 1's later borrowing, nor does node 1's touch node 2.
        #expect(router.takeBudget(all: [(.derivation, burst * 2)], from: node(2), now: t + NeighborBudgets.contentionWindow) == nil)
        let later = t + NeighborBudgets.contentionWindow * 2 + .microseconds(1)
        #expect(router.takeBudget(all: [(.derivation, burst * 2)], from: node(1), now: later) == nil, "once the window passed it borrows again")
        // A neighbour that is not live is not noted; a link that went down forgets the failure.
        router.noteFailedWork(.derivation, from: node(1), now: later)
        _ = router.neighborDown(node(1), now: later)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: later)
        #expect(router.takeBudget(all: [(.derivation, burst * 2)], from: node(1), now: later) == nil, "a reconnect starts afresh")
    }

    @Test("with workConservingBudgets off every budget is a fixed rate, also for a lone neighbour")
    func fixedBudgets() {
        var configuration = RoutingConfiguration()
        configuration.workConservingBudgets = false
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        let burst = NeighborWork.sessionRelaying.budget.burst
        let taken7 = router.takeBudget(all: [(.sessionRelaying, burst)], from: node(1), now: .zero)
        #expect(taken7 == nil)
        #expect(router.budgetWait(.sessionRelaying, units: 5, from: node(1), now: .zero) != nil)
        let taken8 = router.takeBudget(all: [(.sessionRelaying, 5)], from: node(1), now: .zero)
        #expect(taken8 == .sessionRelaying)
    }

    @Test("each neighbour has its own budget: one neighbour's flood leaves another's untouched")
    func perNeighbour() {
        var router = makeRouter()
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        let burst = NeighborWork.opening.budget.burst
        func take(_ work: NeighborWork, _ n: UInt8) -> Bool { router.takeBudget(work, from: node(n), now: .zero) }
        let first = (0..<burst).map { _ in take(.opening, 1) }
        #expect(first.allSatisfy { $0 })
        let over = take(.opening, 1), other = take(.opening, 2), otherWork = take(.verification, 1)
        #expect(!over)
        #expect(other)
        #expect(otherWork, "other kinds of work keep their budget")
        #expect(router.budgets.dropped[.opening] == 1)
        // A reconnect starts afresh.
        _ = router.neighborDown(node(1), now: .zero)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        let afresh = take(.opening, 1)
        #expect(afresh)
    }

    @Test("adverts introducing new origins beyond a neighbour's budget are dropped; known origins still update")
    func newOriginBudget() {
        var configuration = RoutingConfiguration()
        configuration.maxNodes = 4096
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        let burst = NeighborWork.newOrigin.budget.burst
        var drops: [DropReason] = []
        for n in 0..<(burst + 3) {
            drops += router.received(advert(invented(n), 1, [node(1)]), from: node(1), now: .zero).drops
        }
        #expect(drops == Array(repeating: .overBudget(.newOrigin), count: 3))
        #expect(router.received(advert(invented(0), 2, [node(1)]), from: node(1), now: .zero).drops.isEmpty)
        // The budget refills at its rate.
        let later = at(ms: Int64(1000 / NeighborWork.newOrigin.budget.perSecond) + 1)
        #expect(router.received(advert(invented(burst), 1, [node(1)]), from: node(1), now: later).drops.isEmpty)
    }

    @Test("a full database makes room for a new origin by forgetting an unreachable one")
    func evictsUnreachable() {
        var configuration = RoutingConfiguration()
        configuration.maxNodes = 2
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.received(advert(node(1), 1, [node(0), node(2)]), from: node(1), now: .zero)
        // Node 9 lists node 1, but node 1 does not list it: unreachable.
        _ = router.received(advert(node(9), 1, [node(1)]), from: node(1), now: .zero)
        #expect(router.received(advert(node(2), 1, [node(1)]), from: node(1), now: .zero).drops.isEmpty)
        #expect(router.database.map(\.origin) == [node(0), node(1), node(2)])
        #expect(router.route(to: node(2))?.hops == 2)
    }

    @Test("one neighbour filling the database with reachable origins cannot lock out another's")
    func fairShare() {
        var configuration = RoutingConfiguration()
        configuration.maxNodes = 4
        var router = makeRouter(configuration)
        _ = router.neighborUp(node(1), latencyMicros: 1000, now: .zero)
        _ = router.neighborUp(node(2), latencyMicros: 1000, now: .zero)
        // Node 1 (hostile) invents a chain of reachable nodes 10…13 and fills the database.
        _ = router.received(advert(node(1), 1, [node(0), node(10)]), from: node(1), now: .zero)
        _ = router.received(advert(node(10), 1, [node(1), node(11)]), from: node(1), now: .zero)
        _ = router.received(advert(node(11), 1, [node(10), node(12)]), from: node(1), now: .zero)
        _ = router.received(advert(node(12), 1, [node(11)]), from: node(1), now: .zero)
        #expect(router.received(advert(node(13), 1, [node(12)]), from: node(1), now: .zero).drops == [.tooManyNodes])
        // Node 2 (honest) still brings its own advert in, evicting one of node 1's origins.
        #expect(router.received(advert(node(2), 1, [node(0)]), from: node(2), now: .zero).drops.isEmpty)
        #expect(router.route(to: node(2))?.hops == 1)
        #expect(router.database.count == 5, "four received plus its own")
    }

    /// Node ids beyond `node(_:)`'s 256: two bytes of `n`.
    private func invented(_ n: Int) -> NodeID {
        try! NodeID(bytes: [0xee, UInt8(n >> 8), UInt8(n & 0xff)] + Array(repeating: 0, count: 13))
    }
}
