import Foundation
@testable import MeshPlaces
import MeshSession
import MeshWire
import Places
import Testing

/// Answering lookups from local data, merging peers' answers, and the query rate limits.
@Suite("local answers, merging and rate limits")
struct LocalPlacesTests {
    static let london = Coordinate(latitude: 51.5074, longitude: -0.1278)
    static let places = [
        Place(name: "Pizza Express", coordinate: Coordinate(latitude: 51.5080, longitude: -0.1280)),
        Place(name: "PIZZA hut", coordinate: Coordinate(latitude: 51.5100, longitude: -0.1200)),
        Place(name: "Café Nero", coordinate: Coordinate(latitude: 51.5070, longitude: -0.1300)),
        Place(name: "Far Pizza", coordinate: Coordinate(latitude: 51.6000, longitude: -0.1000)),
    ]

    static func local(_ sets: [(String, [Place])]) -> LocalPlaces {
        LocalPlaces(sets.map { name, places in
            .init(info: PlaceSetInfo(name: name, count: places.count, bounds: BoundingBox(south: 51, west: -1, north: 52, east: 1)), index: PlaceIndex(places))
        })
    }

    @Test("an answer holds the places within the radius whose folded names contain the text, nearest first, with the total before the limit")
    func answer() throws {
        let local = Self.local([("london", Self.places)])
        let pizza = local.answer(try PlaceLookup(centre: Self.london, radius: .kilometres(2), text: "PIZZA"))
        #expect(pizza.hits.map(\.name) == ["Pizza Express", "PIZZA hut"])
        #expect(pizza.total == 2)
        let cafe = local.answer(try PlaceLookup(centre: Self.london, radius: .kilometres(2), text: "cafe"))
        #expect(cafe.hits.map(\.name) == ["Café Nero"])
        let limited = local.answer(try PlaceLookup(centre: Self.london, radius: .kilometres(20), limit: 2))
        #expect(limited.hits.map(\.name) == ["Pizza Express", "Café Nero"])
        #expect(limited.total == 4)
        #expect(local.covers(Self.london))
        #expect(!local.covers(Coordinate(latitude: 40, longitude: 0)))
    }

    @Test("overlapping data sets count a place once; names are cut to 256 bytes at a character boundary")
    func duplicatesAndLongNames() throws {
        let long = Place(name: String(repeating: "é", count: 200), coordinate: Self.london)
        let local = Self.local([("2020", Self.places + [long]), ("2021", Self.places)])
        let answer = local.answer(try PlaceLookup(centre: Self.london, radius: .kilometres(2)))
        #expect(answer.hits.count == 4)
        #expect(answer.hits[0].name.utf8.count == 256)
        #expect(Set(answer.hits.map(\.placeSet)) == ["2020"])
    }

    @Test("merging answers: distances and bearings from the lookup's point, a peer's place beyond the radius left out, duplicates across peers once")
    func merge() throws {
        let lookup = try PlaceLookup(centre: Self.london, radius: .kilometres(2), text: "")
        let bob = try PeerID(id: .random(), displayName: "bob")
        let carol = try PeerID(id: .random(), displayName: "carol")
        let near = PlaceHit(name: "Pizza Express", coordinate: Coordinate(latitude: 51.5080, longitude: -0.1280), placeSet: "a")
        let lie = PlaceHit(name: "Far Pizza", coordinate: Coordinate(latitude: 51.6000, longitude: -0.1000), placeSet: "a")
        let other = PlaceHit(name: "Café Nero", coordinate: Coordinate(latitude: 51.5070, longitude: -0.1300), placeSet: "b")
        let result = PlaceService.merge(lookup, [(bob, 1, PlaceAnswer(id: lookup.id, hits: [near, lie], total: 2)),
                                                 (carol, 2, PlaceAnswer(id: lookup.id, hits: [other, near], total: 2))], sources: [])
        #expect(result.hits.map(\.name) == ["Pizza Express", "Café Nero"])
        #expect(result.hits.map(\.source) == [bob, carol])
        let first = result.hits[0]
        #expect(abs(first.distance.metres - Geodesy.distance(from: Self.london, to: near.coordinate)) < 1e-9)
        #expect(abs(first.bearing - Geodesy.bearing(from: Self.london, to: near.coordinate)) < 1e-9)
    }

    @Test("rate limits: a burst of 10 per node then 5 per second; 50 per second in all; refusals name the limit")
    func rateLimits() {
        var limiter = QueryRateLimiter()
        let start = ContinuousClock.now
        let a = NodeID.random(), b = NodeID.random()
        for _ in 0..<10 { #expect(limiter.admit(a, now: start) == nil) }
        #expect(limiter.admit(a, now: start)?.contains("from one node") == true)
        #expect(limiter.admit(b, now: start) == nil)
        #expect(limiter.admit(a, now: start + .milliseconds(200)) == nil)
        #expect(limiter.admit(a, now: start + .milliseconds(200)) != nil)

        var total = QueryRateLimiter()
        var refused = 0
        for _ in 0..<60 where total.admit(.random(), now: start) != nil { refused += 1 }
        #expect(refused == 10)
        #expect(total.admit(.random(), now: start + .seconds(1)) == nil)
    }
}
