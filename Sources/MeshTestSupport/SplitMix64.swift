/// A small, fast, seeded random number generator (SplitMix64, Steele, Lea and Flood 2014).
///
/// Deterministic: the same seed gives the same sequence on every platform and run, so a test that
/// draws random sizes or bytes from it is reproducible. Print the seed in failure messages. Not for
/// cryptography.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let size = Int.random(in: 0...4096, using: &rng)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The internal state; advances by a fixed odd constant per draw.
    public private(set) var state: UInt64

    /// Creates a generator.
    /// - Parameter seed: any value; equal seeds give equal sequences.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    /// - Parameter count: how many bytes.
    /// - Returns: the bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }
}
