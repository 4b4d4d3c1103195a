import Foundation
import Places
import Testing

/// Every query type against a brute-force scan on the real data sets, with seeded random queries.
///
/// Per data set and query type, `PLACES_ORACLE_QUERIES` queries (default 300, so 1,200 per
/// type over the four sets and about 8,000 in all; clustering runs a fifteenth as many, each
/// over the whole set or a box): nearest with k from 1 to 50, radii log-uniform from 5 m to 500 km, boxes
/// from a single point to the whole globe (about a sixth across the antimeridian, some
/// around a pole), name queries of 1 to 8 characters cut from real names (case changed,
/// accents added or removed, padded with spaces), reverse lookups and grid clusters with and
/// without a box. Query points are near places, exactly on places, or anywhere on the globe.
///
/// Skipped (with the trait's comment as the reason) when ../shared/data is not beside the
/// package, as on a machine without the shared data sets.
@Suite("PlaceIndex against brute force on real data")
struct OracleTests {
    /// Queries of each type per data set; `PLACES_ORACLE_QUERIES=3000` runs the long version.
    static let queriesPerType = Int(ProcessInfo.processInfo.environment["PLACES_ORACLE_QUERIES"] ?? "") ?? 300

    /// A summary of a match for comparison: index, distance and bearing bit for bit.
    private struct Key: Equatable, CustomStringConvertible {
        let index: Int, metres: Double, bearing: Double
        init(_ m: PlaceMatch) { index = m.index; metres = m.distance.metres; bearing = m.bearing }
        var description: String { "#\(index)@\(metres)m/\(bearing)°" }
    }

    private static func keys(_ ms: [PlaceMatch]) -> [Key] { ms.map(Key.init) }

    /// The fields of a cluster that must agree bit for bit.
    private struct ClusterKey: Equatable {
        let cell: GridCell, count: Int, latitude: Double, longitude: Double, representative: Int
        init(_ c: PlaceCluster) {
            cell = c.cell; count = c.count; latitude = c.centroid.latitude; longitude = c.centroid.longitude
            representative = c.representativeIndex
        }
    }

    private static func logUniform(_ lo: Double, _ hi: Double, _ rng: inout SeededGenerator) -> Double {
        exp(Double.random(in: log(lo)...log(hi), using: &rng))
    }

    /// A query point: near a place (jittered), exactly on a place, or anywhere.
    private static func point(_ places: [Place], _ rng: inout SeededGenerator) -> Coordinate {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0, 1:
            let p = places.randomElement(using: &rng)!.coordinate
            let j = logUniform(0.000_01, 0.5, &rng)
            return Coordinate(latitude: max(-90, min(90, p.latitude + .random(in: -j...j, using: &rng))),
                              longitude: max(-180, min(180, p.longitude + .random(in: -j...j, using: &rng))))
        case 2:
            return places.randomElement(using: &rng)!.coordinate
        default:
            return Coordinate(latitude: asin(.random(in: -1...1, using: &rng)) * 180 / .pi,
                              longitude: .random(in: -180...180, using: &rng))
        }
    }

    /// A box: around a place (50%), anywhere (30%; crossing the antimeridian when it runs past
    /// 180°), a cap at a pole (10%), a single point (8%), or the whole globe (2%).
    private static func box(_ places: [Place], _ rng: inout SeededGenerator) -> BoundingBox {
        switch Int.random(in: 0..<50, using: &rng) {
        case 0..<25:
            let c = point(places, &rng)
            let h = logUniform(0.000_5, 5, &rng), w = logUniform(0.000_5, 10, &rng)
            var west = c.longitude - w, east = c.longitude + w
            if west < -180 { west += 360 }
            if east > 180 { east -= 360 }
            return BoundingBox(south: max(-90, c.latitude - h), west: west, north: min(90, c.latitude + h), east: east)
        case 25..<40:
            let height = logUniform(0.01, 90, &rng), width = logUniform(0.01, 180, &rng)
            let south = Double.random(in: -90...(90 - height), using: &rng)
            let west = Double.random(in: -180...180, using: &rng)
            let east = west + width > 180 ? west + width - 360 : west + width
            return BoundingBox(south: south, west: west, north: south + height, east: east)
        case 40..<45:
            let edge = Double.random(in: 60...89.9, using: &rng)
            let west = Double.random(in: -180...180, using: &rng), east = Double.random(in: -180...180, using: &rng)
            return Bool.random(using: &rng) ? BoundingBox(south: edge, west: west, north: 90, east: east)
                                            : BoundingBox(south: -90, west: west, north: -edge, east: east)
        case 45..<49:
            let c = places.randomElement(using: &rng)!.coordinate
            return BoundingBox(south: c.latitude, west: c.longitude, north: c.latitude, east: c.longitude)
        default:
            return .world
        }
    }

    /// A name query: 1 to 8 characters of a real name, case changed, accents added or
    /// removed, or padded with spaces.
    private static func nameQuery(_ places: [Place], _ rng: inout SeededGenerator) -> String {
        let chars = Array(places.randomElement(using: &rng)!.name)
        let len = min(chars.count, Int.random(in: 1...8, using: &rng))
        let start = chars.isEmpty ? 0 : Int.random(in: 0...(chars.count - len), using: &rng)
        let cut = String(chars[start..<(start + len)])
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: return cut.uppercased()
        case 1: return cut.lowercased()
        case 2: return cut.capitalized
        case 3:
            let accents: [Character: Character] = ["a": "á", "e": "é", "i": "î", "o": "ö", "u": "ü", "n": "ñ", "c": "ç", "A": "Å", "E": "É"]
            return String(cut.map { accents[$0] ?? $0 })
        case 4: return cut.folding(options: .diacriticInsensitive, locale: nil)
        case 5: return "  \(cut)\t"
        default: return cut
        }
    }

    @Test("every query type equals a brute-force scan", .enabled(if: OracleDataSet.available, "../shared/data is absent: oracle tests skipped"),
          arguments: OracleDataSet.all)
    func oracle(_ dataSet: OracleDataSet) throws {
        let report = try dataSet.loadReport()
        #expect(report.places.count == dataSet.expectedCount, "\(dataSet.file): \(report.problems.prefix(3))")
        #expect(report.problems.isEmpty)
        let places = report.places
        let index = PlaceIndex(places)
        let brute = BruteForce(places)
        var rng = SeededGenerator(seed: 0x5EED_0000 &+ UInt64(places.count))
        var failures = [String: Int]()
        var counts = [String: Int]()
        func check<T: Equatable>(_ kind: String, _ got: T, _ want: T, _ what: @autoclosure () -> String) {
            counts[kind, default: 0] += 1
            guard got != want else { return }
            failures[kind, default: 0] += 1
            if failures[kind] == 1 { Issue.record("\(dataSet.file) \(kind) \(what()): got \(got), want \(want)") }
        }
        for q in 0..<Self.queriesPerType {
            let origin = Self.point(places, &rng)
            let d = brute.distances(from: origin)
            let sample = Int.random(in: 0..<places.count, using: &rng)
            check("distance formula", d[sample], Geodesy.distance(from: origin, to: places[sample].coordinate), "to #\(sample) from \(origin)")

            let k = Int.random(in: 1...50, using: &rng)
            check("nearest", Self.keys(index.nearest(to: origin, k: k)), Self.keys(brute.nearest(origin, k: k, distances: d)), "k=\(k) at \(origin)")

            let radius = Self.logUniform(5, 500_000, &rng)
            check("within", Self.keys(index.within(.metres(radius), of: origin)), Self.keys(brute.within(radius, origin, distances: d)),
                  "r=\(radius) at \(origin)")

            let query = Self.nameQuery(places, &rng)
            let limit = Bool.random(using: &rng) ? Int.random(in: 1...40, using: &rng) : 500
            let matching = brute.nameMatches(query)
            check("named-near", Self.keys(index.named(query, near: origin, limit: limit)),
                  Self.keys(brute.named(matching, near: origin, limit: limit, distances: d)), "\(query.debugDescription) limit \(limit) near \(origin)")
            check("named", index.named(query, limit: limit).map { "\($0.index)\($0.kind)" },
                  brute.named(matching, limit: limit).map { "\($0.index)\($0.kind)" }, "\(query.debugDescription) limit \(limit)")

            let found = index.describe(origin)
            let want = brute.describe(origin, distances: d)
            check("describe", found.map { "#\($0.index)@\($0.distance.metres)m/\($0.bearing)°" },
                  want.map { "#\($0.index)@\($0.distance.metres)m/\($0.bearing)°" }, "at \(origin)")

            let b = Self.box(places, &rng)
            check("inBox", Self.keys(index.inBox(b)), Self.keys(brute.inBox(b)), "box \(b)")

            if q % 15 == 0 {
                let cell = Bool.random(using: &rng) ? Self.logUniform(0.01, 30, &rng) : PlaceIndex.cellDegrees(zoom: Int.random(in: 0...14, using: &rng))
                let clusterBox: BoundingBox? = Bool.random(using: &rng) ? Self.box(places, &rng) : nil
                check("clusters", index.clusters(cellDegrees: cell, in: clusterBox).map(ClusterKey.init),
                      brute.clusters(cellDegrees: cell, in: clusterBox).map(ClusterKey.init), "cell \(cell)° in \(clusterBox.map { "\($0)" } ?? "all")")
            }
        }
        #expect(failures.isEmpty, "\(dataSet.file): mismatching queries per type \(failures) of \(counts)")
        print("oracle \(dataSet.file): \(counts.values.reduce(0, +)) queries (\(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))), mismatches \(failures)")
    }
}
