/// Unstable in-place sorts on raw buffers for orders that are total (no two elements equal),
/// where stability buys nothing: introsort (quicksort with a median-of-three pivot, insertion
/// sort for short ranges, heapsort past a depth limit, so never quadratic) and insertion sort.
/// The standard library's stable merge sort costs about twice as much on these inputs.
enum IntroSort {
    /// Sorts `buffer[lo..<hi]` by `before`.
    @inline(__always)
    static func sort<T>(_ buffer: UnsafeMutableBufferPointer<T>, _ lo: Int, _ hi: Int, by before: (T, T) -> Bool) {
        introSort(buffer, lo, hi, depth: 2 * (Int.bitWidth - (hi - lo).leadingZeroBitCount), before)
    }

    private static func introSort<T>(_ a: UnsafeMutableBufferPointer<T>, _ lo: Int, _ hi: Int, depth: Int, _ before: (T, T) -> Bool) {
        var lo = lo, hi = hi, depth = depth
        while hi - lo > 24 {
            if depth == 0 {
                heapSort(a, lo, hi, before)
                return
            }
            depth -= 1
            let mid = lo + (hi - lo) / 2
            // Median of three to a[lo]; then a Hoare partition around it.
            if before(a[mid], a[lo]) { a.swapAt(mid, lo) }
            if before(a[hi - 1], a[lo]) { a.swapAt(hi - 1, lo) }
            if before(a[hi - 1], a[mid]) { a.swapAt(hi - 1, mid) }
            a.swapAt(lo, mid)
            let pivot = a[lo]
            var i = lo, j = hi
            while true {
                repeat { i += 1 } while i < hi && before(a[i], pivot)
                repeat { j -= 1 } while before(pivot, a[j])
                if i >= j { break }
                a.swapAt(i, j)
            }
            a.swapAt(lo, j)
            // Recurse into the smaller side, loop on the larger.
            if j - lo < hi - j - 1 {
                introSort(a, lo, j, depth: depth, before)
                lo = j + 1
            } else {
                introSort(a, j + 1, hi, depth: depth, before)
                hi = j
            }
        }
        insertionSort(a, lo, hi, by: before)
    }

    /// Sorts `buffer[lo..<hi]` by `before` with insertion sort: quick for short or nearly
    /// sorted ranges.
    @inline(__always)
    static func insertionSort<T>(_ a: UnsafeMutableBufferPointer<T>, _ lo: Int, _ hi: Int, by before: (T, T) -> Bool) {
        guard hi - lo > 1 else { return }
        for i in (lo + 1)..<hi {
            let x = a[i]
            var j = i
            while j > lo && before(x, a[j - 1]) {
                a[j] = a[j - 1]
                j -= 1
            }
            a[j] = x
        }
    }

    private static func heapSort<T>(_ a: UnsafeMutableBufferPointer<T>, _ lo: Int, _ hi: Int, _ before: (T, T) -> Bool) {
        let n = hi - lo
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while 2 * root + 1 < end {
                var child = 2 * root + 1
                if child + 1 < end && before(a[lo + child], a[lo + child + 1]) { child += 1 }
                guard before(a[lo + root], a[lo + child]) else { return }
                a.swapAt(lo + root, lo + child)
                root = child
            }
        }
        for start in stride(from: n / 2 - 1, through: 0, by: -1) { siftDown(start, n) }
        for end in stride(from: n - 1, to: 0, by: -1) {
            a.swapAt(lo, lo + end)
            siftDown(0, end)
        }
    }
}
