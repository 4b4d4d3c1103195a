import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire

/// `Protocol/vectors/apps.json` (PROTOCOL.md §13.8, §13.10, §13.12): every message of the
/// applications that ride on the mesh and is not already in `mesh.json` — receipts, mesh ping and
/// pong, channel messages and attachments (resources: `resources.json`) —
/// (places and rooms: `places.json`, `rooms.json`) between the fixed parties
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

    /// A room's key and id (§15.1), derived from its name and password (used by rooms.json).
    struct Room: Codable, Equatable {
        var name: String
        var password: String?
        var key: String
        var id: String
    }

    var description: String
    var aliceNodeID: String
    var bobNodeID: String
    var bobPrekeyID: UInt32
    var bobPrekeyPrivateKey: String
    var aliceEphemeralPrivateKey: String
    var aliceRatchetPrivateKey: String
    var cases: [Case]

    static let sentAt = MeshVector.sentAt

    /// A sealed case from alice to bob: content sealed under the fixed header as the first message
    /// of a new session, with the fixed keys of ``SealedVectors`` (§19.6).
    static func sealed(_ name: String, _ section: String, _ description: String,
                       _ content: SealedPayload.OneOf_Content) throws -> Case {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        let bytes = try SealedVectors.sealFirst(content, sentAt: sentAt, header: header, alice: alice, bob: bob)
        let plaintext = try SealedVectors.open(bytes, header: header, as: bob).payload
        var routed = MeshVector.routed(origin: alice.nodeID, destination: bob.nodeID, hopLimit: 7, hops: 0)
        routed.sealed = bytes
        return Case(name: name, section: section, description: description + "; sealed from alice to bob (hop limit 7)",
                    body: plaintext.serialized.hexString, envelope: Envelope.routed(routed).encoded.hexString)
    }

    /// A signed broadcast case from alice.
    static func broadcast(_ name: String, _ section: String, _ description: String,
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

    /// alice's advert of mesh.json with channel attachments (§13.12), in the order given.
    static func advert(_ name: String, _ description: String, attachments: [(UInt32, Data)]) -> Case {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var advert = LinkStatePayload()
        advert.displayName = "alice"
        advert.sequence = 1_790_000_000_000
        var neighbor = LinkStateNeighborPayload()
        neighbor.nodeID = Data(bob.nodeID.bytes)
        neighbor.latencyUs = 250
        advert.neighbors = [neighbor]
        advert.attachments = attachments.map {
            var attachment = ChannelAttachmentPayload()
            (attachment.channel, attachment.data) = $0
            return attachment
        }
        let signed = MeshSigning.signLinkState(advert, identity: alice)
        var routed = MeshVector.routed(origin: alice.nodeID, destination: nil, hopLimit: 32, hops: 0)
        routed.linkState = signed
        return Case(name: name, section: "§13.12", description: description + "; hop limit 32",
                    body: signed.body.hexString, envelope: Envelope.routed(routed).encoded.hexString)
    }

    /// alice's advert of mesh.json with two channel attachments (§13.12), in channel order.
    private static func advertWithAttachments() -> Case {
        advert("linkStateAttachments",
               "mesh.json's linkState advert with attachments 010203 on channel 3 and \"v=1\" on channel 0x5eed0001",
               attachments: [(3, Data([0x01, 0x02, 0x03])), (0x5EED_0001, Data("v=1".utf8))])
    }

    static func compute() throws -> AppVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var cases: [Case] = []

        var ping = Meshchat_V1_Ping()
        ping.nonce = 0x0102_0304_0506_0708
        cases.append(try sealed("meshPing", "§13.10", "a mesh ping with nonce 0x0102030405060708", .ping(ping)))
        var pong = Meshchat_V1_Pong()
        pong.nonce = ping.nonce
        cases.append(try sealed("meshPong", "§13.10", "the pong answering it, same nonce", .pong(pong)))


        var channelMessage = ChannelMessagePayload()
        channelMessage.channel = 0x5EED_0001
        channelMessage.payload = Data("hello, channel".utf8)
        cases.append(try sealed("channelSealed", "§13.12", "a message on third-party channel 0x5eed0001: \"hello, channel\"",
                                .channel(channelMessage)))
        cases.append(broadcast("channelBroadcast", "§13.12", "the same message broadcast on channel 0x5eed0001",
                               .channel(channelMessage)))
        cases.append(advertWithAttachments())

        return AppVector(
            description: "PROTOCOL.md §13.8, §13.10, §13.12, §16 between the fixed parties of handshake.json and mesh.json "
                + "(same packet id c0c1…cf, sent_at 1790000000000). Each sealed case is, like mesh.json's sealed, the first "
                + "message of a new Double Ratchet session from alice to bob (§19.6): a prekey message on bob's signed "
                + "prekey 1 (a0a1…bf) with EK_I f0f1…ff and alice's first ratchet key d0d1…ef. body: the signed "
                + "Broadcast body, or the sealed plaintext (Sealed). envelope: the serialized Envelope carrying the Routed "
                + "packet. The places and rooms applications are in places.json and rooms.json.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex,
            bobPrekeyID: SealedVectors.bobPrekeyID,
            bobPrekeyPrivateKey: SealedVectors.bobPrekeyPrivateKey.hexString,
            aliceEphemeralPrivateKey: SealedVectors.aliceEphemeralPrivateKey.hexString,
            aliceRatchetPrivateKey: SealedVectors.aliceRatchetPrivateKey.hexString,
            cases: cases)
    }

    var json: OrderedJSON {
        .object([.init("description", .string(description)), .init("aliceNodeID", .string(aliceNodeID)),
                 .init("bobNodeID", .string(bobNodeID))]
            + SealedVectors.jsonMembers
            + [.init("cases", .array(cases.map {
                .keyed(["name": .string($0.name), "section": .string($0.section), "description": .string($0.description),
                        "body": .string($0.body), "envelope": .string($0.envelope)])
            }))])
    }
}
