/// A place found by a query before it becomes a ``PlaceMatch``: its distance and its index.
struct Hit {
    var distance: Double
    var id: Int32
}

/// Each place's rank in name order (`String` comparison; equal names share a rank), so ties
/// at equal distances are broken by comparing two integers instead of two strings.
struct NameRanks: Sendable {
    let ranks: [Int32]

    init(_ names: [String]) {
        let order = names.indices.sorted { names[$0] < names[$1] }
        var ranks = [Int32](repeating: 0, count: names.count)
        var rank: Int32 = 0
        for (i, id) in order.enumerated() {
            if i > 0 && names[order[i - 1]] != names[id] { rank += 1 }
            ranks[id] = rank
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
                    var sorter = HitSorter(hits: hits, ranks: rankBuffer)
                    sorter.sort(0, n, depth: 2 * (Int.bitWidth - n.leadingZeroBitCount))
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
                        var sorter = HitSorter(hits: out, ranks: rankBuffer)
                        if largest > 32 {
                            for b in 0..<buckets where starts[b + 1] - starts[b] > 32 {
                                let lo = Int(starts[b]), hi = Int(starts[b + 1])
                                sorter.sort(lo, hi, depth: 2 * (Int.bitWidth - (hi - lo).leadingZeroBitCount))
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

    mutating func sort(_ lo: Int, _ hi: Int, depth: Int) {
        var lo = lo, hi = hi, depth = depth
        while hi - lo > 24 {
            if depth == 0 {
                heapSort(lo, hi)
                return
            }
            depth -= 1
            let mid = lo + (hi - lo) / 2
            // Median of three to hits[lo]; then partition (Hoare) around it.
            if before(hits[mid], hits[lo]) { hits.swapAt(mid, lo) }
            if before(hits[hi - 1], hits[lo]) { hits.swapAt(hi - 1, lo) }
            if before(hits[hi - 1], hits[mid]) { hits.swapAt(hi - 1, mid) }
            hits.swapAt(lo, mid)
            let pivot = hits[lo]
            var i = lo, j = hi
            while true {
                repeat { i += 1 } while i < hi && before(hits[i], pivot)
                repeat { j -= 1 } while before(pivot, hits[j])
                if i >= j { break }
                hits.swapAt(i, j)
            }
            hits.swapAt(lo, j)
            // Recurse into the smaller side, loop on the larger.
            if j - lo < hi - j - 1 {
                sort(lo, j, depth: depth)
                lo = j + 1
            } else {
                sort(j + 1, hi, depth: depth)
                hi = j
            }
        }
        insertionSort(lo, hi)
    }

    func insertionSort(_ lo: Int, _ hi: Int) {
        guard hi - lo > 1 else { return }
        for i in (lo + 1)..<hi {
            let x = hits[i]
            var j = i
            while j > lo && before(x, hits[j - 1]) {
                hits[j] = hits[j - 1]
                j -= 1
            }
            hits[j] = x
        }
    }

    func heapSort(_ lo: Int, _ hi: Int) {
        let n = hi - lo
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while 2 * root + 1 < end {
                var child = 2 * root + 1
                if child + 1 < end && before(hits[lo + child], hits[lo + child + 1]) { child += 1 }
                guard before(hits[lo + root], hits[lo + child]) else { return }
                hits.swapAt(lo + root, lo + child)
                root = child
            }
        }
        for start in stride(from: n / 2 - 1, through: 0, by: -1) { siftDown(start, n) }
        for end in stride(from: n - 1, to: 0, by: -1) {
            hits.swapAt(lo, lo + end)
            siftDown(0, end)
        }
    }
}
