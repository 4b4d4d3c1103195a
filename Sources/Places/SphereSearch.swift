/// A branch-and-bound walk of the unit-vector ``PackedKDTree`` around a query point.
///
/// Visits every point whose cell may hold a point within the caller's current bound, nearer
/// cells first. The caller's visitor gets each point's tree position and its straight-line
/// (chord) distance from the query on the unit sphere, and returns the bound in metres
/// beyond which nothing more is wanted (∞ until it knows). A far cell is skipped when the
/// great-circle length of its lower-bound chord, less ``PlaceIndex/pruningSlack``, exceeds
/// the bound, so no point within the bound is ever skipped.
struct SphereSearch {
    let tree: PackedKDTree
    let query: (Double, Double, Double)
    private var bound = Double.infinity
    private var offsets = [0.0, 0.0, 0.0]

    init(tree: PackedKDTree, query: (Double, Double, Double)) {
        self.tree = tree
        self.query = query
    }

    mutating func run(_ visit: (Int, Double) -> Double) {
        bound = .infinity
        offsets = [0, 0, 0]
        descend(0, tree.count, 0, visit)
    }

    @inline(__always)
    private func chord(_ p: Int) -> Double {
        let dx = tree.coordinate(p, 0) - query.0
        let dy = tree.coordinate(p, 1) - query.1
        let dz = tree.coordinate(p, 2) - query.2
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    @inline(__always)
    private func component(_ axis: Int) -> Double {
        axis == 0 ? query.0 : axis == 1 ? query.1 : query.2
    }

    private mutating func descend(_ lo: Int, _ hi: Int, _ boxDistanceSquared: Double, _ visit: (Int, Double) -> Double) {
        if hi - lo <= PackedKDTree.leafSize {
            for p in lo..<hi { bound = visit(p, chord(p)) }
            return
        }
        let mid = (lo + hi) / 2
        let axis = Int(tree.axes[mid])
        let diff = component(axis) - tree.coordinate(mid, axis)
        bound = visit(mid, chord(mid))
        let (nearLo, nearHi, farLo, farHi) = diff <= 0 ? (lo, mid, mid + 1, hi) : (mid + 1, hi, lo, mid)
        descend(nearLo, nearHi, boxDistanceSquared, visit)
        let old = offsets[axis]
        let farSquared = boxDistanceSquared - old * old + diff * diff
        if Geodesy.arcLength(chord: farSquared.squareRoot()) - PlaceIndex.pruningSlack <= bound {
            offsets[axis] = diff
            descend(farLo, farHi, farSquared, visit)
            offsets[axis] = old
        }
    }
}
