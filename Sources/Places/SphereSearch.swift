/// What a ``SphereSearch`` reports each point to.
protocol SphereVisitor {
    /// The squared chord beyond which nothing more is wanted (∞ until the visitor knows).
    var boundSquared: Double { get }
    /// A point within reach: its tree position, its id and its squared chord from the query.
    mutating func visit(position: Int, id: Int32, chordSquared: Double)
}

/// A branch-and-bound walk of the unit-vector ``PackedKDTree`` around a query point.
///
/// Visits every point whose cell may hold a point within the visitor's current bound, nearer
/// cells first, and tells the visitor its squared straight-line (chord) distance from the
/// query on the unit sphere. A far cell is skipped when its lower-bound squared chord exceeds
/// the visitor's ``SphereVisitor/boundSquared``; visitors put ``PlaceIndex/pruningSlack`` into
/// their bound, so no point within the wanted distance is ever skipped. Bounds are compared in
/// chord space, so the walk needs no trigonometry.
enum SphereSearch {
    /// Walks `tree` around `query`, reporting to `visitor`.
    static func run<V: SphereVisitor>(_ tree: PackedKDTree, query: (Double, Double, Double), visitor: inout V) {
        tree.coordinates.withUnsafeBufferPointer { coordinates in
            tree.ids.withUnsafeBufferPointer { ids in
                tree.axes.withUnsafeBufferPointer { axes in
                    var walk = Walk(coordinates: coordinates, ids: ids, axes: axes, q: query)
                    walk.descend(0, ids.count, 0, &visitor)
                }
            }
        }
    }

    private struct Walk {
        let coordinates: UnsafeBufferPointer<Double>
        let ids: UnsafeBufferPointer<Int32>
        let axes: UnsafeBufferPointer<UInt8>
        let q: (Double, Double, Double)
        /// The query's offset from the current cell on each axis (0 inside it).
        var offsets: (Double, Double, Double) = (0, 0, 0)

        @inline(__always)
        func chordSquared(_ p: Int) -> Double {
            let dx = coordinates[3 * p] - q.0
            let dy = coordinates[3 * p + 1] - q.1
            let dz = coordinates[3 * p + 2] - q.2
            return dx * dx + dy * dy + dz * dz
        }

        @inline(__always)
        func offset(_ axis: Int) -> Double {
            axis == 0 ? offsets.0 : axis == 1 ? offsets.1 : offsets.2
        }

        @inline(__always)
        mutating func setOffset(_ axis: Int, _ value: Double) {
            switch axis {
            case 0: offsets.0 = value
            case 1: offsets.1 = value
            default: offsets.2 = value
            }
        }

        mutating func descend<V: SphereVisitor>(_ lo: Int, _ hi: Int, _ boxDistanceSquared: Double, _ visitor: inout V) {
            if hi - lo <= PackedKDTree.leafSize {
                for p in lo..<hi {
                    let c2 = chordSquared(p)
                    if c2 <= visitor.boundSquared { visitor.visit(position: p, id: ids[p], chordSquared: c2) }
                }
                return
            }
            let mid = (lo + hi) / 2
            let axis = Int(axes[mid])
            let component = axis == 0 ? q.0 : axis == 1 ? q.1 : q.2
            let diff = component - coordinates[3 * mid + axis]
            let c2 = chordSquared(mid)
            if c2 <= visitor.boundSquared { visitor.visit(position: mid, id: ids[mid], chordSquared: c2) }
            let (nearLo, nearHi, farLo, farHi) = diff <= 0 ? (lo, mid, mid + 1, hi) : (mid + 1, hi, lo, mid)
            descend(nearLo, nearHi, boxDistanceSquared, &visitor)
            let old = offset(axis)
            let farSquared = boxDistanceSquared - old * old + diff * diff
            if farSquared <= visitor.boundSquared {
                setOffset(axis, diff)
                descend(farLo, farHi, farSquared, &visitor)
                setOffset(axis, old)
            }
        }
    }
}
