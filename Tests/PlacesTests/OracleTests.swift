import Foundation
import Places
import Testing

/// Every query type against a brute-force haversine scan on the real data sets.
///
/// Skipped (with the trait's comment as the reason) when ../shared/data is not beside the
/// package, as on a machine without the shared data sets.
@Suite("PlaceIndex against brute force on real data")
struct OracleTests {
    /// Queries of each type per data set: 300 (1,200 per type over the four sets) keeps a
    /// debug run near 30 s; PLACES_ORACLE_QUERIES=1000 runs the long version (~3 min).
    static let queriesPerType = Int(ProcessInfo.processInfo.environment["PLACES_ORACLE_QUERIES"] ?? "") ?? 300

    /// A summary of a match for comparison: index, distance and bearing bit for bit.
    private struct Key: Equatable, CustomStringConvertible {
        let index: Int, metres: Double, bearing: Double
        init(_ m: PlaceMatch) { index = m.index; metres = m.distance.metres; bearing = m.bearing }
        var description: String { "#\(index)@\(metres)m/\(bearing)°" }
    }

    private static func keys(_ ms: [PlaceMatch]) -> [Key] { ms.map(Key.init) }

    /// A query point: near a place (jittered), anywhere in the data's extent, or anywhere.
    private static func point(_ places: [Place], _ rng: inout SeededGenerator) -> Coordinate {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0, 1:
            let p = places.randomElement(using: &rng)!.coordinate
            let j = Double.random(in: 0...0.05, using: &rng)
            return Coordinate(latitude: max(-90, min(90, p.latitude + .random(in: -j...j, using: &rng))),
                              longitude: max(-180, min(180, p.longitude + .random(in: -j...j, using: &rng))))
        case 2:
            let p = places.randomElement(using: &rng)!.coordinate
            return Coordinate(latitude: p.latitude, longitude: p.longitude)  // exactly on a place
        default:
            return Coordinate(latitude: asin(.random(in: -1...1, using: &rng)) * 180 / .pi,
                              longitude: .random(in: -180...180, using: &rng))
        }
    }

    @Test("nearest, within, inBox and named equal a brute-force scan", .enabled(if: OracleDataSet.available, "../shared/data is absent: oracle tests skipped"), arguments: OracleDataSet.all)
    func oracle(_ dataSet: OracleDataSet) throws {
        let report = try dataSet.loadReport()
        #expect(report.places.count == dataSet.expectedCount, "\(dataSet.file): \(report.problems.prefix(3))")
        #expect(report.problems.isEmpty)
        let places = report.places
        let index = PlaceIndex(places)
        let brute = BruteForce(places)
        var rng = SeededGenerator(seed: 0x5EED_0000 &+ UInt64(places.count))
        var failures = [String: Int]()
        func check<T: Equatable>(_ kind: String, _ got: T, _ want: T, _ what: @autoclosure () -> String) {
            guard got != want else { return }
            failures[kind, default: 0] += 1
            if failures[kind] == 1 { Issue.record("\(dataSet.file) \(kind) \(what()): got \(got), want \(want)") }
        }
        for _ in 0..<Self.queriesPerType {
            let origin = Self.point(places, &rng)
            let d = brute.distances(from: origin)

            let k = Bool.random(using: &rng) ? Int.random(in: 1...5, using: &rng) : Int.random(in: 1...60, using: &rng)
            check("nearest", Self.keys(index.nearest(to: origin, k: k)), Self.keys(brute.nearest(origin, k: k, distances: d)), "k=\(k) at \(origin)")

            let radius = exp(Double.random(in: log(5.0)...log(50_000.0), using: &rng))
            check("within", Self.keys(index.within(.metres(radius), of: origin)), Self.keys(brute.within(radius, origin, distances: d)), "r=\(radius) at \(origin)")

            let sample = places.randomElement(using: &rng)!.name
            let chars = Array(sample)
            let len = min(chars.count, Int.random(in: 2...6, using: &rng))
            let start = chars.isEmpty ? 0 : Int.random(in: 0...(chars.count - len), using: &rng)
            let query = String(chars[start..<(start + len)])
            let limit = Int.random(in: 1...40, using: &rng)
            if Bool.random(using: &rng) {
                check("named-near", Self.keys(index.named(query, near: origin, limit: limit)), Self.keys(brute.named(query, near: origin, limit: limit, distances: d)), "\(query.debugDescription) limit \(limit) near \(origin)")
            } else {
                check("named", index.named(query, limit: limit).map(\.index), brute.named(query, limit: limit).map(\.index), "\(query.debugDescription) limit \(limit)")
            }

            let south = Double.random(in: -90...89, using: &rng)
            let north = min(90, south + exp(Double.random(in: log(0.001)...log(20.0), using: &rng)))
            let anchor = Self.point(places, &rng)
            let wrap = Int.random(in: 0..<8, using: &rng) == 0
            let west = wrap ? Double.random(in: 150...180, using: &rng) : anchor.longitude - exp(Double.random(in: log(0.001)...log(10.0), using: &rng))
            let east = wrap ? Double.random(in: -180 ... -150, using: &rng) : min(180, anchor.longitude + exp(Double.random(in: log(0.001)...log(10.0), using: &rng)))
            let (s, n) = Bool.random(using: &rng) ? (south, north) : (max(-90, anchor.latitude - (north - south) / 2), min(90, anchor.latitude + (north - south) / 2))
            check("inBox", Self.keys(index.inBox(south: s, west: west, north: n, east: east)), Self.keys(brute.inBox(south: s, west: west, north: n, east: east)), "box \(s),\(west),\(n),\(east)")
        }
        #expect(failures.isEmpty, "\(dataSet.file): mismatching queries per type \(failures) of \(Self.queriesPerType) each")
    }
}
