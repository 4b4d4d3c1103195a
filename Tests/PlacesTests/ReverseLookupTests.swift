import Foundation
import Places
import Testing

@Suite("Reverse lookup and clusters")
struct ReverseLookupTests {
    private static let clapham = Place(name: "  Clapham ", coordinate: Coordinate(latitude: 51.4613, longitude: -0.1383))
    private static let wimbledon = Place(name: "Wimbledon", coordinate: Coordinate(latitude: 51.4214, longitude: -0.2064))

    @Test("describe names the nearest place, the distance and the compass point from the place to the position")
    func describe() throws {
        let index = PlaceIndex([Self.clapham, Self.wimbledon])
        // About 2.1 km north-east of Clapham, much further from Wimbledon.
        let point = Coordinate(latitude: 51.4750, longitude: -0.1180)
        let found = try #require(index.describe(point))
        #expect(found.index == 0)
        #expect(found.distance.metres == Geodesy.distance(from: point, to: Self.clapham.coordinate))
        #expect(found.bearing == Geodesy.bearing(from: Self.clapham.coordinate, to: point))
        #expect(found.compassPoint() == .northeast)
        #expect(found.formatted() == "2.1 km NE of Clapham")
        #expect(found.formatted(units: .imperial, divisions: .sixteen) == "1.3 mi NE of Clapham")
        #expect(found.formatted(divisions: .four) == "2.1 km N of Clapham")
        #expect(index.describe(Self.clapham.coordinate)?.formatted() == "at Clapham")
        #expect(index.describe(point, within: .kilometres(1)) == nil)
        #expect(index.describe(point, within: .kilometres(3))?.index == 0)
        #expect(index.describe(Coordinate(latitude: 91, longitude: 0)) == nil)
        #expect(PlaceIndex([]).describe(point) == nil)
        let unnamed = PlaceIndex([Place(name: " ", coordinate: Coordinate(latitude: 1, longitude: 2))])
        #expect(unnamed.describe(Coordinate(latitude: 1.01, longitude: 2))?.formatted() == "1.1 km N of 1.0,2.0")
    }

    @Test("clusters: counts, centroids and the representative nearest the centroid; order by first place; boxes cut cells")
    func clusters() throws {
        let places = [
            Place(name: "A", coordinate: Coordinate(latitude: 0.1, longitude: 0.1)),
            Place(name: "B", coordinate: Coordinate(latitude: 0.3, longitude: 0.2)),
            Place(name: "far", coordinate: Coordinate(latitude: 10.2, longitude: 179.9)),
            Place(name: "C", coordinate: Coordinate(latitude: 0.2, longitude: 0.15)),
            Place(name: "wrap", coordinate: Coordinate(latitude: 10.1, longitude: -179.9)),
            Place(name: "pole", coordinate: Coordinate(latitude: 90, longitude: 180)),
        ]
        let index = PlaceIndex(places)
        let cells = index.clusters(cellDegrees: 1)
        #expect(cells.map(\.count) == [3, 1, 1, 1])
        #expect(cells.map(\.representative.name) == ["C", "far", "wrap", "pole"])
        #expect(cells[0].cell == GridCell(row: 90, column: 180, size: 1))
        #expect(abs(cells[0].centroid.latitude - 0.2) < 1e-12 && abs(cells[0].centroid.longitude - 0.15) < 1e-12)
        #expect(cells[0].cell.bounds == BoundingBox(south: 0, west: 0, north: 1, east: 1))
        #expect(cells[3].cell == GridCell(row: 179, column: 359, size: 1))  // 90° and 180° fall in the last row and column
        // A box across the antimeridian keeps both sides of 180°.
        let pacific = index.clusters(cellDegrees: 1, in: BoundingBox(south: 0, west: 170, north: 20, east: -170))
        #expect(pacific.map(\.representative.name) == ["far", "wrap"])
        // A box cutting the first cell counts only what is inside.
        let cut = index.clusters(cellDegrees: 1, in: BoundingBox(south: 0, west: 0, north: 0.25, east: 1))
        #expect(cut.map(\.count) == [2])
        #expect(index.clusters(cellDegrees: 0).isEmpty && index.clusters(cellDegrees: .nan).isEmpty)
        #expect(index.clusters(cellDegrees: 1e9).count == 1)
        #expect(PlaceIndex.cellDegrees(zoom: 0) == 90 && PlaceIndex.cellDegrees(zoom: 8) == 90.0 / 256)
        #expect(PlaceIndex.cellDegrees(zoom: -3) == 90 && PlaceIndex.cellDegrees(zoom: 99) == PlaceIndex.cellDegrees(zoom: 28))
        #expect(index.clusters(zoom: 0).map(\.count) == [3, 2, 1])
    }

    @Test("places with invalid coordinates are left out of every answer and listed, not trapped on")
    func excluded() throws {
        let places = [
            Place(name: "ok", coordinate: Coordinate(latitude: 1, longitude: 1)),
            Place(name: "nan", coordinate: Coordinate(latitude: .nan, longitude: 1)),
            Place(name: "north", coordinate: Coordinate(latitude: 91, longitude: 1)),
            Place(name: "ok too", coordinate: Coordinate(latitude: 1, longitude: 1.001)),
            Place(name: "inf", coordinate: Coordinate(latitude: 0, longitude: .infinity)),
        ]
        let index = PlaceIndex(places)
        #expect(index.excluded == [1, 2, 4])
        #expect(index.count == 5 && index.indexedCount == 2)
        let origin = Coordinate(latitude: 1, longitude: 1)
        #expect(index.nearest(to: origin, k: 10).map(\.index) == [0, 3])
        #expect(index.within(.kilometres(20_000), of: origin).map(\.index) == [0, 3])
        #expect(index.inBox(.world).map(\.index).sorted() == [0, 3])
        #expect(index.named("n", limit: 10).map(\.index) == [])
        #expect(index.named("o", limit: 10).map(\.index) == [0, 3])
        #expect(index.clusters(cellDegrees: 10).map(\.count) == [2])
    }

    @Test("distances equal the textbook haversine formula and bearings the textbook formula, to rounding")
    func geodesyAgreesWithHaversine() {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<10_000 {
            let a = Coordinate(latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng))
            let near = Bool.random(using: &rng)
            let b = near
                ? Coordinate(latitude: max(-90, min(90, a.latitude + .random(in: -0.01...0.01, using: &rng))),
                             longitude: max(-180, min(180, a.longitude + .random(in: -0.01...0.01, using: &rng))))
                : Coordinate(latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng))
            let (phi1, phi2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
            let dLambda = (b.longitude - a.longitude) * .pi / 180
            let h = pow(sin((phi2 - phi1) / 2), 2) + cos(phi1) * cos(phi2) * pow(sin(dLambda / 2), 2)
            let haversine = 2 * Geodesy.earthRadius * asin(min(1, h.squareRoot()))
            #expect(abs(Geodesy.distance(from: a, to: b) - haversine) < 1e-6 + haversine * 1e-12, "\(a) → \(b)")
            let textbook = atan2(sin(dLambda) * cos(phi2), cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)) * 180 / .pi
            let expected = textbook < 0 ? textbook + 360 : textbook
            var diff = abs(Geodesy.bearing(from: a, to: b) - expected)
            diff = min(diff, 360 - diff)
            // Near the poles bearings are ill-conditioned in both formulas; elsewhere they agree closely.
            if abs(a.latitude) < 89, haversine > 1 { #expect(diff < 1e-6, "\(a) → \(b): \(diff)°") }
        }
        #expect(Geodesy.bearing(from: Self.clapham.coordinate, to: Self.clapham.coordinate) == 0)
    }
}
