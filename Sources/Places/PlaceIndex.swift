/// An immutable spatial index over places with exact great-circle answers.
///
/// Built once from an array of places, it answers k-nearest, radius, bounding-box and
/// name queries. Distances are haversine distances on a sphere of radius
/// ``Geodesy/earthRadius``; bearings are initial great-circle bearings from the query's
/// reference point. Every query returns the same places, in the same order, as a
/// brute-force scan computing ``Geodesy/distance(from:to:)`` for every place would: results
/// are ordered by (distance, name, index), so ties (many places on one point) are
/// deterministic.
///
/// Inside are two packed static KD-trees (``PackedKDTree``): one over 3-D unit vectors for
/// nearest and radius queries (straight-line distance between unit vectors is monotonic in
/// great-circle distance, so pruning by it is exact; a 2 m allowance absorbs rounding) and
/// one over (latitude, longitude) for boxes. Name search uses folded names (see
/// ``searchKey(for:)``), sorted for prefix lookups and concatenated for substring scans.
///
/// This type is a value and is thread-safe.
public struct PlaceIndex: Sendable {
    /// The places, in the order given to ``init(_:)``; results refer to them by index.
    public let places: [Place]
    let sphere: PackedKDTree
    let grid: PackedKDTree
    let names: NameTable

    /// Slack for floating-point error in pruning bounds, in metres. Pruning by a looser bound
    /// costs a few extra distance computations and never changes an answer.
    static let pruningSlack = 2.0

    /// Builds the index.
    /// - Parameter places: The places; an invalid coordinate (see ``Coordinate/isValid``) is
    ///   a programmer error, since the loaders never produce one.
    /// - Complexity: O(n log n).
    public init(_ places: [Place]) {
        precondition(places.count < Int(Int32.max), "PlaceIndex holds at most \(Int32.max - 1) places, got \(places.count)")
        self.places = places
        var unit = [Double]()
        unit.reserveCapacity(places.count * 3)
        var latLon = [Double]()
        latLon.reserveCapacity(places.count * 2)
        for (i, p) in places.enumerated() {
            precondition(p.coordinate.isValid, "place \(i) has an invalid coordinate \(p.coordinate)")
            let (x, y, z) = Geodesy.unitVector(p.coordinate)
            unit.append(x); unit.append(y); unit.append(z)
            latLon.append(p.latitude); latLon.append(p.longitude)
        }
        sphere = PackedKDTree(points: unit, dimensions: 3)
        grid = PackedKDTree(points: latLon, dimensions: 2)
        names = NameTable(places.map(\.name))
    }

    /// The number of places.
    public var count: Int { places.count }

    /// A match for the place at `index` measured from `origin`.
    func match(_ index: Int, from origin: Coordinate) -> PlaceMatch {
        let place = places[index]
        return PlaceMatch(
            index: index,
            place: place,
            distance: Distance(metres: Geodesy.distance(from: origin, to: place.coordinate)),
            bearing: Geodesy.bearing(from: origin, to: place.coordinate)
        )
    }

    // MARK: - Nearest

    /// The `k` places nearest to a point.
    /// - Parameters:
    ///   - origin: The reference point.
    ///   - k: How many places to return at most.
    /// - Returns: Up to `k` matches ordered by (distance, name, index); empty when `k` ≤ 0
    ///   or `origin` is not a valid coordinate.
    public func nearest(to origin: Coordinate, k: Int) -> [PlaceMatch] {
        guard k > 0, origin.isValid, count > 0 else { return [] }
        let q = Geodesy.unitVector(origin)
        var best = BoundedHeap(capacity: k)
        var search = SphereSearch(tree: sphere, query: q)
        search.run { position, chord in
            if best.isFull, Geodesy.arcLength(chord: chord) - Self.pruningSlack > best.worstDistance { return best.worstDistance }
            best.insert(match(Int(sphere.ids[position]), from: origin))
            return best.isFull ? best.worstDistance : .infinity
        }
        return best.sorted()
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
        guard r >= 0, r.isFinite, origin.isValid, count > 0 else { return [] }
        let q = Geodesy.unitVector(origin)
        var found: [PlaceMatch] = []
        var search = SphereSearch(tree: sphere, query: q)
        search.run { position, chord in
            if Geodesy.arcLength(chord: chord) - Self.pruningSlack > r { return r }
            let m = match(Int(sphere.ids[position]), from: origin)
            if m.distance.metres <= r { found.append(m) }
            return r
        }
        return found.sorted(by: PlaceMatch.precedes)
    }

    // MARK: - Bounding box

    /// Every place inside a latitude/longitude box.
    ///
    /// The box is `south ≤ latitude ≤ north` and, when `west ≤ east`, `west ≤ longitude ≤ east`;
    /// when `west > east` it crosses the antimeridian: `longitude ≥ west` or `longitude ≤ east`.
    /// Edges are inclusive; the predicate is exactly this, so a place at longitude −180 is not
    /// in a box whose eastern edge is 180 unless `west` is −180.
    /// - Parameters:
    ///   - south: The southern edge in degrees.
    ///   - west: The western edge in degrees.
    ///   - north: The northern edge in degrees.
    ///   - east: The eastern edge in degrees.
    ///   - origin: The reference point for distances and bearings; nil for the box's centre
    ///     (see ``boxCentre(south:west:north:east:)``).
    /// - Returns: Matches ordered by (distance, name, index); empty when `south > north`.
    public func inBox(south: Double, west: Double, north: Double, east: Double, from origin: Coordinate? = nil) -> [PlaceMatch] {
        guard south <= north, count > 0 else { return [] }
        let reference = origin ?? Self.boxCentre(south: south, west: west, north: north, east: east)
        var ids: [Int] = []
        if west <= east {
            collect(south: south, west: west, north: north, east: east, into: &ids)
        } else {
            collect(south: south, west: west, north: north, east: 180, into: &ids)
            collect(south: south, west: -180, north: north, east: east, into: &ids)
        }
        // The two halves of an antimeridian box are disjoint (lon ≥ west > east ≥ lon is impossible).
        return ids.map { match($0, from: reference) }.sorted(by: PlaceMatch.precedes)
    }

    /// The centre of a latitude/longitude box, antimeridian-aware.
    /// - Parameters:
    ///   - south: The southern edge in degrees.
    ///   - west: The western edge in degrees.
    ///   - north: The northern edge in degrees.
    ///   - east: The eastern edge in degrees.
    /// - Returns: The midpoint in latitude and in longitude (going east from `west` to `east`).
    public static func boxCentre(south: Double, west: Double, north: Double, east: Double) -> Coordinate {
        var lon = west <= east ? (west + east) / 2 : (west + east + 360) / 2
        if lon > 180 { lon -= 360 }
        return Coordinate(latitude: (south + north) / 2, longitude: lon)
    }

    private func collect(south: Double, west: Double, north: Double, east: Double, into ids: inout [Int]) {
        let lo = (south, west)
        let hi = (north, east)
        func inside(_ p: Int) -> Bool {
            let lat = grid.coordinate(p, 0), lon = grid.coordinate(p, 1)
            return lat >= lo.0 && lat <= hi.0 && lon >= lo.1 && lon <= hi.1
        }
        func visit(_ start: Int, _ end: Int) {
            if end - start <= PackedKDTree.leafSize {
                for p in start..<end where inside(p) { ids.append(Int(grid.ids[p])) }
                return
            }
            let mid = (start + end) / 2
            let axis = Int(grid.axes[mid])
            let split = grid.coordinate(mid, axis)
            let (low, high) = axis == 0 ? (lo.0, hi.0) : (lo.1, hi.1)
            if inside(mid) { ids.append(Int(grid.ids[mid])) }
            if low <= split { visit(start, mid) }
            if high >= split { visit(mid + 1, end) }
        }
        visit(0, grid.count)
    }
}
