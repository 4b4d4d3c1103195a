import Foundation
import Places

/// Queries generated as `bench-anchors/geo_anchor.py` generates them (same distributions; our
/// own seeded generator, so not the same points).
enum PlacesQueries {
    /// `bbox`: latitude and longitude each uniform over the data set's min/max box.
    static func uniformInBox(_ places: [Place], count: Int, seed: UInt64) -> [Coordinate] {
        var rng = BenchRandom(seed: seed)
        let lats = places.map(\.latitude), lons = places.map(\.longitude)
        let (s, n) = (lats.min() ?? 0, lats.max() ?? 0), (w, e) = (lons.min() ?? 0, lons.max() ?? 0)
        return (0..<count).map { _ in
            Coordinate(latitude: rng.uniform(s, n), longitude: rng.uniform(w, e))
        }
    }

    /// `near`: a random place plus N(0, 0.01°) in latitude and N(0, 0.01°)/cos(lat) in
    /// longitude (about 1 km), latitude clipped to ±89.9 and longitude wrapped.
    static func nearPlaces(_ places: [Place], count: Int, seed: UInt64) -> [Coordinate] {
        var rng = BenchRandom(seed: seed)
        return (0..<count).map { _ in
            let p = places[rng.below(places.count)]
            let lat = min(89.9, max(-89.9, p.latitude + rng.normal(0.01)))
            var lon = p.longitude + rng.normal(0.01) / cos(lat * .pi / 180)
            lon = (lon + 180).truncatingRemainder(dividingBy: 360)
            if lon < 0 { lon += 360 }
            return Coordinate(latitude: lat, longitude: lon - 180)
        }
    }

    /// The anchors' box around a query: ±0.05° latitude, ±0.05°/cos(latitude) longitude.
    static func box(around q: Coordinate) -> BoundingBox {
        let dlon = 0.05 / max(cos(q.latitude * .pi / 180), 1e-6)
        return BoundingBox(south: q.latitude - 0.05, west: q.longitude - dlon, north: q.latitude + 0.05, east: q.longitude + dlon)
    }
}

/// SplitMix64 with uniform and normal draws.
struct BenchRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// N(0, sigma²) by Box–Muller.
    mutating func normal(_ sigma: Double) -> Double {
        let u1 = max(unit(), 1e-300), u2 = unit()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// The baseline for every query: compute ``Geodesy/distance(from:to:)`` for every place, keep
/// what qualifies, sort by (distance, name, index), as the oracle tests do. Same answers as
/// the index.
struct BrutePlaces {
    let places: [Place]
    let coordinates: [Coordinate]
    let keys: [[UInt8]]

    init(_ places: [Place]) {
        self.places = places
        coordinates = places.map(\.coordinate)
        keys = places.map { Array(PlaceIndex.searchKey(for: $0.name).utf8) }
    }

    private func before(_ a: (Double, Int), _ b: (Double, Int)) -> Bool {
        if a.0 != b.0 { return a.0 < b.0 }
        let na = places[a.1].name, nb = places[b.1].name
        return na != nb ? na < nb : a.1 < b.1
    }

    private func matches(_ found: [(Double, Int)], _ origin: Coordinate) -> [PlaceMatch] {
        found.sorted(by: before).map {
            PlaceMatch(index: $0.1, place: places[$0.1], distance: .metres($0.0), bearing: Geodesy.bearing(from: origin, to: coordinates[$0.1]))
        }
    }

    func within(_ r: Double, of origin: Coordinate) -> [PlaceMatch] {
        var found: [(Double, Int)] = []
        for i in coordinates.indices {
            let d = Geodesy.distance(from: origin, to: coordinates[i])
            if d <= r { found.append((d, i)) }
        }
        return matches(found, origin)
    }

    func nearest(to origin: Coordinate, k: Int) -> [PlaceMatch] {
        var best: [(Double, Int)] = []
        for i in coordinates.indices {
            let candidate = (Geodesy.distance(from: origin, to: coordinates[i]), i)
            if best.count == k, !before(candidate, best[k - 1]) { continue }
            let at = best.firstIndex { before(candidate, $0) } ?? best.count
            best.insert(candidate, at: at)
            if best.count > k { best.removeLast() }
        }
        return matches(best, origin)
    }

    func inBox(_ box: BoundingBox) -> [PlaceMatch] {
        let centre = box.centre
        var found: [(Double, Int)] = []
        for i in coordinates.indices where box.contains(coordinates[i]) {
            found.append((Geodesy.distance(from: centre, to: coordinates[i]), i))
        }
        return matches(found, centre)
    }

    /// Indices whose folded name contains the folded token (no ordering), as the Python scan.
    func named(_ token: String) -> [Int] {
        let q = Array(PlaceIndex.searchKey(for: token).utf8)
        guard let first = q.first else { return [] }
        var hits: [Int] = []
        for (i, key) in keys.enumerated() where key.count >= q.count {
            var j = 0
            while j + q.count <= key.count {
                if key[j] == first && key[j..<(j + q.count)].elementsEqual(q) {
                    hits.append(i)
                    break
                }
                j += 1
            }
        }
        return hits
    }

    /// Grid binning with a dictionary: count and mean latitude/longitude per cell.
    func grid(cellDegrees: Double) -> Int {
        var cells: [GridCell: (Int, Double, Double)] = [:]
        for c in coordinates {
            let cell = GridCell(containing: c, size: cellDegrees)
            let old = cells[cell, default: (0, 0, 0)]
            cells[cell] = (old.0 + 1, old.1 + c.latitude, old.2 + c.longitude)
        }
        return cells.count
    }
}

/// The median wall time of `runs` calls after one untimed warm-up call, as the anchors time.
/// `body` returns a checksum so the work cannot be optimised away.
func medianSeconds(runs: Int, _ body: () -> Int) -> (seconds: Double, checksum: Int) {
    var checksum = body()
    var times: [Double] = []
    for _ in 0..<max(1, runs) {
        let start = ContinuousClock.now
        checksum &+= body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    return (median(times), checksum)
}
