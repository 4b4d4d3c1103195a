/// An immutable spatial index over places with exact great-circle answers.
///
/// Built once from an array of places, it answers k-nearest, radius, bounding-box, name,
/// clustering and reverse-lookup queries. Distances and bearings are exactly
/// ``Geodesy/distance(from:to:)`` and ``Geodesy/bearing(from:to:)`` from the query's reference
/// point. Every query returns the same places, in the same order, as a brute-force scan
/// computing those for every place would: results are ordered by (distance, name, index), so
/// ties (many places on one point) are deterministic.
///
/// Inside are two packed static KD-trees (``PackedKDTree``): one over 3-D unit vectors for
/// nearest and radius queries (straight-line distance between unit vectors is monotonic in
/// great-circle distance, so pruning by it is exact; a 2 m allowance absorbs rounding) and
/// one over (latitude, longitude) for boxes. Name search uses folded names (see
/// ``searchKey(for:)``), sorted for prefix lookups and concatenated for substring scans.
///
/// A place whose coordinate is not valid (see ``Coordinate/isValid``) cannot be placed on the
/// sphere: it is left out of every answer and listed in ``excluded``; building never traps.
/// The loaders never produce such places.
///
/// This type is a value and is thread-safe.
public struct PlaceIndex: Sendable {
    /// The places, in the order given to ``init(_:)``; results refer to them by index.
    public let places: [Place]
    /// Indices of the places left out because their coordinate is not valid, ascending.
    public let excluded: [Int]
    let sphere: PackedKDTree
    let grid: PackedKDTree
    /// For each place, its position in `sphere` (−1 for an excluded place).
    let spherePosition: [Int32]
    let names: NameTable
    let nameRanks: NameRanks

    /// Slack for floating-point error in pruning bounds, in metres. Pruning by a looser bound
    /// costs a few extra distance computations and never changes an answer.
    static let pruningSlack = 2.0

    /// The most places an index holds; places beyond it are excluded.
    static let capacity = Int(Int32.max) - 1

    /// Builds the index.
    /// - Parameter places: The places. A place with an invalid coordinate is left out of every
    ///   answer and listed in ``excluded`` (as is any place beyond the 2,147,483,646th).
    /// - Complexity: O(n log n).
    public init(_ places: [Place]) {
        self.places = places
        // Names first: their scratch arrays are freed before the trees' arrays are allocated,
        // so the trees reuse that memory (a lower peak).
        var excluded: [Int] = []
        for (i, p) in places.enumerated() where !p.coordinate.isValid || i >= Self.capacity { excluded.append(i) }
        nameRanks = NameRanks(places)
        names = NameTable(places, excluding: excluded, ranks: nameRanks)
        var ids: [Int32] = []
        ids.reserveCapacity(places.count)
        var unit = [Double]()  // handed to the trees (consume), which reorder them in place
        unit.reserveCapacity(places.count * 3)
        var latLon = [Double]()
        latLon.reserveCapacity(places.count * 2)
        for (i, p) in places.enumerated() {
            guard p.coordinate.isValid, i < Self.capacity else { continue }
            let (x, y, z) = Geodesy.unitVector(p.coordinate)
            unit.append(x); unit.append(y); unit.append(z)
            latLon.append(p.latitude); latLon.append(p.longitude)
            ids.append(Int32(i))
        }
        self.excluded = excluded
        sphere = PackedKDTree(points: consume unit, ids: ids, dimensions: 3)
        grid = PackedKDTree(points: consume latLon, ids: consume ids, dimensions: 2)
        var positions = [Int32](repeating: -1, count: places.count)
        for (position, id) in sphere.ids.enumerated() { positions[Int(id)] = Int32(position) }
        spherePosition = positions
    }

    /// The number of places given to ``init(_:)``, excluded ones included.
    public var count: Int { places.count }

    /// The number of places the index answers with (``count`` less the ``excluded``).
    public var indexedCount: Int { sphere.count }

    /// The unit vector of the place at `index` (which must not be excluded).
    @inline(__always)
    func unitVector(ofPlace index: Int) -> (Double, Double, Double) {
        let position = Int(spherePosition[index])
        return (sphere.coordinate(position, 0), sphere.coordinate(position, 1), sphere.coordinate(position, 2))
    }

    /// Matches for hits that are already in result order, measured from `origin`.
    func matches(_ hits: [Hit], from origin: Coordinate) -> [PlaceMatch] {
        let source = MatchSource(places, origin: origin)
        return hits.map { PlaceMatch(index: Int($0.id), in: source, distance: Distance(metres: $0.distance)) }
    }
}
