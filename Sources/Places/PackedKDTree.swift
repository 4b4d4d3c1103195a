/// A static KD-tree packed into flat arrays: no nodes, no pointers.
///
/// The tree over positions `lo ..< hi` is implicit: when it holds more than ``leafSize``
/// points, the point at `mid = (lo + hi) / 2` is the node, its split axis is `axes[mid]`,
/// every point in `lo ..< mid` has a coordinate ≤ the node's on that axis and every point
/// in `mid + 1 ..< hi` one ≥ it. Smaller ranges are leaves, scanned linearly. Coordinates
/// are stored in tree order (`coordinates[position * dimensions + axis]`), and `ids[position]`
/// is the caller's index of the point there. Building is O(n log n) with quickselect on the
/// axis of widest spread; identical points need no special case.
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
    init(points: [Double], ids pointIDs: [Int32], dimensions: Int) {
        precondition(dimensions > 0 && points.count == pointIDs.count * dimensions, "one id per point of \(dimensions) values")
        self.dimensions = dimensions
        let n = pointIDs.count
        var order = (0..<n).map { Int32($0) }
        var axes = [UInt8](repeating: 0, count: n)
        Self.build(&order, &axes, points, dimensions, 0, n)
        var packed = [Double](repeating: 0, count: points.count)
        for (position, i) in order.enumerated() {
            for a in 0..<dimensions {
                packed[position * dimensions + a] = points[Int(i) * dimensions + a]
            }
        }
        coordinates = packed
        ids = order.map { pointIDs[Int($0)] }
        self.axes = axes
    }

    /// The coordinate of the point at `position` on `axis`.
    @inline(__always)
    func coordinate(_ position: Int, _ axis: Int) -> Double {
        coordinates[position * dimensions + axis]
    }

    private static func build(_ order: inout [Int32], _ axes: inout [UInt8], _ points: [Double], _ dims: Int, _ lo: Int, _ hi: Int) {
        guard hi - lo > leafSize else { return }
        var bestAxis = 0
        var bestSpread = -1.0
        for a in 0..<dims {
            var mn = Double.infinity
            var mx = -Double.infinity
            for i in lo..<hi {
                let v = points[Int(order[i]) * dims + a]
                mn = min(mn, v)
                mx = max(mx, v)
            }
            if mx - mn > bestSpread {
                bestSpread = mx - mn
                bestAxis = a
            }
        }
        let mid = (lo + hi) / 2
        select(&order, points, dims, bestAxis, lo, hi, mid)
        axes[mid] = UInt8(bestAxis)
        build(&order, &axes, points, dims, lo, mid)
        build(&order, &axes, points, dims, mid + 1, hi)
    }

    /// Quickselect: puts the k-th smallest (by value on `axis`) at `k`, smaller-or-equal before, greater-or-equal after.
    private static func select(_ order: inout [Int32], _ points: [Double], _ dims: Int, _ axis: Int, _ lo: Int, _ hi: Int, _ k: Int) {
        var left = lo
        var right = hi - 1
        func value(_ i: Int) -> Double { points[Int(order[i]) * dims + axis] }
        while right > left {
            // Median of three as pivot, deterministic.
            let m = (left + right) / 2
            let a = value(left), b = value(m), c = value(right)
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = left
            var j = right
            while i <= j {
                while value(i) < pivot { i += 1 }
                while value(j) > pivot { j -= 1 }
                if i <= j {
                    order.swapAt(i, j)
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
