#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level searches over raw text, for sizing arrays before a load.
enum ByteSearch {
    /// How many times `needle` occurs in `haystack` (non-overlapping), with `memchr` and `memcmp`.
    static func count(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int {
        guard let first = needle.first, let base = haystack.baseAddress, haystack.count >= needle.count else { return 0 }
        var count = 0
        var offset = 0
        needle.withUnsafeBytes { n in
            while haystack.count - offset >= needle.count {
                guard let hit = memchr(base + offset, Int32(first), haystack.count - offset - needle.count + 1) else { return }
                let at = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(hit, n.baseAddress!, needle.count) == 0 {
                    count += 1
                    offset = at + needle.count
                } else {
                    offset = at + 1
                }
            }
        }
        return count
    }
}
