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
struct BruteForce {
    let places: [Place]
    let keys: [[UInt8]]

    init(_ places: [Place]) {
        self.places = places
        keys = places.map { Array(PlaceIndex.searchKey(for: $0.name).utf8) }
    }

    func distances(from origin: Coordinate) -> [Double] {
        places.map { Geodesy.distance(from: origin, to: $0.coordinate) }
    }

    private func match(_ i: Int, _ d: Double, _ origin: Coordinate) -> PlaceMatch {
        PlaceMatch(index: i, place: places[i], distance: Distance(metres: d), bearing: Geodesy.bearing(from: origin, to: places[i].coordinate))
    }

    /// k nearest: keep a sorted list of the best k indices while scanning.
    func nearest(_ origin: Coordinate, k: Int, distances d: [Double]) -> [PlaceMatch] {
        var best: [Int] = []
        func before(_ a: Int, _ b: Int) -> Bool {
            if d[a] != d[b] { return d[a] < d[b] }
            if places[a].name != places[b].name { return places[a].name < places[b].name }
            return a < b
        }
        for i in places.indices {
            if best.count == k, !before(i, best[k - 1]) { continue }
            let at = best.firstIndex { before(i, $0) } ?? best.count
            best.insert(i, at: at)
            if best.count > k { best.removeLast() }
        }
        return best.map { match($0, d[$0], origin) }
    }

    func within(_ r: Double, _ origin: Coordinate, distances d: [Double]) -> [PlaceMatch] {
        places.indices.filter { d[$0] <= r }.map { match($0, d[$0], origin) }.sorted(by: PlaceMatch.precedes)
    }

    func inBox(south: Double, west: Double, north: Double, east: Double) -> [PlaceMatch] {
        let origin = PlaceIndex.boxCentre(south: south, west: west, north: north, east: east)
        return places.indices.filter { i in
            let c = places[i].coordinate
            guard c.latitude >= south && c.latitude <= north else { return false }
            return west <= east ? (c.longitude >= west && c.longitude <= east) : (c.longitude >= west || c.longitude <= east)
        }
        .map { match($0, Geodesy.distance(from: origin, to: places[$0].coordinate), origin) }
        .sorted(by: PlaceMatch.precedes)
    }

    /// Indices whose key starts with / contains (not at the start) the query key.
    func nameMatches(_ query: String) -> (prefix: [Int], substring: [Int]) {
        let q = Array(PlaceIndex.searchKey(for: query).utf8)
        guard !q.isEmpty else { return ([], []) }
        var prefix: [Int] = [], substring: [Int] = []
        for (i, key) in keys.enumerated() where key.count >= q.count {
            if key.starts(with: q) {
                prefix.append(i)
            } else if (1..<(key.count - q.count + 1)).contains(where: { key[$0..<($0 + q.count)].elementsEqual(q) }) {
                substring.append(i)
            }
        }
        return (prefix, substring)
    }

    func named(_ query: String, limit: Int) -> [NameMatch] {
        let (p, s) = nameMatches(query)
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

    func named(_ query: String, near origin: Coordinate, limit: Int, distances d: [Double]) -> [PlaceMatch] {
        let (p, s) = nameMatches(query)
        let all = p.map { match($0, d[$0], origin) }.sorted(by: PlaceMatch.precedes)
            + s.map { match($0, d[$0], origin) }.sorted(by: PlaceMatch.precedes)
        return Array(all.prefix(limit))
    }
}
