import Foundation
import Places
import Testing

@Suite("PlaceIndex")
struct PlaceIndexTests {
    private static let crowded = Coordinate(latitude: 51.3746, longitude: -0.0951)

    /// 23 venues on one postcode centroid (as in the 2020 UK set) plus a few neighbours.
    private static func crowdedIndex() -> PlaceIndex {
        var places = (0..<23).map { i in
            Place(name: "Venue \(String(format: "%02d", (i * 7) % 23))", coordinate: crowded)
        }
        places.append(Place(name: "North", coordinate: Coordinate(latitude: 51.3846, longitude: -0.0951)))
        places.append(Place(name: "East", coordinate: Coordinate(latitude: 51.3746, longitude: -0.0851)))
        places.append(Place(name: "Venue 00", coordinate: crowded))
        return PlaceIndex(places)
    }

    @Test("23 places on one point: nearest returns them all, tied by name then index")
    func crowdedPoint() {
        let index = Self.crowdedIndex()
        let found = index.nearest(to: Self.crowded, k: 30)
        #expect(found.count == 26)
        let tied = Array(found.prefix(24))
        #expect(tied.allSatisfy { $0.distance.metres == 0 && $0.bearing == 0 })
        #expect(tied.map(\.place.name) == tied.map(\.place.name).sorted())
        #expect(tied.prefix(2).map(\.index) == [0, 25])  // two "Venue 00": lower index first
        #expect(found.suffix(2).map(\.place.name) == ["East", "North"])
        #expect(index.nearest(to: Self.crowded, k: 5).map(\.index) == Array(found.prefix(5)).map(\.index))
    }

    @Test("distances and bearings: known values, units, radius inclusive")
    func geodesy() {
        let london = Coordinate(latitude: 51.5074, longitude: -0.1278)
        let paris = Coordinate(latitude: 48.8566, longitude: 2.3522)
        #expect(abs(Geodesy.distance(from: london, to: paris) - 343_557) < 1)
        #expect(abs(Geodesy.bearing(from: london, to: paris) - 148.1) < 0.1)
        #expect(Geodesy.bearing(from: paris, to: Coordinate(latitude: 60, longitude: 2.3522)) == 0)
        #expect(abs(Geodesy.bearing(from: london, to: Coordinate(latitude: 51.5074, longitude: -1)) - 270.3) < 0.1)
        #expect(Distance.kilometres(1.5).metres == 1500)
        #expect(abs(Distance.miles(1).metres - 1609.344) < 1e-9)
        let index = Self.crowdedIndex()
        let north = index.places[23]
        let d = Geodesy.distance(from: Self.crowded, to: north.coordinate)
        #expect(index.within(.metres(d), of: Self.crowded).map(\.place.name).contains("North"))
        #expect(!index.within(.metres(d.nextDown), of: Self.crowded).map(\.place.name).contains("North"))
        #expect(index.within(.miles(0.5), of: Self.crowded).count == 25)  // East at 695 m; North at 1112 m is beyond 805 m
        #expect(index.within(.metres(-1), of: Self.crowded).isEmpty)
    }

    @Test("boxes: ordinary, across the antimeridian, inclusive edges, empty when south > north")
    func boxes() {
        let places = [
            Place(name: "Suva", coordinate: Coordinate(latitude: -18.14, longitude: 178.44)),
            Place(name: "Apia", coordinate: Coordinate(latitude: -13.83, longitude: -171.76)),
            Place(name: "Edge", coordinate: Coordinate(latitude: -10, longitude: 180)),
            Place(name: "Far", coordinate: Coordinate(latitude: -15, longitude: 0)),
        ]
        let index = PlaceIndex(places)
        let wrapped = index.inBox(south: -20, west: 170, north: -10, east: -170)
        #expect(Set(wrapped.map(\.place.name)) == ["Suva", "Apia", "Edge"])
        let centre = PlaceIndex.boxCentre(south: -20, west: 170, north: -10, east: -170)
        #expect(centre == Coordinate(latitude: -15, longitude: 180))
        #expect(wrapped.map(\.distance.metres) == wrapped.map(\.distance.metres).sorted())
        #expect(index.inBox(south: -20, west: -10, north: -10, east: 10).map(\.place.name) == ["Far"])
        #expect(index.inBox(south: -10, west: 180, north: -10, east: 180).map(\.place.name) == ["Edge"])
        #expect(index.inBox(south: 0, west: -180, north: -10, east: 180).isEmpty)
        let fromSuva = index.inBox(south: -90, west: -180, north: 90, east: 180, from: places[0].coordinate)
        #expect(fromSuva.first?.place.name == "Suva")
        #expect(fromSuva.count == 4)
    }

    @Test("name search folds case and diacritics, prefix before substring, by distance near a point")
    func names() {
        let places = [
            Place(name: "Zürich", coordinate: Coordinate(latitude: 47.37, longitude: 8.54)),
            Place(name: "  ZURICH  Airport", coordinate: Coordinate(latitude: 47.45, longitude: 8.56)),
            Place(name: "Bad Zurzach", coordinate: Coordinate(latitude: 47.59, longitude: 8.29)),
            Place(name: "Neu-Zürich", coordinate: Coordinate(latitude: 47.0, longitude: 8.0)),
        ]
        let index = PlaceIndex(places)
        #expect(PlaceIndex.searchKey(for: "  ZÜRICH\tAirport ") == "zurich airport")
        let plain = index.named("zuri", limit: 10)
        #expect(plain.map(\.index) == [0, 1, 3])
        #expect(plain.map(\.kind) == [.prefix, .prefix, .substring])
        let near = index.named("ZUR", near: Coordinate(latitude: 47.45, longitude: 8.56), limit: 10)
        #expect(near.map(\.index) == [1, 0, 2, 3])
        #expect(index.named("zur", near: places[0].coordinate, limit: 1).map(\.index) == [0])
        #expect(index.named("   ", limit: 10).isEmpty)
        #expect(index.named("xyz", limit: 10).isEmpty)
    }

    @Test("an empty index answers every query with nothing")
    func empty() {
        let index = PlaceIndex([])
        let p = Coordinate(latitude: 0, longitude: 0)
        #expect(index.nearest(to: p, k: 3).isEmpty)
        #expect(index.within(.kilometres(100), of: p).isEmpty)
        #expect(index.inBox(south: -1, west: -1, north: 1, east: 1).isEmpty)
        #expect(index.named("a", limit: 3).isEmpty)
    }
}
