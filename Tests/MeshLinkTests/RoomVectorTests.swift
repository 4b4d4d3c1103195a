import Crypto
import Foundation
@testable import MeshLink
@testable import MeshRooms
import MeshSession
import MeshTestSupport
import MeshWire
import SwiftProtobuf
import Testing

/// `Protocol/vectors/rooms.json` (PROTOCOL.md §15 on channel 2, §13.12): each room's key and id,
/// a line to each of three rooms (a public room, a password room and the public room of the same
/// name) as its `RoomChat` and the `RoomText` inside, and the signed broadcast that carries one.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.RoomVectorTests`.
enum RoomVector {
    static func keys() throws -> [(key: RoomKey, password: String?)] {
        [(try RoomKey(name: "#lunch"), nil), (try RoomKey(name: "#Dev", password: "s3cret"), "s3cret"),
         (try RoomKey(name: "#dev"), nil)]
    }

    static let nonce = Data(pattern(from: 0x90, count: 12))

    static func text(_ key: RoomKey, index: Int) -> RoomTextPayload {
        var text = RoomTextPayload()
        text.room = key.name
        text.messageID = Data(pattern(from: UInt8(0x50 + index), count: 16))
        text.text = "lunch at one?"
        text.sentAtMs = AppVector.sentAt
        return text
    }

    /// The action line of `roomAction`: "waves", marked action (§17.8).
    static func actionText(_ key: RoomKey) -> RoomTextPayload {
        var text = RoomTextPayload()
        text.room = key.name
        text.messageID = Data(pattern(from: 0x5f, count: 16))
        text.text = "waves"
        text.sentAtMs = AppVector.sentAt
        text.action = true
        return text
    }

    static func compute() throws -> ChannelAppVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        let rooms = try keys()
        var messages: [ChannelAppVector.Message] = []
        var first: Data?
        for (index, (key, password)) in rooms.enumerated() {
            let text = text(key, index: index)
            let chat = key.seal(text, origin: alice.nodeID, nonce: try ChaChaPoly.Nonce(data: nonce))
            let kind = password.map { "password room (password \"\($0)\")" } ?? "public room"
            let payload = try chat.serializedData()
            first = first ?? payload
            messages.append(.init(name: "room\(index + 1)", section: "§15.2",
                                  description: "RoomChat: alice's line to \(key.name), a \(kind): \"lunch at one?\", nonce 9091…9b",
                                  payload: payload.hexString))
            messages.append(.init(name: "room\(index + 1)Text", section: "§15.2",
                                  description: "RoomText: the plaintext sealed in room\(index + 1), message id \(String(format: "%02x", 0x50 + index))…",
                                  payload: try text.serializedData().hexString))
        }
        // Version 5 (§17.8): an action line to the first room ("* alice waves"), after the others.
        let action = actionText(rooms[0].key)
        messages.append(.init(name: "roomAction", section: "§15.2, §17.8",
                              description: "RoomChat: alice's action line to #lunch (action, version 5): \"waves\", nonce 9091…9b",
                              payload: try rooms[0].key.seal(action, origin: alice.nodeID, nonce: try ChaChaPoly.Nonce(data: nonce))
                                .serializedData().hexString))
        messages.append(.init(name: "roomActionText", section: "§15.2, §17.8",
                              description: "RoomText: the plaintext sealed in roomAction, message id 5f60…6e, action true",
                              payload: try action.serializedData().hexString))
        let deliveries = [ChannelAppVector.broadcast("roomBroadcast", channel: ChannelID.rooms.rawValue, first ?? Data(),
                                                     "room1 broadcast on channel 2")]
        return ChannelAppVector(
            description: "PROTOCOL.md §15 (rooms, channel 2) between the fixed parties of handshake.json and mesh.json "
                + "(packet id c0c1…cf, sent_at 1790000000000). rooms: each room's key and id (§15.1), from its name and "
                + "password. messages: each RoomChat (the channel payload) and the RoomText it seals, with the nonce "
                + "roomNonce and alice's node id in the AAD. deliveries: the signed broadcast carrying room1.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex, channel: ChannelID.rooms.rawValue,
            roomNonce: nonce.hexString,
            rooms: rooms.map { AppVector.Room(name: $0.key.name, password: $0.password, key: $0.key.key.hexString, id: $0.key.id.hexString) },
            messages: messages, deliveries: deliveries)
    }
}

@Suite("Rooms vectors (rooms.json)", .serialized)
struct RoomVectorTests {
    static func load() throws -> ChannelAppVector { try ChannelAppVector.load("rooms", compute: RoomVector.compute) }

    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    @Test("rooms.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try RoomVector.compute()))
    }

    @Test("§15.1: room keys come from the lower-cased name with its # (and the password); a public and a password room of one name differ")
    func roomKeys() throws {
        let rooms = try #require(try Self.load().rooms)
        #expect(rooms.map(\.name) == ["#lunch", "#dev", "#dev"])
        let publicLunch = Data(SHA256.hash(data: Data("meshchat public room v1#lunch".utf8)))
        #expect(rooms[0].key == publicLunch.hexString)
        #expect(rooms[0].id == Data(SHA256.hash(data: Data("meshchat room id v1".utf8) + publicLunch).prefix(16)).hexString)
        #expect(rooms[1].password == "s3cret" && rooms[2].password == nil)
        #expect(rooms[1].id != rooms[2].id, "#dev with a password is another room than the public #dev")
        #expect(try RoomKey(name: "#DEV", password: "s3cret").key.hexString == rooms[1].key, "names are lower-cased first")
    }

    @Test("§15.2: each room line opens with its own room's key only, as its recorded RoomText, and names its room")
    func roomLines() throws {
        let file = try Self.load()
        let keys = try RoomVector.keys().map(\.key)
        for (index, key) in keys.enumerated() {
            let chat = try RoomChatPayload(serializedBytes: try file.payload("room\(index + 1)"))
            #expect(chat.nonce.hexString == file.roomNonce)
            let text = try key.open(chat, origin: alice.nodeID)
            #expect(try text.serializedData() == (try file.payload("room\(index + 1)Text")))
            #expect(text.room == key.name && text.text == "lunch at one?")
            for other in keys where other.id != key.id {
                #expect(throws: RoomError.self) { try other.open(chat, origin: alice.nodeID) }
            }
            #expect(throws: RoomError.self, "bound to its origin") { try key.open(chat, origin: bob.nodeID) }
        }
    }

    @Test("§17.8: the room action line opens with #lunch's key as its RoomText, marked action; without the field it is the plain line")
    func roomAction() throws {
        let file = try Self.load()
        let key = try RoomVector.keys()[0].key
        let text = try key.open(try RoomChatPayload(serializedBytes: try file.payload("roomAction")), origin: alice.nodeID)
        #expect(try text.serializedData() == (try file.payload("roomActionText")))
        #expect(text.action && text.text == "waves" && text.room == "#lunch")
        var plain = text
        plain.action = false
        // Field 5, varint 1, last: a version 4 reader skips those two bytes and reads the same line.
        #expect(try text.serializedData() == (try plain.serializedData()) + Data([0x28, 0x01]))
    }

    @Test("§13.12: the broadcast verifies as alice's and carries room1 on channel 2")
    func broadcast() throws {
        let file = try Self.load()
        let routed = try file.routed("roomBroadcast")
        let broadcast = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: alice.nodeID, packetID: routed.packetID)
        guard case .channel(let message)? = broadcast.content else { Issue.record("no channel message"); return }
        #expect(try message.channel == 2 && message.payload == file.payload("room1"))
        #expect(throws: (any Error).self) { try MeshSigning.verifiedBroadcast(routed.broadcast, origin: bob.nodeID, packetID: routed.packetID) }
    }
}
