import Foundation
import Places
import Testing

/// SplitMix64: a small seeded generator so every oracle run asks the same questions.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One real data set under ../shared/data and how to load it.
struct OracleDataSet: Sendable, CustomTestStringConvertible {
    let file: String
    let load: @Sendable (Data) throws -> LoadReport
    let expectedCount: Int

    var testDescription: String { file }

    /// ../shared/data relative to the package root (this file is Tests/PlacesTests/…).
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/data").standardizedFileURL

    static var available: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("geonames-cities15000.csv").path)
    }

    static let all: [OracleDataSet] = [
        OracleDataSet(file: "uk-eat-out-restaurants-2020-08-05.geojson.gz", load: { try GeoJSONLoader().load($0) }, expectedCount: 54_754),
        OracleDataSet(file: "uk-eat-out-restaurants-64k.csv", load: { try CSVLoader().load($0) }, expectedCount: 64_340),
        OracleDataSet(file: "geonames-cities1000-rg.csv", load: { try CSVLoader().load($0) }, expectedCount: 144_563),
        OracleDataSet(file: "geonames-cities15000.csv", load: { try CSVLoader().load($0) }, expectedCount: 34_006),
    ]

    func loadReport() throws -> LoadReport {
        try load(Data(contentsOf: Self.directory.appendingPathComponent(file)))
    }
}

/// The brute-force answer to every query: measure every place, filter, sort.
///
/// Distances are ``Geodesy/distance(from:to:)`` written out here with the same operations in
/// the same order (unit vectors, chord, `2R·asin(c/2)`), so they are the same bits while the
/// scan runs optimised (the library is a debug build in `swift test`); ``distance(_:_:)``
/// checks that against the library on every call it is asked to.
struct BruteForce {
    let places: [Place]
    let coordinates: [Coordinate]
    let units: [(Double, Double, Double)]
    let keys: [[UInt8]]

    init(_ places: [Place]) {
        self.places = places
        coordinates = places.map(\.coordinate)
        units = coordinates.map(Self.unitVector)
        keys = places.map { Array(PlaceIndex.searchKey(for: $0.name).utf8) }
    }

    static func unitVector(_ c: Coordinate) -> (Double, Double, Double) {
        let phi = c.latitude * .pi / 180
        let lambda = c.longitude * .pi / 180
        let cp = cos(phi)
        return (cp * cos(lambda), cp * sin(lambda), sin(phi))
    }

    @inline(__always)
    static func distance(_ a: (Double, Double, Double), _ b: (Double, Double, Double)) -> Double {
        let dx = b.0 - a.0, dy = b.1 - a.1, dz = b.2 - a.2
        let chord = (dx * dx + dy * dy + dz * dz).squareRoot()
        return 2 * Geodesy.earthRadius * asin(min(1, max(0, chord) / 2))
    }

    /// The distance from `origin` to place `i`, the same bits as the library's.
    func distance(_ origin: Coordinate, _ i: Int) -> Double {
        Self.distance(Self.unitVector(origin), units[i])
    }

    func distances(from origin: Coordinate) -> [Double] {
        let o = Self.unitVector(origin)
        return units.map { Self.distance(o, $0) }
    }

    private func match(_ i: Int, _ d: Double, _ origin: Coordinate) -> PlaceMatch {
        PlaceMatch(index: i, place: places[i], distance: Distance(metres: d), bearing: Geodesy.bearing(from: origin, to: coordinates[i]))
    }

    /// Result order, (distance, name, index), on indices.
    private func before(_ a: Int, _ b: Int, _ d: [Double]) -> Bool {
        if d[a] != d[b] { return d[a] < d[b] }
        if places[a].name != places[b].name { return places[a].name < places[b].name }
        return a < b
    }

    /// k nearest: keep a sorted list of the best k indices while scanning.
    func nearest(_ origin: Coordinate, k: Int, distances d: [Double]) -> [PlaceMatch] {
        var best: [Int] = []
        for i in places.indices {
            if best.count == k, !before(i, best[k - 1], d) { continue }
            let at = best.firstIndex { before(i, $0, d) } ?? best.count
            best.insert(i, at: at)
            if best.count > k { best.removeLast() }
        }
        return best.map { match($0, d[$0], origin) }
    }

    func within(_ r: Double, _ origin: Coordinate, distances d: [Double]) -> [PlaceMatch] {
        places.indices.filter { d[$0] <= r }.sorted { before($0, $1, d) }.map { match($0, d[$0], origin) }
    }

    /// Indices inside `box`, in index order.
    func inside(_ box: BoundingBox) -> [Int] {
        places.indices.filter { box.contains(coordinates[$0]) }
    }

    func inBox(_ box: BoundingBox) -> [PlaceMatch] {
        let origin = box.centre
        let ids = inside(box)
        var d = [Double](repeating: 0, count: places.count)
        for i in ids { d[i] = distance(origin, i) }
        return ids.sorted { before($0, $1, d) }.map { match($0, d[$0], origin) }
    }

    /// Indices whose key starts with / contains (not at the start) the query key.
    func nameMatches(_ query: String) -> (prefix: [Int], substring: [Int]) {
        let q = Array(PlaceIndex.searchKey(for: query).utf8)
        guard !q.isEmpty else { return ([], []) }
        var prefix: [Int] = [], substring: [Int] = []
        for (i, key) in keys.enumerated() where key.count >= q.count {
            key.withUnsafeBufferPointer { k in
                q.withUnsafeBufferPointer { q in
                    func matches(at start: Int) -> Bool {
                        for j in 0..<q.count where k[start + j] != q[j] { return false }
                        return true
                    }
                    if matches(at: 0) {
                        prefix.append(i)
                    } else if (1..<(k.count - q.count + 1)).contains(where: matches) {
                        substring.append(i)
                    }
                }
            }
        }
        return (prefix, substring)
    }

    func named(_ matches: (prefix: [Int], substring: [Int]), limit: Int) -> [NameMatch] {
        let (p, s) = matches
        func order(_ ids: [Int]) -> [Int] {
            ids.sorted { a, b in
                if keys[a] != keys[b] { return keys[a].lexicographicallyPrecedes(keys[b]) }
                if places[a].name != places[b].name { return places[a].name < places[b].name }
                return a < b
            }
        }
        let all = order(p).map { NameMatch(index: $0, place: places[$0], kind: .prefix) }
            + order(s).map { NameMatch(index: $0, place: places[$0], kind: .substring) }
        return Array(all.prefix(limit))
    }

    func named(_ matches: (prefix: [Int], substring: [Int]), near origin: Coordinate, limit: Int, distances d: [Double]) -> [PlaceMatch] {
        let (p, s) = matches
        let all = p.sorted { before($0, $1, d) }.map { match($0, d[$0], origin) }
            + s.sorted { before($0, $1, d) }.map { match($0, d[$0], origin) }
        return Array(all.prefix(limit))
    }

    /// The nearest place (by result order) described from it.
    func describe(_ point: Coordinate, distances d: [Double]) -> ReverseLookup? {
        guard let i = places.indices.min(by: { before($0, $1, d) }) else { return nil }
        return ReverseLookup(coordinate: point, index: i, place: places[i], distance: Distance(metres: d[i]),
                             bearing: Geodesy.bearing(from: coordinates[i], to: point))
    }

    /// Grid binning of the places inside `box` (all for nil): per cell, in order of the first
    /// place in it, the count, the mean latitude and longitude summed in index order, and the
    /// place nearest the mean (ties by name, then index).
    func clusters(cellDegrees: Double, in box: BoundingBox?) -> [PlaceCluster] {
        let ids = box.map(inside) ?? Array(places.indices)
        var order: [GridCell] = []
        var members: [GridCell: [Int]] = [:]
        for i in ids {
            let cell = GridCell(containing: coordinates[i], size: cellDegrees)
            if members[cell] == nil { order.append(cell) }
            members[cell, default: []].append(i)
        }
        return order.map { cell in
            let ids = members[cell]!
            var lat = 0.0, lon = 0.0
            for i in ids {
                lat += coordinates[i].latitude
                lon += coordinates[i].longitude
            }
            let centroid = Coordinate(latitude: lat / Double(ids.count), longitude: lon / Double(ids.count))
            let c = Self.unitVector(centroid)
            var best = ids[0]
            var bestDistance = Self.distance(c, units[best])
            for i in ids.dropFirst() {
                let d = Self.distance(c, units[i])
                if d < bestDistance || (d == bestDistance && (places[i].name < places[best].name || (places[i].name == places[best].name && i < best))) {
                    best = i
                    bestDistance = d
                }
            }
            return PlaceCluster(cell: cell, count: ids.count, centroid: centroid, representativeIndex: best, representative: places[best])
        }
    }
}
