extension PlaceIndex {
    // MARK: - Nearest

    /// The `k` places nearest to a point.
    /// - Parameters:
    ///   - origin: The reference point.
    ///   - k: How many places to return at most.
    /// - Returns: Up to `k` matches ordered by (distance, name, index); empty when `k` ≤ 0
    ///   or `origin` is not a valid coordinate.
    public func nearest(to origin: Coordinate, k: Int) -> [PlaceMatch] {
        guard k > 0, origin.isValid, indexedCount > 0 else { return [] }
        return matches(nearestHits(to: Geodesy.unitVector(origin), k: k), from: origin)
    }

    /// The `k` nearest hits to a unit vector, in result order.
    func nearestHits(to query: (Double, Double, Double), k: Int) -> [Hit] {
        var visitor = NearestVisitor(heap: BoundedHeap(capacity: k, ranks: nameRanks))
        SphereSearch.run(sphere, query: query, visitor: &visitor)
        return visitor.heap.sorted()
    }

    // MARK: - Radius

    /// Every place within a distance of a point.
    /// - Parameters:
    ///   - radius: The distance (inclusive: a place exactly at `radius` is included).
    ///   - origin: The reference point.
    /// - Returns: Matches ordered by (distance, name, index); empty when the radius is
    ///   negative or not finite, or `origin` is not a valid coordinate.
    public func within(_ radius: Distance, of origin: Coordinate) -> [PlaceMatch] {
        let r = radius.metres
        guard r >= 0, r.isFinite, origin.isValid, indexedCount > 0 else { return [] }
        let reach = Geodesy.chord(forArcLength: r + Self.pruningSlack)
        var visitor = RadiusVisitor(boundSquared: reach * reach, radius: r)
        SphereSearch.run(sphere, query: Geodesy.unitVector(origin), visitor: &visitor)
        visitor.hits.sortIntoResultOrder(nameRanks)
        return matches(visitor.hits, from: origin)
    }
}

/// Keeps the k best hits; its bound is the chord of the worst kept distance plus the slack.
private struct NearestVisitor: SphereVisitor {
    var heap: BoundedHeap
    var boundSquared = Double.infinity

    mutating func visit(position: Int, id: Int32, chordSquared: Double) {
        let d = Geodesy.arcLength(chord: chordSquared.squareRoot())
        if heap.isFull && d > heap.worstDistance { return }
        heap.insert(Hit(distance: d, id: id))
        if heap.isFull {
            let reach = Geodesy.chord(forArcLength: heap.worstDistance + PlaceIndex.pruningSlack)
            boundSquared = reach * reach
        }
    }
}

/// Collects every hit within `radius` metres; its bound is the chord of the radius plus the slack.
private struct RadiusVisitor: SphereVisitor {
    let boundSquared: Double
    let radius: Double
    var hits: [Hit] = []

    mutating func visit(position: Int, id: Int32, chordSquared: Double) {
        let d = Geodesy.arcLength(chord: chordSquared.squareRoot())
        if d <= radius { hits.append(Hit(distance: d, id: id)) }
    }
}
