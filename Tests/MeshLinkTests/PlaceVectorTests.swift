import Crypto
import Foundation
@testable import MeshLink
import MeshPlaces
import Places
import MeshSession
import MeshTestSupport
import MeshWire
import SwiftProtobuf
import Testing

/// `Protocol/vectors/places.json` (PROTOCOL.md §14 on channel 3, §13.12): every places message as
/// its channel payload — a lookup, an answer, a refusal, a pin, a withdrawal, a pin catch-up — and
/// the data sets attachment; then one lookup sealed to bob, the pin broadcast, and the advert
/// carrying the attachment.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.PlaceVectorTests`.
enum PlaceVector {
    static func pin() -> PinPayload {
        var pin = PinPayload()
        pin.pinID = Data(pattern(from: 0xa0, count: 16))
        pin.latitude = 51.501
        pin.longitude = -0.142
        pin.label = "Meet here"
        pin.note = "by the gates"
        pin.createdAtMs = AppVector.sentAt
        pin.expiresAtMs = AppVector.sentAt + 86_400_000
        return pin
    }

    static func query() -> PlaceQueryPayload {
        var query = PlaceQueryPayload()
        query.queryID = Data(pattern(from: 0xb0, count: 16))
        query.latitude = 51.5074
        query.longitude = -0.1278
        query.radiusM = 2000
        query.text = "pizza"
        query.limit = 20
        return query
    }

    static func sets() -> PlaceSetsPayload {
        var london = PlaceSetPayload()
        (london.name, london.count) = ("london.geojson", 54_754)
        (london.south, london.west, london.north, london.east) = (51.28, -0.51, 51.69, 0.33)
        var fiji = PlaceSetPayload()
        (fiji.name, fiji.count) = ("fiji.csv", 1_200)
        (fiji.south, fiji.west, fiji.north, fiji.east) = (-21.0, 177.0, -12.0, -178.0)
        var sets = PlaceSetsPayload()
        sets.sets = [london, fiji]
        return sets
    }

    static func message(_ body: PlacesPayload.OneOf_Body) -> Data {
        var message = PlacesPayload()
        message.body = body
        return try! message.serializedData()
    }

    static func compute() throws -> ChannelAppVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var answer = PlaceAnswerPayload()
        answer.queryID = query().queryID
        var first = PlaceHitPayload(), second = PlaceHitPayload()
        (first.name, first.latitude, first.longitude, first.placeSet) = ("Pizza Union", 51.5079, -0.1281, "london.geojson")
        (second.name, second.latitude, second.longitude, second.placeSet) = ("Pizza Pilgrims", 51.5123, -0.1318, "london.geojson")
        answer.hits = [first, second]
        answer.total = 7
        var refused = PlaceAnswerPayload()
        refused.queryID = answer.queryID
        refused.refused = "radius 200000 m is outside 1–100000 m"
        var withdrawal = PinWithdrawalPayload()
        withdrawal.pinID = pin().pinID
        var pinSet = PinSetPayload()
        pinSet.pins = [pin()]
        pinSet.asOfMs = AppVector.sentAt + 60_000
        let channel = ChannelID.places.rawValue
        let messages: [ChannelAppVector.Message] = [
            .init(name: "placeQuery", section: "§14.2", description: "Places { query }: alice's lookup for \"pizza\" within 2000 m of "
                  + "51.5074,-0.1278, limit 20, query id b0b1…bf", payload: message(.query(query())).hexString),
            .init(name: "placeAnswer", section: "§14.3", description: "Places { answer }: the answer to placeQuery, 2 hits of 7",
                  payload: message(.answer(answer)).hexString),
            .init(name: "placeAnswerRefused", section: "§14.3", description: "Places { answer }: a refused lookup, with the reason",
                  payload: message(.answer(refused)).hexString),
            .init(name: "pin", section: "§14.4", description: "Places { pin }: alice's pin \"Meet here\" (note \"by the gates\") at "
                  + "51.501,-0.142 for 24 h, pin id a0a1…af", payload: message(.pin(pin())).hexString),
            .init(name: "pinWithdrawal", section: "§14.4", description: "Places { unpin }: alice withdraws her pin a0a1…af",
                  payload: message(.unpin(withdrawal)).hexString),
            .init(name: "pinSet", section: "§14.4", description: "Places { pins }: alice's catch-up, her one live pin, as of a minute after she made it",
                  payload: message(.pins(pinSet)).hexString),
            .init(name: "placeSets", section: "§14.1", description: "PlaceSets: the channel 3 attachment listing \"london.geojson\" "
                  + "(54754 places, S 51.28 W -0.51 N 51.69 E 0.33) and \"fiji.csv\" (1200 places, a box across the antimeridian)",
                  payload: try sets().serializedData().hexString),
        ]
        let deliveries = [
            try ChannelAppVector.sealed("querySealed", channel: channel, message(.query(query())), "placeQuery sealed on channel 3"),
            ChannelAppVector.broadcast("pinBroadcast", channel: channel, message(.pin(pin())), "pin broadcast on channel 3"),
            ChannelAppVector.attachment("setsAttachment", channel: channel, try sets().serializedData(),
                                        "mesh.json's linkState advert carrying placeSets as its channel 3 attachment"),
        ]
        return ChannelAppVector(
            description: "PROTOCOL.md §14 (places, channel 3) between the fixed parties of handshake.json and mesh.json "
                + "(packet id c0c1…cf, sent_at 1790000000000; the lookup is sealed as the first message of a new session, "
                + "with the keys of mesh.json). messages: each places message "
                + "as its channel payload. deliveries: a lookup sealed to bob, the pin broadcast, the advert with the data sets.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex, channel: channel, roomNonce: nil, rooms: nil,
            messages: messages, deliveries: deliveries)
    }
}

@Suite("Places vectors (places.json)", .serialized)
struct PlaceVectorTests {
    static func load() throws -> ChannelAppVector { try ChannelAppVector.load("places", compute: PlaceVector.compute) }

    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    func places(_ name: String) throws -> PlacesPayload.OneOf_Body? {
        try PlacesPayload(serializedBytes: try Self.load().payload(name)).body
    }

    @Test("places.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try PlaceVector.compute()))
    }

    @Test("§14: every places message decodes with its fields and validates as the places application does")
    func messages() throws {
        guard case .query(let query)? = try places("placeQuery") else { Issue.record("no lookup"); return }
        #expect(query.text == "pizza" && query.radiusM == 2000 && query.limit == 20)
        #expect((try? PlaceLookup(validating: query)) != nil)
        guard case .answer(let answer)? = try places("placeAnswer"), case .answer(let refused)? = try places("placeAnswerRefused") else {
            Issue.record("no answers")
            return
        }
        #expect(answer.hits.map(\.name) == ["Pizza Union", "Pizza Pilgrims"] && answer.total == 7 && answer.refused.isEmpty)
        #expect(refused.hits.isEmpty && !refused.refused.isEmpty)
        guard case .pin(let pin)? = try places("pin"), case .unpin(let withdrawal)? = try places("pinWithdrawal"),
              case .pins(let set)? = try places("pinSet") else {
            Issue.record("no pins")
            return
        }
        #expect(pin == PlaceVector.pin() && withdrawal.pinID == pin.pinID && set.pins == [pin] && set.asOfMs == pin.createdAtMs + 60_000)
        let sets = PlaceSetInfo.sets(fromAttachment: try Self.load().payload("placeSets"))
        #expect(sets.map(\.name) == ["london.geojson", "fiji.csv"] && sets.map(\.count) == [54_754, 1_200])
        #expect(sets[1].covers(Coordinate(latitude: -17, longitude: 179.9)) && !sets[1].covers(Coordinate(latitude: -17, longitude: 0)))
    }

    @Test("§13.12: the lookup opens for bob only, the pin verifies as alice's, the advert carries the data sets on channel 3")
    func deliveries() throws {
        let file = try Self.load()
        let sealed = try file.routed("querySealed")
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: sealed.packetID)
        let (plaintext, aliceFailed) = try SealedVectors.openAsBobOnly(sealed.sealed, header: header, bob: bob, other: alice)
        #expect(aliceFailed)
        guard case .channel(let query)? = plaintext.content else {
            Issue.record("no sealed channel message")
            return
        }
        #expect(try query.channel == 3 && query.payload == file.payload("placeQuery"))
        let pinPacket = try file.routed("pinBroadcast")
        let broadcast = try MeshSigning.verifiedBroadcast(pinPacket.broadcast, origin: alice.nodeID, packetID: pinPacket.packetID)
        guard case .channel(let pin)? = broadcast.content else { Issue.record("no broadcast channel message"); return }
        #expect(try pin.channel == 3 && pin.payload == file.payload("pin"))
        let advertPacket = try file.routed("setsAttachment")
        let advert = try MeshSigning.verifiedLinkState(advertPacket.linkState, origin: alice.nodeID)
        #expect(advert.attachments.map(\.channel) == [3])
        #expect(advert.attachments.first?.data == (try file.payload("placeSets")))
    }
}
