@testable import MeshTransport
import NIOCore
import Testing

/// When a ``LinkWriter`` lets its loop poll: ``WriteBurst``.
@Suite("LinkWriter bursts")
struct WriteBurstTests {
    @Test("a burst pauses once it has run for 1 ms (not before), and the next write starts a new one")
    func pausesAfterItsTime() {
        var burst = WriteBurst()
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for i in 0..<999 {
            let paused = burst.wrote(100, now: start + .microseconds(Int64(i)))
            #expect(!paused, "write \(i) within the millisecond")
        }
        let atOneMillisecond = burst.wrote(100, now: start + .milliseconds(1))
        #expect(atOneMillisecond, "the write at 1 ms pauses")
        let afterThePause = burst.wrote(100, now: start + .milliseconds(5))
        #expect(!afterThePause, "a new burst starts after the pause")
        let oneMillisecondLater = burst.wrote(100, now: start + .milliseconds(6))
        #expect(oneMillisecondLater)
    }

    @Test("a burst pauses once it has written 4 MiB, however quickly")
    func pausesAfterItsBytes() {
        var burst = WriteBurst()
        let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for i in 0..<63 {
            let paused = burst.wrote(65_536, now: now)
            #expect(!paused, "write \(i) of 64 KiB")
        }
        let at4MiB = burst.wrote(65_536, now: now)
        #expect(at4MiB, "the 64th 64 KiB write reaches 4 MiB")
        let next = burst.wrote(65_536, now: now)
        #expect(!next, "a new burst starts after the pause")
    }

    @Test("writes that each end with their flush (a task that sends and waits) never pause, however long they go on")
    func pingPongNeverPauses() {
        var burst = WriteBurst()
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var pauses = 0
        for _ in 0..<10_000 {
            if burst.wrote(64, now: now) { pauses += 1 }
            burst.ended()
            now = now + .microseconds(100)
        }
        #expect(pauses == 0)
    }
}
