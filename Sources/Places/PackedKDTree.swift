/// A static KD-tree packed into flat arrays: no nodes, no pointers.
///
/// The tree over positions `lo ..< hi` is implicit: when it holds more than ``leafSize``
/// points, the point at `mid = (lo + hi) / 2` is the node, its split axis is `axes[mid]`,
/// every point in `lo ..< mid` has a coordinate ≤ the node's on that axis and every point
/// in `mid + 1 ..< hi` one ≥ it. Smaller ranges are leaves, scanned linearly. Coordinates
/// are stored in tree order (`coordinates[position * dimensions + axis]`), and `ids[position]`
/// is the caller's index of the point there. Building is O(n log n) with quickselect on the
/// axis of widest spread, moving the coordinates themselves (sequential memory access);
/// identical points need no special case.
struct PackedKDTree: Sendable {
    static let leafSize = 8

    let dimensions: Int
    private(set) var coordinates: [Double]
    private(set) var ids: [Int32]
    private(set) var axes: [UInt8]

    /// The number of points.
    var count: Int { ids.count }

    /// Builds the tree over `points`, `dimensions` values per point; `ids[i]` is the caller's
    /// name for point `i` (programmer errors, not data, trap: `ids` must have one per point).
    /// The arrays are reordered in place when the caller hands them over (`consume`).
    init(points: consuming [Double], ids pointIDs: consuming [Int32], dimensions: Int) {
        precondition(dimensions > 0 && points.count == pointIDs.count * dimensions, "one id per point of \(dimensions) values")
        self.dimensions = dimensions
        var coordinates = consume points
        var ids = consume pointIDs
        var axes = [UInt8](repeating: 0, count: ids.count)
        coordinates.withUnsafeMutableBufferPointer { c in
            ids.withUnsafeMutableBufferPointer { i in
                axes.withUnsafeMutableBufferPointer { a in
                    var builder = Builder(coordinates: c, ids: i, axes: a, dims: dimensions)
                    builder.build(0, i.count)
                }
            }
        }
        self.coordinates = coordinates
        self.ids = ids
        self.axes = axes
    }

    /// The coordinate of the point at `position` on `axis`.
    @inline(__always)
    func coordinate(_ position: Int, _ axis: Int) -> Double {
        coordinates[position * dimensions + axis]
    }

    /// Arranges points into tree order in place.
    private struct Builder {
        let coordinates: UnsafeMutableBufferPointer<Double>
        let ids: UnsafeMutableBufferPointer<Int32>
        let axes: UnsafeMutableBufferPointer<UInt8>
        let dims: Int

        @inline(__always)
        func value(_ i: Int, _ axis: Int) -> Double { coordinates[i * dims + axis] }

        @inline(__always)
        func swap(_ i: Int, _ j: Int) {
            guard i != j else { return }
            for a in 0..<dims { coordinates.swapAt(i * dims + a, j * dims + a) }
            ids.swapAt(i, j)
        }

        mutating func build(_ lo: Int, _ hi: Int) {
            guard hi - lo > PackedKDTree.leafSize else { return }
            var bestAxis = 0
            var bestSpread = -1.0
            for a in 0..<dims {
                var mn = Double.infinity
                var mx = -Double.infinity
                for i in lo..<hi {
                    let v = value(i, a)
                    mn = min(mn, v)
                    mx = max(mx, v)
                }
                if mx - mn > bestSpread {
                    bestSpread = mx - mn
                    bestAxis = a
                }
            }
            let mid = (lo + hi) / 2
            select(bestAxis, lo, hi, mid)
            axes[mid] = UInt8(bestAxis)
            build(lo, mid)
            build(mid + 1, hi)
        }

        /// Quickselect: puts the k-th smallest (by value on `axis`) at `k`, smaller-or-equal before, greater-or-equal after.
        func select(_ axis: Int, _ lo: Int, _ hi: Int, _ k: Int) {
            var left = lo
            var right = hi - 1
            while right > left {
                // Median of three as pivot, deterministic.
                let m = (left + right) / 2
                let a = value(left, axis), b = value(m, axis), c = value(right, axis)
                let pivot = max(min(a, b), min(max(a, b), c))
                var i = left
                var j = right
                while i <= j {
                    while value(i, axis) < pivot { i += 1 }
                    while value(j, axis) > pivot { j -= 1 }
                    if i <= j {
                        swap(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if k <= j {
                    right = j
                } else if k >= i {
                    left = i
                } else {
                    return
                }
            }
        }
    }
}
