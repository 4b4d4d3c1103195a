import MeshSession
import MeshTestSupport
import Testing

@Suite("RedialBackoff")
struct RedialBackoffTests {
    private func delays(_ backoff: RedialBackoff, samples: Int = 200, seed: UInt64 = 7) -> [Duration] {
        var generator = SplitMix64(seed: seed)
        return (0..<samples).map { _ in backoff.delay(using: &generator) }
    }

    @Test("the first wait is about a second, each failure doubles it, 30 s caps it, jitter 75–100 %")
    func doublesToCap() {
        var backoff = RedialBackoff()
        var expectedBase = 1_000
        for failure in 0..<12 {
            let waits = delays(backoff)
            #expect(waits.allSatisfy { $0 >= .milliseconds(expectedBase * 3 / 4) && $0 <= .milliseconds(expectedBase) },
                    "failure \(failure): \(waits.min()!)…\(waits.max()!), base \(expectedBase) ms")
            #expect(Set(waits).count > 10, "jittered")
            backoff.dialFailed()
            if failure > 0 { expectedBase = min(expectedBase * 2, 30_000) }
        }
        #expect(delays(backoff).allSatisfy { $0 <= RedialBackoff.cap })
    }

    @Test("a link that lasted resets the waits; one that dropped at once counts as a failure")
    func lastingLinkResets() {
        var backoff = RedialBackoff()
        for _ in 0..<6 { backoff.dialFailed() }
        backoff.linkEnded(lasted: .seconds(2))
        #expect(backoff.failures == 7)
        backoff.linkEnded(lasted: .seconds(5))
        #expect(backoff.failures == 0)
        #expect(delays(backoff).allSatisfy { $0 <= .seconds(1) })
    }

    @Test("the same seed gives the same waits")
    func seeded() {
        var backoff = RedialBackoff()
        backoff.dialFailed()
        backoff.dialFailed()
        #expect(delays(backoff, seed: 42) == delays(backoff, seed: 42))
    }
}
