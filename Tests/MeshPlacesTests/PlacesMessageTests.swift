import Foundation
@testable import MeshPlaces
import MeshSession
import Logging
import SwiftProtobuf
import Places
import Testing

/// The places messages of PROTOCOL.md §14: every limit refused with a message naming it, and
/// values surviving a round trip through their payloads.
@Suite("places messages")
struct PlacesMessageTests {
    static let alice = try! PeerID(id: NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c"), displayName: "alice")
    static let london = Coordinate(latitude: 51.5074, longitude: -0.1278)
    static let now = Date(timeIntervalSince1970: 1_795_344_648)

    @Test("a lookup round-trips through its payload; radius, limit, text and position out of range are refused by name")
    func lookupLimits() throws {
        let lookup = try PlaceLookup(centre: Self.london, radius: .kilometres(2), text: "pizza", limit: 7)
        #expect(try PlaceLookup(validating: lookup.payload) == lookup)
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Self.london, radius: .metres(0.5)) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Self.london, radius: .kilometres(100.001)) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Self.london, radius: .metres(.nan)) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Self.london, radius: .kilometres(1), limit: 51) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Self.london, radius: .kilometres(1), limit: 0) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(centre: Coordinate(latitude: 91, longitude: 0), radius: .kilometres(1)) }
        do {
            _ = try PlaceLookup(centre: Self.london, radius: .kilometres(1), text: String(repeating: "x", count: 129))
            Issue.record("a 129-byte text was accepted")
        } catch {
            #expect(error.message.contains("129 bytes"))
        }
        var bad = lookup.payload
        bad.queryID = Data([1, 2, 3])
        #expect(throws: PlacesInputError("lookup id has 3 bytes, expected 16")) { try PlaceLookup(validating: bad) }
    }

    @Test("an answer with more than 50 places, an invalid position or a long name is refused")
    func answerLimits() throws {
        let hit = PlaceHit(name: "Pizza Express", coordinate: Coordinate(latitude: 51.508, longitude: -0.128), placeSet: "london")
        let answer = PlaceAnswer(id: .random(), hits: [hit], total: 3)
        #expect(try PlaceAnswer(validating: answer.payload) == answer)
        var many = answer.payload
        many.hits = Array(repeating: many.hits[0], count: 51)
        #expect(throws: PlacesInputError.self) { try PlaceAnswer(validating: many) }
        var far = answer.payload
        far.hits[0].latitude = 123
        #expect(throws: PlacesInputError.self) { try PlaceAnswer(validating: far) }
        var long = answer.payload
        long.hits[0].name = String(repeating: "é", count: 129)
        #expect(throws: PlacesInputError.self) { try PlaceAnswer(validating: long) }
        let refused = PlaceAnswer(id: .random(), hits: [], total: 0, refused: "rate limited")
        #expect(try PlaceAnswer(validating: refused.payload).refused == "rate limited")
    }

    @Test("a pin round-trips; label, note, lifetime and creation time out of range are refused by name")
    func pinLimits() throws {
        let pin = try SharedPin(author: Self.alice, coordinate: Self.london, label: "  Meet here ", note: "gates", createdAt: Self.now)
        #expect(pin.label == "Meet here")
        #expect(pin.expiresAt == Self.now.addingTimeInterval(24 * 3600))
        let back = try SharedPin(validating: pin.payload, author: Self.alice, now: Self.now)
        #expect(back == pin)
        #expect(throws: PlacesInputError.self) { try SharedPin(author: Self.alice, coordinate: Self.london, label: "") }
        #expect(throws: PlacesInputError.self) { try SharedPin(author: Self.alice, coordinate: Self.london, label: String(repeating: "a", count: 65)) }
        #expect(throws: PlacesInputError.self) {
            try SharedPin(author: Self.alice, coordinate: Self.london, label: "x", note: String(repeating: "n", count: 257))
        }
        #expect(throws: PlacesInputError.self) { try SharedPin(author: Self.alice, coordinate: Self.london, label: "x", lifetime: .seconds(30)) }
        #expect(throws: PlacesInputError.self) {
            try SharedPin(author: Self.alice, coordinate: Self.london, label: "x", lifetime: .seconds(8 * 24 * 3600))
        }
        var eternal = pin.payload
        eternal.expiresAtMs = eternal.createdAtMs + 8 * 24 * 3_600_000
        #expect(throws: PlacesInputError.self) { try SharedPin(validating: eternal, author: Self.alice, now: Self.now) }
        var future = pin.payload
        future.createdAtMs += 2 * 24 * 3_600_000
        future.expiresAtMs += 2 * 24 * 3_600_000
        #expect(throws: PlacesInputError.self) { try SharedPin(validating: future, author: Self.alice, now: Self.now) }
        var shortID = pin.payload
        shortID.pinID = Data([7])
        #expect(throws: PlacesInputError("pin id has 1 bytes, expected 16")) { try SharedPin(validating: shortID, author: Self.alice, now: Self.now) }
    }

    @Test("data-set adverts: a bad name or box is refused; covers() is antimeridian-aware with inclusive edges")
    func placeSets() throws {
        let fiji = PlaceSetInfo(name: "fiji", count: 10, bounds: BoundingBox(south: -21, west: 176, north: -12, east: -178))
        #expect(try PlaceSetInfo(validating: fiji.payload) == fiji)
        #expect(fiji.covers(Coordinate(latitude: -17, longitude: 179.9)))
        #expect(fiji.covers(Coordinate(latitude: -17, longitude: -179)))
        #expect(fiji.covers(Coordinate(latitude: -12, longitude: -178)))
        #expect(!fiji.covers(Coordinate(latitude: -17, longitude: 0)))
        #expect(!fiji.covers(Coordinate(latitude: -11.9, longitude: 177)))
        var unnamed = fiji.payload
        unnamed.name = ""
        #expect(throws: PlacesInputError.self) { try PlaceSetInfo(validating: unnamed) }
        var upsideDown = fiji.payload
        upsideDown.south = 10
        #expect(throws: PlacesInputError.self) { try PlaceSetInfo(validating: upsideDown) }
    }

    @Test("§14.1 attachment: 8 sets of the longest names fit 1,024 bytes; invalid and ninth sets are left out; the receiver takes 8 valid ones")
    func placeSetsAttachment() throws {
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let box = BoundingBox(south: -21, west: 176, north: -12, east: -178)
        let longest = (0..<10).map { PlaceSetInfo(name: String(repeating: "\($0)", count: 64), count: Int(UInt32.max), bounds: box) }
        let data = try #require(PlaceSetInfo.attachment(longest, logger: logger))
        #expect(data.count <= Session.maxChannelAttachment)
        #expect(PlaceSetInfo.sets(fromAttachment: data) == Array(longest.prefix(8)))
        let invalid = PlaceSetInfo(name: String(repeating: "x", count: 65), count: 1, bounds: box)
        let kept = try #require(PlaceSetInfo.attachment([invalid, longest[0]], logger: logger))
        #expect(PlaceSetInfo.sets(fromAttachment: kept) == [longest[0]])
        #expect(PlaceSetInfo.attachment([invalid], logger: logger) == nil)
        // A hostile attachment: 9 sets, one invalid, and garbage.
        var hostile = PlaceSetsPayload()
        var bad = longest[1].payload
        bad.north = 95
        hostile.sets = [bad] + longest.prefix(9).map(\.payload)
        #expect(PlaceSetInfo.sets(fromAttachment: try hostile.serializedData()) == Array(longest.prefix(7)))
        #expect(PlaceSetInfo.sets(fromAttachment: Data([0xff, 0x01])).isEmpty && PlaceSetInfo.sets(fromAttachment: nil).isEmpty)
    }

    @Test("GeoJSON export: a FeatureCollection of Points in [lon, lat] order with the pin's fields")
    func geoJSON() throws {
        let pin = try SharedPin(author: Self.alice, coordinate: Self.london, label: "Meet \"here\"", note: "gates", createdAt: Self.now)
        let document = try #require(try JSONSerialization.jsonObject(with: PinsGeoJSON.document([pin])) as? [String: Any])
        #expect(document["type"] as? String == "FeatureCollection")
        let feature = try #require((document["features"] as? [[String: Any]])?.first)
        #expect((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [-0.1278, 51.5074])
        let properties = try #require(feature["properties"] as? [String: Any])
        #expect(properties["label"] as? String == "Meet \"here\"")
        #expect(properties["author"] as? String == "alice")
        #expect(properties["expires_at"] as? String == "2026-11-23T10:50:48Z")
        #expect(throws: PlacesInputError.self) { try PinsGeoJSON.write([pin], to: "/nonexistent-dir/pins.geojson") }
    }
}
