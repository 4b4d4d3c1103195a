import Foundation

/// A place found by a query before it becomes a ``PlaceMatch``: its distance and its index.
struct Hit {
    var distance: Double
    var id: Int32
}

/// Each place's rank in name order (`String` comparison; equal names share a rank), so ties
/// at equal distances are broken by comparing two integers instead of two strings.
struct NameRanks: Sendable {
    let ranks: [Int32]

    init(_ places: [Place]) {
        let table = SortKeys(places.lazy.map { place -> String.UTF8View in
            // String order is the order of the names' NFC forms, scalar by scalar, which is the
            // byte order of their NFC UTF-8; an ASCII name is its own NFC form.
            let name = place.name
            return name.utf8.allSatisfy({ $0 < 0x80 }) ? name.utf8 : name.precomposedStringWithCanonicalMapping.utf8
        })
        let order = table.sortedIndices { _, _ in false }
        var ranks = [Int32](repeating: 0, count: places.count)
        var rank: Int32 = 0
        for (i, id) in order.enumerated() {
            if i > 0 && table.compare(Int(order[i - 1]), Int(id)) != 0 { rank += 1 }
            ranks[Int(id)] = rank
        }
        self.ranks = ranks
    }

    /// Result order, (distance, name, index), as ``PlaceMatch/precedes(_:_:)``.
    @inline(__always)
    func precedes(_ a: Hit, _ b: Hit) -> Bool {
        if a.distance != b.distance { return a.distance < b.distance }
        let ra = ranks[Int(a.id)], rb = ranks[Int(b.id)]
        return ra != rb ? ra < rb : a.id < b.id
    }
}

/// Byte strings in one buffer with their first eight bytes as an integer, for sorting many
/// strings by bytes without touching (or reference-counting) `String`s: most comparisons are
/// settled by the integers, in two arrays read in order.
struct SortKeys {
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []
    private var prefixes: [UInt64] = []

    /// Byte strings of 4 GiB in all at most (names: far more than any data set holds).
    init(_ strings: some Collection<some Collection<UInt8>>) {
        ends.reserveCapacity(strings.count)
        prefixes.reserveCapacity(strings.count)
        for s in strings {
            var prefix: UInt64 = 0
            var n = 0
            for b in s {
                bytes.append(b)
                if n < 8 { prefix |= UInt64(b) << (56 - 8 * n) }
                n += 1
            }
            ends.append(UInt32(truncatingIfNeeded: bytes.count))
            prefixes.append(prefix)
        }
    }

    /// Negative, zero or positive as string `a` sorts before, equal to or after string `b`, bytewise.
    func compare(_ a: Int, _ b: Int) -> Int {
        bytes.withUnsafeBufferPointer { p in
            var i = a == 0 ? 0 : Int(ends[a - 1]), j = b == 0 ? 0 : Int(ends[b - 1])
            let ie = Int(ends[a]), je = Int(ends[b])
            while i < ie && j < je {
                if p[i] != p[j] { return Int(p[i]) - Int(p[j]) }
                i += 1
                j += 1
            }
            return (ie - i) - (je - j)
        }
    }

    /// Indices in byte order of their strings; ties by `tie`, then by index.
    func sortedIndices(tie: (Int32, Int32) -> Bool) -> [Int32] {
        var order = (0..<Int32(prefixes.count)).map { $0 }
        bytes.withUnsafeBufferPointer { p in
            ends.withUnsafeBufferPointer { ends in
                prefixes.withUnsafeBufferPointer { prefixes in
                    order.withUnsafeMutableBufferPointer { order in
                        IntroSort.sort(order, 0, order.count) { a, b in
                            let x = Int(a), y = Int(b)
                            if prefixes[x] != prefixes[y] { return prefixes[x] < prefixes[y] }
                            var i = x == 0 ? 0 : Int(ends[x - 1]), j = y == 0 ? 0 : Int(ends[y - 1])
                            let ie = Int(ends[x]), je = Int(ends[y])
                            while i < ie && j < je {
                                if p[i] != p[j] { return p[i] < p[j] }
                                i += 1
                                j += 1
                            }
                            if ie - i != je - j { return ie - i < je - j }
                            if tie(a, b) { return true }
                            if tie(b, a) { return false }
                            return a < b
                        }
                    }
                }
            }
        }
        return order
    }
}

extension Array where Element == Hit {
    /// Sorts into result order, (distance, name, index); names are compared by rank, and only
    /// between hits at the same distance.
    ///
    /// A bucket sort: hits go into about `count / 2` buckets by squared distance relative to
    /// the farthest (a radius query's hits are spread evenly in area, so evenly over the
    /// squared distance), which keeps the order between buckets; then one insertion sort over
    /// the whole array finishes each bucket (two hits on average, so few moves and well
    /// predicted branches). A bucket of more than 32 hits (many places on one point) is sorted
    /// on its own by introsort, so no input is quadratic. Comparison sorts spend most of their
    /// time on mispredicted branches here; this is several times faster for hundreds of hits.
    mutating func sortIntoResultOrder(_ ranks: NameRanks) {
        let n = count
        guard n > 1 else { return }
        var farthest = 0.0
        for hit in self { farthest = Swift.max(farthest, hit.distance) }
        let buckets = Swift.max(1, n / 2)
        let scale = Double(buckets) / (farthest * farthest)
        ranks.ranks.withUnsafeBufferPointer { rankBuffer in
            guard n > 16, scale.isFinite else {
                // Few hits, or all at distance 0 (or too near to square): one comparison sort.
                withUnsafeMutableBufferPointer { hits in
                    HitSorter(hits: hits, ranks: rankBuffer).sort(0, n)
                }
                return
            }
            @inline(__always)
            func bucket(_ hit: Hit) -> Int { Swift.min(buckets - 1, Int(hit.distance * hit.distance * scale)) }
            var starts = [Int32](repeating: 0, count: buckets + 1)
            var sorted = self
            starts.withUnsafeMutableBufferPointer { starts in
                withUnsafeBufferPointer { hits in
                    for hit in hits { starts[bucket(hit) + 1] += 1 }
                    var largest: Int32 = 0
                    for b in 0..<buckets {
                        largest = Swift.max(largest, starts[b + 1])
                        starts[b + 1] += starts[b]
                    }
                    sorted.withUnsafeMutableBufferPointer { out in
                        var next = [Int32](starts[0..<buckets])
                        next.withUnsafeMutableBufferPointer { next in
                            for hit in hits {
                                let b = bucket(hit)
                                out[Int(next[b])] = hit
                                next[b] += 1
                            }
                        }
                        let sorter = HitSorter(hits: out, ranks: rankBuffer)
                        if largest > 32 {
                            for b in 0..<buckets where starts[b + 1] - starts[b] > 32 {
                                sorter.sort(Int(starts[b]), Int(starts[b + 1]))
                            }
                        }
                        sorter.insertionSort(0, n)
                    }
                }
            }
            self = sorted
        }
    }
}

/// Comparison sorts of hit ranges for ``Swift/Array/sortIntoResultOrder(_:)``.
private struct HitSorter {
    let hits: UnsafeMutableBufferPointer<Hit>
    let ranks: UnsafeBufferPointer<Int32>

    @inline(__always)
    func before(_ a: Hit, _ b: Hit) -> Bool {
        if a.distance != b.distance { return a.distance < b.distance }
        let ra = ranks[Int(a.id)], rb = ranks[Int(b.id)]
        return ra != rb ? ra < rb : a.id < b.id
    }

    func sort(_ lo: Int, _ hi: Int) {
        IntroSort.sort(hits, lo, hi) { before($0, $1) }
    }

    func insertionSort(_ lo: Int, _ hi: Int) {
        IntroSort.insertionSort(hits, lo, hi) { before($0, $1) }
    }
}
