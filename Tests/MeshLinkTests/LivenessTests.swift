@testable import MeshLink
import Testing

/// Keepalive and dead-peer detection with injected time (PROTOCOL.md §7).
///
/// The shell calls `tick(now:)` every 0.25 s; the tests do the same with ``Clock``, so that a
/// gap between ticks is never mistaken for a stall of this node.
@Suite("Liveness")
struct LivenessTests {
    /// Seconds as monotonic nanoseconds.
    static func s(_ seconds: Double) -> UInt64 { UInt64((seconds * 1e9).rounded()) }

    /// A liveness state driven by ticks every 0.25 s, recording what each tick asked for.
    struct Clock {
        var liveness: Liveness
        var now: UInt64
        var actions: [(at: UInt64, action: Liveness.Action)] = []

        init(start: UInt64 = 0) {
            liveness = Liveness(now: start)
            now = start
        }

        /// Ticks every 0.25 s up to `end`, then once at `end` itself; returns the last action.
        @discardableResult
        mutating func advance(to end: UInt64) -> Liveness.Action {
            var last = Liveness.Action.none
            while now < end {
                now = min(now + Liveness.checkInterval, end)
                last = liveness.tick(now: now)
                actions.append((now, last))
            }
            return last
        }

        /// The times at which the peer was declared dead.
        var deaths: [UInt64] { actions.filter { if case .peerDead = $0.action { true } else { false } }.map(\.at) }
        /// The nonces of the pings asked for, in order.
        var pings: [UInt64] { actions.compactMap { if case .sendPing(let nonce) = $0.action { nonce } else { nil } } }
    }

    @Test("the defaults are §7's: ping after 1 s, dead after 3 s, checks every 0.25 s")
    func defaults() {
        let liveness = Liveness(now: 0)
        #expect(liveness.pingInterval == Self.s(1))
        #expect(liveness.deadAfter == Self.s(3))
        #expect(Liveness.checkInterval == Self.s(0.25))
    }

    @Test("a ping is due after 1 s without sending, not before")
    func pingAfterIdle() {
        var clock = Clock(start: Self.s(100))
        #expect(clock.advance(to: Self.s(101) - 1) == .none)
        #expect(clock.pings.isEmpty)
        #expect(clock.advance(to: Self.s(101)) == .sendPing(nonce: 1))
    }

    @Test("sending resets the idle clock; each ping gets the next nonce")
    func nonces() {
        var clock = Clock()
        clock.liveness.frameSent(now: Self.s(0.5))
        #expect(clock.advance(to: Self.s(1.25)) == .none, "sent at 0.5 s, so idle for only 0.75 s")
        #expect(clock.pings.isEmpty)
        clock.liveness.frameReceived(now: Self.s(1.25))
        #expect(clock.advance(to: Self.s(1.5)) == .sendPing(nonce: 1))
        #expect(clock.advance(to: Self.s(1.75)) == .none, "the ping counts as sending")
        clock.liveness.frameReceived(now: Self.s(2.4))
        #expect(clock.advance(to: Self.s(2.5)) == .sendPing(nonce: 2))
        clock.liveness.frameReceived(now: Self.s(3.4))
        #expect(clock.advance(to: Self.s(3.5)) == .sendPing(nonce: 3))
        #expect(clock.pings == [1, 2, 3])
    }

    @Test("a pong returns the round-trip time of its ping; unknown or repeated nonces return nil")
    func pong() {
        var clock = Clock()
        #expect(clock.liveness.roundTrip == nil)
        #expect(clock.advance(to: Self.s(1)) == .sendPing(nonce: 1))
        #expect(clock.liveness.pongReceived(nonce: 99, now: Self.s(1.01)) == nil)
        #expect(clock.liveness.pongReceived(nonce: 1, now: Self.s(1.042)) == Self.s(0.042))
        #expect(clock.liveness.roundTrip == Self.s(0.042))
        #expect(clock.liveness.pongReceived(nonce: 1, now: Self.s(1.5)) == nil, "answered already")
        #expect(clock.liveness.roundTrip == Self.s(0.042))
    }

    @Test("the peer is dead after 3 s without receiving, not at 2.99 s")
    func deadAfterSilence() {
        var clock = Clock()
        clock.advance(to: Self.s(2.99))
        #expect(clock.deaths.isEmpty)
        #expect(clock.advance(to: Self.s(3)) == .peerDead(silence: Self.s(3)))
        #expect(clock.deaths == [Self.s(3)])
    }

    @Test("sending does not keep a silent peer alive")
    func sendingIsNotReceiving() {
        var clock = Clock()
        for tenth in 1...29 {
            clock.liveness.frameSent(now: Self.s(Double(tenth) / 10))
            clock.advance(to: Self.s(Double(tenth) / 10))
        }
        #expect(clock.deaths.isEmpty)
        #expect(clock.advance(to: Self.s(3)) == .peerDead(silence: Self.s(3)))
    }

    @Test("a received frame resets the silence clock")
    func receivingResets() {
        var clock = Clock()
        clock.advance(to: Self.s(2.5))
        clock.liveness.frameReceived(now: Self.s(2.5))
        clock.advance(to: Self.s(5.49))
        #expect(clock.deaths.isEmpty)
        #expect(clock.advance(to: Self.s(5.5)) == .peerDead(silence: Self.s(3)))

        // A late report of an older frame does not move the clock back.
        var other = Clock()
        other.liveness.frameReceived(now: Self.s(2.5))
        other.liveness.frameReceived(now: Self.s(1))
        other.advance(to: Self.s(5))
        #expect(other.deaths.isEmpty)
    }

    @Test("time while reading is paused does not count: pause at 1 s, resume at 10 s")
    func pausedReading() {
        var clock = Clock()
        clock.advance(to: Self.s(1))
        clock.liveness.readingPaused(now: Self.s(1))
        clock.advance(to: Self.s(10))
        #expect(clock.deaths.isEmpty, "paused: never dead")
        clock.liveness.readingResumed(now: Self.s(10))
        clock.advance(to: Self.s(11))
        #expect(clock.deaths.isEmpty)
        // 1 s before the pause and 2 s after it make 3 s of silence while reading.
        clock.advance(to: Self.s(11.99))
        #expect(clock.deaths.isEmpty)
        #expect(clock.advance(to: Self.s(12)) == .peerDead(silence: Self.s(3)))
        #expect(clock.advance(to: Self.s(13)) == .peerDead(silence: Self.s(4)))
    }

    @Test("pausing twice keeps the first pause time; resuming without a pause changes nothing")
    func pauseIdempotent() {
        var clock = Clock()
        clock.advance(to: Self.s(0.5))
        clock.liveness.readingResumed(now: Self.s(0.5))
        clock.advance(to: Self.s(1))
        clock.liveness.readingPaused(now: Self.s(1))
        clock.advance(to: Self.s(4))
        clock.liveness.readingPaused(now: Self.s(4))
        clock.advance(to: Self.s(10))
        clock.liveness.readingResumed(now: Self.s(10))
        clock.advance(to: Self.s(11.99))
        #expect(clock.deaths.isEmpty)
        #expect(clock.advance(to: Self.s(12)) == .peerDead(silence: Self.s(3)))
    }

    @Test("a gap between ticks longer than the stall threshold (this node did not run) is not the peer's silence")
    func localStall() {
        var liveness = Liveness(now: 0)
        // No tick for 5 s: the process was stopped, so it could not have read anything.
        #expect(!isDead(liveness.tick(now: Self.s(5))))
        // Regular ticks from there: 0.25 s of the gap count, so the peer is dead 2.75 s later.
        var time = Self.s(5)
        var firstDeath: UInt64?
        while firstDeath == nil, time < Self.s(20) {
            time += Liveness.checkInterval
            if isDead(liveness.tick(now: time)) { firstDeath = time }
        }
        #expect(firstDeath == Self.s(7.75))

        // A gap of exactly the threshold is ordinary silence.
        var regular = Liveness(now: 0)
        #expect(Liveness.stallThreshold == Self.s(1))
        #expect(!isDead(regular.tick(now: Self.s(1))))
        #expect(!isDead(regular.tick(now: Self.s(2))))
        #expect(regular.tick(now: Self.s(3)) == .peerDead(silence: Self.s(3)))
    }

    func isDead(_ action: Liveness.Action) -> Bool {
        if case .peerDead = action { return true }
        return false
    }
}
