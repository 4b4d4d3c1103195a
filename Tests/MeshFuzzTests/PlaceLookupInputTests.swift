import Foundation
import MeshPlaces
import MeshSession
import MeshWire
import Places
import Testing

/// `PlaceLookup(validating:)` and `SharedPin(validating:)` on numbers no sender should write: each
/// is refused with a message that names the value, and none traps (issue 13's remote crash was a
/// `Double` to `Int` conversion in the radius's error message).
@Suite("hostile place numbers")
struct PlaceLookupInputTests {
    static func query(radius: Double, latitude: Double = 51.5, limit: UInt32 = 20) -> PlaceQueryPayload {
        var query = PlaceQueryPayload()
        query.queryID = Data(repeating: 1, count: 16)
        query.latitude = latitude
        query.longitude = -0.12
        query.radiusM = radius
        query.limit = limit
        return query
    }

    @Test("a radius beyond Int's range, or not finite, is refused naming it", arguments: [
        (1e19, "radius 1e+19 m"), (-1e308, "radius -1e+308 m"), (9.3e18, "radius 9.3e+18 m"), (.greatestFiniteMagnitude, "radius 1.7976931348623157e+308 m"),
        (.nan, "radius nan m"), (.infinity, "radius inf m"), (-.infinity, "radius -inf m"), (100_000.5, "radius 100001 m"), (0.4, "radius 0 m"),
    ])
    func radius(_ radius: Double, _ named: String) {
        #expect(throws: PlacesInputError("\(named) is out of range: 1 m to 100 km")) { try PlaceLookup(validating: Self.query(radius: radius)) }
    }

    @Test("a huge limit or latitude is refused; the limits themselves are accepted")
    func limitsAndLatitudes() throws {
        #expect(throws: PlacesInputError("limit 4294967295 is out of range: 1 to 50")) { try PlaceLookup(validating: Self.query(radius: 1000, limit: .max)) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(validating: Self.query(radius: 1000, latitude: 1e300)) }
        #expect(throws: PlacesInputError.self) { try PlaceLookup(validating: Self.query(radius: 1000, latitude: .nan)) }
        #expect(try PlaceLookup(validating: Self.query(radius: 100_000, limit: 50)).radius == .metres(100_000))
        #expect(try PlaceLookup(validating: Self.query(radius: 1, limit: 1)).limit == 1)
    }

    @Test("pins dated at the ends of Int64 are refused naming their times")
    func pinTimes() {
        var pin = PinPayload()
        pin.pinID = Data(repeating: 2, count: 16)
        pin.label = "x"
        pin.createdAtMs = .max
        pin.expiresAtMs = .max
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let bob = try! PeerID(id: .random(), displayName: "bob")
        let future = #expect(throws: PlacesInputError.self) { try SharedPin(validating: pin, author: bob, now: now) }
        #expect(future?.message.hasPrefix("pin \"x\" was made 92233702") == true)
        pin.createdAtMs = .min
        let life = #expect(throws: PlacesInputError.self) { try SharedPin(validating: pin, author: bob, now: now) }
        #expect(life?.message.contains("lives 18446744073709552 s") == true, "\(String(describing: life))")
    }
}
