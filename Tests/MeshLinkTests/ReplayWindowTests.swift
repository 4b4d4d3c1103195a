@testable import MeshLink
import MeshTestSupport
import Testing

/// The datagram replay window (PROTOCOL.md §8.4).
@Suite("ReplayWindow")
struct ReplayWindowTests {
    /// A reference box, so that `#expect(window.record(c))` can call the mutating method.
    final class Window {
        var value = ReplayWindow()
        var size: Int { value.size }
        func wouldAccept(_ counter: UInt64) -> Bool { value.wouldAccept(counter) }
        func record(_ counter: UInt64) -> Bool { value.record(counter) }
    }

    @Test("fresh counters are accepted, in order and with gaps")
    func freshCounters() {
        let window = Window()
        #expect(window.size == 1024)
        for counter: UInt64 in [0, 1, 2, 5, 100, 101, 5000] {
            #expect(window.wouldAccept(counter))
            #expect(window.record(counter))
        }
    }

    @Test("the first counter may be anything, including large values")
    func firstCounter() {
        let window = Window()
        #expect(window.record(UInt64.max - 1))
        #expect(!window.record(UInt64.max - 1))
        #expect(window.record(UInt64.max - 1024))
        #expect(!window.wouldAccept(UInt64.max - 1025))
    }

    @Test("counters at the very top of the range advance the window without overflowing")
    func topOfRange() {
        let window = Window()
        #expect(window.record(UInt64.max - 5))
        #expect(window.record(UInt64.max))
        #expect(!window.record(UInt64.max))
        #expect(window.record(UInt64.max - 1))
        #expect(!window.record(UInt64.max - 5))
        #expect(window.record(UInt64.max - 1023))
        #expect(!window.wouldAccept(UInt64.max - 1024))
    }

    @Test("a duplicate is refused, and wouldAccept does not record")
    func duplicates() {
        let window = Window()
        #expect(window.wouldAccept(7))
        #expect(window.wouldAccept(7), "asking twice does not record")
        #expect(window.record(7))
        #expect(!window.wouldAccept(7))
        #expect(!window.record(7))
        #expect(window.record(8))
        #expect(!window.record(7))
        #expect(!window.record(8))
    }

    @Test("out-of-order counters within 1,024 of the highest are accepted once")
    func outOfOrder() {
        let window = Window()
        #expect(window.record(2000))
        for counter in stride(from: UInt64(1999), through: 2000 - 1023, by: -1) {
            #expect(window.record(counter), "counter \(counter)")
            #expect(!window.record(counter), "counter \(counter) twice")
        }
    }

    @Test("counters older than the window are refused: age 1,023 is inside, 1,024 outside")
    func olderThanWindow() {
        let window = Window()
        #expect(window.record(5000))
        #expect(!window.wouldAccept(5000 - 1024))
        #expect(!window.record(5000 - 1024))
        #expect(!window.wouldAccept(0))
        #expect(window.wouldAccept(5000 - 1023))
        #expect(window.record(5000 - 1023))
    }

    @Test("advancing slides the window: counters seen before stay refused, newly uncovered slots are fresh")
    func sliding() {
        let window = Window()
        for counter: UInt64 in 0..<1024 { #expect(window.record(counter)) }
        // Advancing by 10 drops 0…9 out of the window and reuses their bitmap slots for 1024…1033.
        #expect(window.record(1033))
        for counter: UInt64 in 0..<10 { #expect(!window.wouldAccept(counter)) }
        for counter: UInt64 in 10..<1024 { #expect(!window.wouldAccept(counter), "\(counter) was seen") }
        for counter: UInt64 in 1024..<1033 { #expect(window.wouldAccept(counter), "\(counter) is new") }
    }

    @Test("a jump of more than the window clears it")
    func jump() {
        let window = Window()
        for counter: UInt64 in 0..<64 { #expect(window.record(counter)) }
        #expect(window.record(10_000))
        // Counters that share bitmap slots with the old ones (10_000 − 1024 + k·1024 …) are fresh.
        for counter: UInt64 in (10_000 - 1023)..<10_000 { #expect(window.wouldAccept(counter), "\(counter)") }
        #expect(!window.wouldAccept(63))
        #expect(!window.wouldAccept(10_000))
        // Exactly the window size is also a full clear.
        #expect(window.record(10_000 + 1024))
        #expect(window.wouldAccept(10_001))
        #expect(!window.wouldAccept(10_000))
    }

    /// The specification of §8.4 as a set of seen counters and the highest.
    struct Reference {
        var seen: Set<UInt64> = []
        var highest: UInt64?

        func wouldAccept(_ counter: UInt64) -> Bool {
            guard let highest else { return true }
            if counter > highest { return true }
            return highest - counter < 1024 && !seen.contains(counter)
        }

        mutating func record(_ counter: UInt64) -> Bool {
            guard wouldAccept(counter) else { return false }
            seen.insert(counter)
            highest = max(highest ?? counter, counter)
            if seen.count > 4096 { seen = seen.filter { highest! - $0 < 1024 } }
            return true
        }
    }

    @Test("100,000 seeded random counters near a moving edge agree with a reference model", arguments: [UInt64(1), 2, 3])
    func randomizedAgainstReference(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let window = Window()
        var reference = Reference()
        var edge: UInt64 = 0
        var accepted = 0
        var mismatches = 0
        for step in 0..<100_000 {
            let roll = rng.next() % 100
            let counter: UInt64
            switch roll {
            case 0..<40: counter = edge + rng.next() % 4  // just ahead of the edge
            case 40..<85: counter = edge &- min(edge, rng.next() % 1100)  // inside or just outside the window
            case 85..<98: counter = edge &- min(edge, rng.next() % 8)  // probable duplicates
            default: counter = edge + 500 + rng.next() % 2000  // jumps, some past the window
            }
            if rng.next() % 10 == 0 {
                // A datagram that fails to authenticate is only checked, never recorded.
                if window.wouldAccept(counter) != reference.wouldAccept(counter) { mismatches += 1 }
                continue
            }
            let expected = reference.record(counter)
            let actual = window.record(counter)
            if expected != actual {
                mismatches += 1
                if mismatches < 5 { Issue.record("seed \(seed) step \(step): counter \(counter) edge \(edge): window \(actual), reference \(expected)") }
            }
            if expected { accepted += 1 }
            edge = reference.highest ?? 0
        }
        #expect(mismatches == 0, "seed \(seed)")
        #expect(accepted > 20_000 && accepted < 90_000, "the walk exercised both outcomes (\(accepted) accepted)")
    }
}
