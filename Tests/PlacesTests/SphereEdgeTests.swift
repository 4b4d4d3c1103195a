import Foundation
import Places

import Testing

/// The edges of the sphere and of the alphabet (README "Places": bearings, boxes, folding).
@Suite("places at the edges")
struct SphereEdgeTests {
    // MARK: Bearings

    @Test("displayed bearings stay in [0, 360): a hair west of north rounds to 0, never 360")
    func roundedBearings() {
        #expect(Geodesy.roundedBearing(359.96, fractionDigits: 1) == 0)
        #expect(Geodesy.roundedBearing(359.996, fractionDigits: 2) == 0)
        #expect(Geodesy.roundedBearing(359.94, fractionDigits: 1) == 359.9)
        #expect(Geodesy.roundedBearing(0.04, fractionDigits: 1) == 0)
        #expect(Geodesy.roundedBearing(.nan, fractionDigits: 1) == 0)
        let origin = Coordinate(latitude: 51.5, longitude: -0.1)
        let hairWest = Coordinate(latitude: 51.6, longitude: -0.1 - 1e-9)
        let bearing = Geodesy.bearing(from: origin, to: hairWest)
        #expect(bearing >= 0 && bearing < 360)
        #expect(Geodesy.roundedBearing(bearing, fractionDigits: 2) < 360)
    }

    @Test("a place on the query point, even written with the other name of its meridian, has bearing 0")
    func samePoint() {
        #expect(Geodesy.bearing(from: Coordinate(latitude: -15, longitude: 180), to: Coordinate(latitude: -15, longitude: -180)) == 0)
        #expect(Geodesy.bearing(from: Coordinate(latitude: 10, longitude: 20), to: Coordinate(latitude: 10, longitude: 20)) == 0)
        var rng = SeededGenerator(seed: 18)
        for _ in 0..<10_000 {
            let a = Coordinate(latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            let b = Coordinate(latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            let bearing = Geodesy.bearing(from: a, to: b)
            #expect(bearing >= 0 && bearing < 360, "\(a) → \(b): \(bearing)")
        }
    }

    // MARK: Boxes

    static let edgePlaces: [Place] = [
        Place(name: "east180", coordinate: Coordinate(latitude: -15, longitude: 180)),
        Place(name: "west180", coordinate: Coordinate(latitude: -15, longitude: -180)),
        Place(name: "south pole", coordinate: Coordinate(latitude: -90, longitude: 45)),
        Place(name: "north pole", coordinate: Coordinate(latitude: 90, longitude: -120)),
        Place(name: "suva", coordinate: Coordinate(latitude: -18.14, longitude: 178.44)),
        Place(name: "apia", coordinate: Coordinate(latitude: -13.83, longitude: -171.76)),
        Place(name: "greenwich", coordinate: Coordinate(latitude: 51.48, longitude: 0)),
    ]

    static func names(_ index: PlaceIndex, _ box: String) throws -> Set<String> {
        Set(index.inBox(try BoundingBox(parsing: box)).map(\.place.name))
    }

    @Test("longitudes 180 and -180 are one meridian, in boxes that start or end at either")
    func antimeridian() throws {
        let index = PlaceIndex(Self.edgePlaces)
        #expect(try Self.names(index, "-20,-180,-10,-179") == ["east180", "west180"])
        #expect(try Self.names(index, "-20,179,-10,180") == ["east180", "west180"])
        #expect(try Self.names(index, "-20,170,-10,-170") == ["east180", "west180", "suva", "apia"])
        #expect(try Self.names(index, "-20,-180,-10,180") == ["east180", "west180", "suva", "apia"])
        #expect(try Self.names(index, "-20,-179,-10,-175").isEmpty)
        #expect(try Self.names(index, "-20,175,-10,179.9") == ["suva"])
        #expect(try BoundingBox(parsing: "-20,-180,-10,-179").contains(Coordinate(latitude: -15, longitude: 180)))
    }

    @Test("a pole is every longitude: a box reaching it holds a pole place stored with any longitude")
    func poles() throws {
        let index = PlaceIndex(Self.edgePlaces)
        #expect(try Self.names(index, "-90,-10,-80,10") == ["south pole"])
        #expect(try Self.names(index, "80,0,90,10") == ["north pole"])
        #expect(try Self.names(index, "-89.999,-180,-80,180").isEmpty)
        #expect(try Self.names(index, "-90,170,-80,-170") == ["south pole"])
        #expect(try Self.names(index, "-90,-180,90,180").count == Self.edgePlaces.count)
    }

    @Test("boxes with edges at ±180 and ±90 agree with a brute-force check of every place")
    func oracle() throws {
        var rng = SeededGenerator(seed: 1818)
        var places = Self.edgePlaces
        for i in 0..<3_000 {
            let lat = [-90, 90, Double.random(in: -90...90, using: &rng)][i % 3 == 0 ? Int.random(in: 0...2, using: &rng) : 2]
            let lon = [-180, 180, Double.random(in: -180...180, using: &rng)][i % 4 == 0 ? Int.random(in: 0...2, using: &rng) : 2]
            places.append(Place(name: "p\(i)", coordinate: Coordinate(latitude: lat, longitude: lon)))
        }
        let index = PlaceIndex(places)
        let edges: [Double] = [-180, 180, -179.5, 179.5, 0]
        for _ in 0..<300 {
            let south = [-90, Double.random(in: -90...0, using: &rng)].randomElement(using: &rng) ?? -90
            let north = [90, Double.random(in: 0...90, using: &rng)].randomElement(using: &rng) ?? 90
            let west = (edges + [Double.random(in: -180...180, using: &rng)]).randomElement(using: &rng) ?? 0
            let east = (edges + [Double.random(in: -180...180, using: &rng)]).randomElement(using: &rng) ?? 0
            let box = BoundingBox(south: south, west: west, north: north, east: east)
            // Independent check: on the sphere, not in the box's longitude arithmetic.
            func inside(_ c: Coordinate) -> Bool {
                guard c.latitude >= south && c.latitude <= north else { return false }
                if abs(c.latitude) == 90 { return true }
                let lons = c.longitude == 180 || c.longitude == -180 ? [-180.0, 180] : [c.longitude]
                return lons.contains { lon in west <= east ? (west...east).contains(lon) : (lon >= west || lon <= east) }
            }
            let expected = Set(places.filter { inside($0.coordinate) }.map(\.name))
            let found = index.inBox(box).map(\.place.name)
            #expect(found.count == Set(found).count, "\(box): a place returned twice")
            #expect(Set(found) == expected, "\(box)")
        }
    }

    // MARK: Folding

    @Test("letters of their own and typographic punctuation fold the way a plain keyboard types them",
          arguments: [("Ærøskøbing", "aeroskobing"), ("Łódź", "lodz"), ("Đà Nẵng", "da nang"), ("Sant’Antioco", "sant'antioco"),
                      ("Þórshöfn", "thorshofn"), ("Œuvre", "oeuvre"), ("Saint‐Denis", "saint-denis"), ("Zürich", "zurich"),
                      ("Straße", "strasse"), ("Ðakovo", "dakovo"), ("Sant—Angelo", "sant-angelo"), ("Iğdır", "igdir")])
    func folding(_ name: String, _ key: String) {
        #expect(PlaceIndex.searchKey(for: name) == key)
        let index = PlaceIndex([Place(name: name, coordinate: Coordinate(latitude: 1, longitude: 2))])
        #expect(index.named(key, limit: 5).map(\.place.name) == [name])
        #expect(index.named(name, limit: 5).map(\.place.name) == [name])
    }
}
