import Foundation
import Places
import Testing

/// Distances, compass points, coordinates and boxes as people write and read them.
@Suite("Distances, compass points, coordinates and boxes as text")
struct TextFormatTests {
    @Test("distances parse with or without a space, in m, km, mi and ft; a bare number is metres", arguments: [
        ("5mi", 8046.72), ("5 mi", 8046.72), ("5 MILES", 8046.72), ("1 mile", 1609.344), ("500m", 500), ("500 metres", 500),
        ("2.5km", 2500), ("2.5 Kilometers", 2500), ("5", 5), (" 7.25 ", 7.25), (".5km", 500), ("100ft", 30.48), ("1 foot", 0.3048),
        ("0", 0), ("3.", 3),
    ])
    func parseDistance(text: String, metres: Double) throws {
        let d = try Distance(parsing: text)
        #expect(abs(d.metres - metres) < 1e-9, "\(text) → \(d.metres)")
    }

    @Test("a distance that cannot be read is an error naming the text and what was wrong", arguments: [
        ("5 parsecs", "has unknown unit \"parsecs\""), ("", "the distance is empty"), ("   ", "the distance is empty"),
        ("-5km", "is negative"), ("km", "does not start with a number"), ("1.2.3m", "does not start with a number"),
        ("5e3m", "has unknown unit \"e3m\""), (String(repeating: "9", count: 400), "is too large"), ("five", "does not start with a number"),
    ])
    func badDistance(text: String, fragment: String) {
        do {
            let d = try Distance(parsing: text)
            Issue.record("\(text.debugDescription) parsed as \(d)")
        } catch {
            #expect(error.code == .badDistance)
            #expect(error.message.contains(fragment), "\(error.message)")
            #expect(error.message.contains("m, km, mi or ft"), "\(error.message)")
        }
    }

    @Test("distances format as people write them: m below 1 km, one decimal below 100, whole above; feet below 0.1 mi")
    func formatDistance() {
        let metric: [(Double, String)] = [
            (0, "0 m"), (0.4, "0 m"), (12.5, "13 m"), (999.4, "999 m"), (999.5, "1.0 km"), (2_149, "2.1 km"), (2_160, "2.2 km"),
            (99_940, "99.9 km"), (99_950, "100 km"), (12_742_000, "12742 km"),
        ]
        for (metres, text) in metric { #expect(Distance(metres: metres).formatted() == text, "\(metres)") }
        let imperial: [(Double, String)] = [
            (0, "0 ft"), (30.48, "100 ft"), (160.9, "528 ft"), (161, "0.1 mi"), (3_379.6, "2.1 mi"), (160_934.4, "100 mi"),
        ]
        for (metres, text) in imperial { #expect(Distance(metres: metres).formatted(units: .imperial) == text, "\(metres)") }
        #expect(Distance(metres: .infinity).formatted() == "inf m")
        #expect(Distance(metres: -2_500).formatted() == "-2.5 km")
    }

    @Test("compass points: sectors centred on each point, borders go clockwise, bearings read modulo 360")
    func compass() {
        #expect(CompassPoint(bearing: 0) == .north)
        #expect(CompassPoint(bearing: 22.4999) == .north)
        #expect(CompassPoint(bearing: 22.5) == .northeast)
        #expect(CompassPoint(bearing: 337.5) == .north)
        #expect(CompassPoint(bearing: 337.4999) == .northwest)
        #expect(CompassPoint(bearing: 359.999) == .north)
        #expect(CompassPoint(bearing: -45) == .northwest)
        #expect(CompassPoint(bearing: 720 + 90) == .east)
        #expect(CompassPoint(bearing: .nan) == .north)
        #expect(CompassPoint(bearing: 11.25, divisions: .sixteen) == .northNortheast)
        #expect(CompassPoint(bearing: 11.2, divisions: .sixteen) == .north)
        #expect(CompassPoint(bearing: 200, divisions: .sixteen).abbreviation == "SSW")
        #expect(CompassPoint(bearing: 44.9, divisions: .four) == .north)
        #expect(CompassPoint(bearing: 45, divisions: .four) == .east)
        #expect(CompassPoint.allCases.map(\.abbreviation).joined(separator: " ") == "N NNE NE ENE E ESE SE SSE S SSW SW WSW W WNW NW NNW")
        #expect(CompassPoint.southwest.name == "southwest" && CompassPoint.southwest.bearing == 225)
        // Every point's own bearing maps back to it at each resolution that has it.
        for point in CompassPoint.allCases {
            #expect(CompassPoint(bearing: point.bearing, divisions: .sixteen) == point)
            if point.rawValue % 2 == 0 { #expect(CompassPoint(bearing: point.bearing) == point) }
        }
    }

    @Test("coordinates parse as LAT,LON and errors name the part that is wrong")
    func coordinates() throws {
        #expect(try Coordinate(parsing: "51.4613,-0.1383") == Coordinate(latitude: 51.4613, longitude: -0.1383))
        #expect(try Coordinate(parsing: " -33.9 , 151.2 ") == Coordinate(latitude: -33.9, longitude: 151.2))
        let bad: [(String, String)] = [
            ("51.5", "need 2"), ("a,1", "latitude \"a\""), ("1,", "longitude \"\""), ("91,0", "latitude 91 in \"91,0\" is outside -90...90"),
            ("0,181", "longitude 181 in \"0,181\" is outside -180...180"), ("1,2,3", "has 3"), ("nan,0", "latitude \"nan\""),
        ]
        for (text, fragment) in bad {
            #expect {
                try Coordinate(parsing: text)
            } throws: { error in
                guard let e = error as? PlacesError else { return false }
                return e.code == .badCoordinate && e.message.contains(fragment)
            }
        }
    }

    @Test("boxes parse as S,W,N,E (west > east crosses the antimeridian) and contain what they should")
    func boxes() throws {
        let fiji = try BoundingBox(parsing: "-20,170,-10,-170")
        #expect(fiji.crossesAntimeridian)
        #expect(fiji.contains(Coordinate(latitude: -18.1, longitude: 178.4)))
        #expect(fiji.contains(Coordinate(latitude: -13.8, longitude: -171.8)))
        #expect(fiji.contains(Coordinate(latitude: -15, longitude: 180)) && fiji.contains(Coordinate(latitude: -15, longitude: -180)))
        #expect(!fiji.contains(Coordinate(latitude: -15, longitude: 0)))
        #expect(!fiji.contains(Coordinate(latitude: -9.99, longitude: 178)))
        #expect(fiji.centre == Coordinate(latitude: -15, longitude: 180))
        let london = try BoundingBox(parsing: "51.4, -0.2, 51.6, 0.1")
        #expect(!london.crossesAntimeridian && london.isValid)
        #expect(london.contains(Coordinate(latitude: 51.4, longitude: 0.1)))  // edges are inclusive
        #expect(BoundingBox.world.contains(Coordinate(latitude: 90, longitude: -180)))
        let bad: [(String, String)] = [
            ("1,2,3", "need 4"), ("1,2,x,4", "north edge \"x\""), ("91,0,92,1", "south edge 91.0"), ("0,-181,1,0", "west edge -181.0"),
            ("10,0,5,1", "south edge 10.0 is north of the north edge 5.0"),
        ]
        for (text, fragment) in bad {
            #expect {
                try BoundingBox(parsing: text)
            } throws: { error in
                guard let e = error as? PlacesError else { return false }
                return e.code == .badBox && e.message.contains(fragment)
            }
        }
    }

    @Test("the box around points crosses the antimeridian only when they do; global data gets the whole globe")
    func enclosingBox() {
        func box(_ points: [(Double, Double)]) -> BoundingBox? {
            BoundingBox(enclosing: points.map { Coordinate(latitude: $0.0, longitude: $0.1) })
        }
        #expect(box([]) == nil)
        #expect(box([(51.5, -0.1)]) == BoundingBox(south: 51.5, west: -0.1, north: 51.5, east: -0.1))
        #expect(box([(49.9, -8.1), (60.6, 1.8), (51.5, -0.1)]) == BoundingBox(south: 49.9, west: -8.1, north: 60.6, east: 1.8))
        // Fiji, Tonga and Samoa: across 180°.
        #expect(box([(-18.1, 178.4), (-21.1, -175.2), (-13.8, -171.8), (-16.5, 179.9)])
                == BoundingBox(south: -21.1, west: 178.4, north: -13.8, east: -171.8))
        // Spread over more than half the longitudes: the whole globe.
        #expect(box([(0, -170), (10, -50), (20, 70), (30, 170)]) == .world)
        #expect(box([(0, -90), (0, 90)]) == BoundingBox(south: 0, west: -90, north: 0, east: 90))  // a tie keeps the box off 180°
        #expect(box([(.nan, 0), (95, 0), (1, 2)]) == BoundingBox(south: 1, west: 2, north: 1, east: 2))
    }
}
