import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire

/// `Protocol/vectors/apps.json` (PROTOCOL.md §13.8, §13.10, §14, §15, §13.12): every message of the
/// applications that ride on the mesh and is not already in `mesh.json` — receipts, mesh ping and
/// pong, place answers, pin withdrawals and catch-up, room lines (public and password rooms, with
/// their keys), and the channel messages (§13.12; resources are in `resources.json`) — between the fixed parties
/// alice and bob of `handshake.json`, each as the serialized `Envelope` that carries it.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.AppVectorTests`.
struct AppVector: Codable, Equatable {
    /// One message: its body (the signed body, or the sealed plaintext) and the whole envelope.
    struct Case: Codable, Equatable {
        var name: String
        var section: String
        var description: String
        var body: String
        var envelope: String
    }

    /// A room's key and id (§15.1), derived from its name and password.
    struct Room: Codable, Equatable {
        var name: String
        var password: String?
        var key: String
        var id: String
    }

    var description: String
    var aliceNodeID: String
    var bobNodeID: String
    var sealEphemeralPrivateKey: String
    var roomNonce: String
    var rooms: [Room]
    var cases: [Case]

    static let sentAt = MeshVector.sentAt

    /// A sealed case from alice to bob: content sealed under the fixed header and ephemeral key.
    private static func sealed(_ name: String, _ section: String, _ description: String,
                               _ content: SealedPayload.OneOf_Content) throws -> Case {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        let ephemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pattern(from: 0xf0))
        let bytes = try Sealing.seal(content, displayName: "alice", sealedAtMilliseconds: sentAt, header: header,
                                     recipientStaticKey: bob.staticKey.publicKey, identity: alice, ephemeralKey: ephemeral)
        let plaintext = try Sealing.open(bytes, header: header, identity: bob)
        var routed = MeshVector.routed(origin: alice.nodeID, destination: bob.nodeID, hopLimit: 7, hops: 0)
        routed.sealed = bytes
        return Case(name: name, section: section, description: description + "; sealed from alice to bob (hop limit 7)",
                    body: plaintext.serialized.hexString, envelope: Envelope.routed(routed).encoded.hexString)
    }

    /// A signed broadcast case from alice.
    private static func broadcast(_ name: String, _ section: String, _ description: String,
                                  _ content: BroadcastPayload.OneOf_Content) -> Case {
        let alice = FixedParty.alice.identity
        var body = BroadcastPayload()
        body.packetID = MeshVector.packetID
        body.displayName = "alice"
        body.sentAtMs = sentAt
        body.content = content
        let signed = MeshSigning.signBroadcast(body, identity: alice)
        var routed = MeshVector.routed(origin: alice.nodeID, destination: nil, hopLimit: 7, hops: 0)
        routed.broadcast = signed
        return Case(name: name, section: section, description: description + "; signed broadcast from alice (hop limit 7)",
                    body: signed.body.hexString, envelope: Envelope.routed(routed).encoded.hexString)
    }

    /// alice's advert of mesh.json with two channel attachments (§13.12), in channel order.
    private static func advertWithAttachments() -> Case {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var advert = LinkStatePayload()
        advert.displayName = "alice"
        advert.sequence = 1_790_000_000_000
        var neighbor = LinkStateNeighborPayload()
        neighbor.nodeID = Data(bob.nodeID.bytes)
        neighbor.latencyUs = 250
        advert.neighbors = [neighbor]
        var places = ChannelAttachmentPayload(), app = ChannelAttachmentPayload()
        (places.channel, places.data) = (3, Data([0x01, 0x02, 0x03]))
        (app.channel, app.data) = (0x5EED_0001, Data("v=1".utf8))
        advert.attachments = [places, app]
        let signed = MeshSigning.signLinkState(advert, identity: alice)
        var routed = MeshVector.routed(origin: alice.nodeID, destination: nil, hopLimit: 32, hops: 0)
        routed.linkState = signed
        return Case(name: "linkStateAttachments", section: "§13.12",
                    description: "mesh.json's linkState advert with attachments 010203 on channel 3 and \"v=1\" on channel 0x5eed0001; hop limit 32",
                    body: signed.body.hexString, envelope: Envelope.routed(routed).encoded.hexString)
    }

    static func pin() -> PinPayload {
        var pin = PinPayload()
        pin.pinID = Data(pattern(from: 0xa0, count: 16))
        pin.latitude = 51.501
        pin.longitude = -0.142
        pin.label = "Meet here"
        pin.note = "by the gates"
        pin.createdAtMs = sentAt
        pin.expiresAtMs = sentAt + 86_400_000
        return pin
    }

    static func roomKeys() throws -> [(key: RoomKey, password: String?)] {
        [(try RoomKey(name: "#lunch"), nil), (try RoomKey(name: "#Dev", password: "s3cret"), "s3cret"),
         (try RoomKey(name: "#dev"), nil)]
    }

    static func compute() throws -> AppVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var cases: [Case] = []

        var receipt = ReceiptPayload()
        receipt.messageIds = [Data(pattern(from: 0xe0, count: 16)), Data(pattern(from: 0xe1, count: 16))]
        cases.append(try sealed("receipt", "§13.8", "alice's receipt for two of bob's private lines (ids e0e1…ef, e1e2…f0)",
                                .receipt(receipt)))
        var ping = Meshchat_V1_Ping()
        ping.nonce = 0x0102_0304_0506_0708
        cases.append(try sealed("meshPing", "§13.10", "a mesh ping with nonce 0x0102030405060708", .ping(ping)))
        var pong = Meshchat_V1_Pong()
        pong.nonce = ping.nonce
        cases.append(try sealed("meshPong", "§13.10", "the pong answering it, same nonce", .pong(pong)))

        var answer = PlaceAnswerPayload()
        answer.queryID = Data(pattern(from: 0xb0, count: 16))
        var first = PlaceHitPayload(), second = PlaceHitPayload()
        (first.name, first.latitude, first.longitude, first.placeSet) = ("Pizza Union", 51.5079, -0.1281, "london.geojson")
        (second.name, second.latitude, second.longitude, second.placeSet) = ("Pizza Pilgrims", 51.5123, -0.1318, "london.geojson")
        answer.hits = [first, second]
        answer.total = 7
        var answerMessage = PlacesPayload()
        answerMessage.answer = answer
        cases.append(try sealed("placeAnswer", "§14.3", "the answer to mesh.json's placeQuery (query id b0b1…bf): 2 hits of 7",
                                .places(answerMessage)))
        var refusedAnswer = PlaceAnswerPayload()
        refusedAnswer.queryID = answer.queryID
        refusedAnswer.refused = "radius 200000 m is outside 1–100000 m"
        var refusedMessage = PlacesPayload()
        refusedMessage.answer = refusedAnswer
        cases.append(try sealed("placeAnswerRefused", "§14.2", "a refused lookup, with the reason", .places(refusedMessage)))

        var pinSet = PinSetPayload()
        pinSet.pins = [pin()]
        var pinSetMessage = PlacesPayload()
        pinSetMessage.pins = pinSet
        cases.append(try sealed("pinSet", "§14.4", "alice's catch-up: her one live pin (mesh.json's pin)", .places(pinSetMessage)))
        var withdrawal = PinWithdrawalPayload()
        withdrawal.pinID = pin().pinID
        var withdrawalMessage = PlacesPayload()
        withdrawalMessage.unpin = withdrawal
        cases.append(broadcast("pinWithdrawal", "§14.4", "alice withdraws her pin a0a1…af", .places(withdrawalMessage)))

        let nonce = try ChaChaPoly.Nonce(data: pattern(from: 0x90, count: 12))
        let rooms = try roomKeys()
        for (index, (key, password)) in rooms.enumerated() {
            var text = RoomTextPayload()
            text.room = key.name
            text.messageID = Data(pattern(from: UInt8(0x50 + index), count: 16))
            text.text = "lunch at one?"
            text.sentAtMs = sentAt
            let chat = key.seal(text, origin: alice.nodeID, nonce: nonce)
            let kind = password.map { "password room (password \"\($0)\")" } ?? "public room"
            cases.append(broadcast("room\(index + 1)", "§15.2", "a line to \(key.name), a \(kind): \"lunch at one?\", nonce 9091…9b",
                                   .room(chat)))
        }

        var channelMessage = ChannelMessagePayload()
        channelMessage.channel = 0x5EED_0001
        channelMessage.payload = Data("hello, channel".utf8)
        cases.append(try sealed("channelSealed", "§13.12", "a message on third-party channel 0x5eed0001: \"hello, channel\"",
                                .channel(channelMessage)))
        cases.append(broadcast("channelBroadcast", "§13.12", "the same message broadcast on channel 0x5eed0001",
                               .channel(channelMessage)))
        cases.append(advertWithAttachments())

        return AppVector(
            description: "PROTOCOL.md §13.8, §13.10, §13.12, §14, §15, §16 between the fixed parties of handshake.json and mesh.json "
                + "(same packet id c0c1…cf, same sealing ephemeral key f0f1…ff, sent_at 1790000000000). body: the signed "
                + "Broadcast body, or the sealed plaintext (Sealed). envelope: the serialized Envelope carrying the Routed "
                + "packet. rooms: each room's key and id (§15.1), from its name and password; room lines use the nonce roomNonce.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex,
            sealEphemeralPrivateKey: pattern(from: 0xf0).hexString,
            roomNonce: pattern(from: 0x90, count: 12).hexString,
            rooms: rooms.map { Room(name: $0.key.name, password: $0.password, key: $0.key.key.hexString, id: $0.key.id.hexString) },
            cases: cases)
    }

    var json: OrderedJSON {
        .keyed([
            "description": .string(description),
            "aliceNodeID": .string(aliceNodeID), "bobNodeID": .string(bobNodeID),
            "sealEphemeralPrivateKey": .string(sealEphemeralPrivateKey),
            "roomNonce": .string(roomNonce),
            "rooms": .array(rooms.map { room in
                .object([OrderedJSON.Member("name", .string(room.name))]
                    + (room.password.map { [OrderedJSON.Member("password", .string($0))] } ?? [])
                    + [OrderedJSON.Member("key", .string(room.key)), OrderedJSON.Member("id", .string(room.id))])
            }),
            "cases": .array(cases.map {
                .keyed(["name": .string($0.name), "section": .string($0.section), "description": .string($0.description),
                        "body": .string($0.body), "envelope": .string($0.envelope)])
            }),
        ])
    }
}
