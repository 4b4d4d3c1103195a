import Foundation
@testable import MeshLink
import MeshChat
import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// `Protocol/vectors/chat.json` (PROTOCOL.md §17 on channel 1, §13.12): every chat message as its
/// channel payload, and one whole envelope per delivery kind (a line broadcast, a private line and
/// a receipt sealed), between the fixed parties alice and bob.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.ChatVectorTests`.
enum ChatVector {
    static let messages: [(name: String, section: String, description: String, delivery: ChannelMessage.Delivery, message: ChatPayload)] = [
        ("line", "§17.2", "Line: alice's line \"hello, mesh\" to everyone, id d0d1…df (must come broadcast)", .broadcast,
         .line(id: try! NodeID(bytes: pattern(from: 0xd0, count: 16)), text: "hello, mesh", sentAtMilliseconds: AppVector.sentAt)),
        ("privateLine", "§17.3", "PrivateLine: alice's private line \"only for bob\", id e0e1…ef, sequence 1, floor 1 (must come sealed)", .sealed,
         .privateLine(id: try! NodeID(bytes: pattern(from: 0xe0, count: 16)), text: "only for bob", sentAtMilliseconds: AppVector.sentAt,
                      sequence: 1, floor: 1)),
        ("receipt", "§17.4", "Receipt: for two private lines, ids e0e1…ef and e1e2…f0 (must come sealed)", .sealed,
         .receipt([try! NodeID(bytes: pattern(from: 0xe0, count: 16)), try! NodeID(bytes: pattern(from: 0xe1, count: 16))])),
        ("actionLine", "§17.8", "Line with action (version 5): alice's action line \"waves\" to everyone (* alice waves), id d1d2…e0; "
            + "a version 4 peer reads the line \"waves\" (must come broadcast)", .broadcast,
         .line(id: try! NodeID(bytes: pattern(from: 0xd1, count: 16)), text: "waves", sentAtMilliseconds: AppVector.sentAt, action: true)),
        ("actionPrivateLine", "§17.8", "PrivateLine with action (version 5): alice's action line \"nods\" to bob, id e2e3…f1, "
            + "sequence 2, floor 1 (must come sealed)", .sealed,
         .privateLine(id: try! NodeID(bytes: pattern(from: 0xe2, count: 16)), text: "nods", sentAtMilliseconds: AppVector.sentAt,
                      sequence: 2, floor: 1, action: true)),
    ]

    static func compute() throws -> ChannelAppVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        let channel = ChannelID.chat.rawValue
        var deliveries: [ChannelAppVector.Delivery] = []
        for entry in messages {
            let name = entry.name + (entry.delivery == .sealed ? "Sealed" : "Broadcast")
            let description = "\(entry.name) on channel 1"
            deliveries.append(entry.delivery == .sealed
                ? try ChannelAppVector.sealed(name, channel: channel, entry.message.encoded, description)
                : ChannelAppVector.broadcast(name, channel: channel, entry.message.encoded, description))
        }
        return ChannelAppVector(
            description: "PROTOCOL.md §17 (chat, channel 1) between the fixed parties of handshake.json and mesh.json "
                + "(packet id c0c1…cf, sent_at 1790000000000; each sealed delivery is the first message of a new session, "
                + "with the keys of mesh.json). messages: each ChatMessage "
                + "as its channel payload. deliveries: each message the way it must travel, as a whole envelope.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex, channel: channel, roomNonce: nil, rooms: nil,
            messages: messages.map { .init(name: $0.name, section: $0.section, description: $0.description, payload: $0.message.encoded.hexString) },
            deliveries: deliveries)
    }
}

@Suite("Chat vectors (chat.json)", .serialized)
struct ChatVectorTests {
    static func load() throws -> ChannelAppVector { try ChannelAppVector.load("chat", compute: ChatVector.compute) }

    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    @Test("chat.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try ChatVector.compute()))
    }

    @Test("every payload decodes to its message with its delivery, and is refused the other way")
    func payloadsDecode() throws {
        let file = try Self.load()
        for entry in ChatVector.messages {
            let bytes = try file.payload(entry.name)
            #expect(try ChatPayload.decode(bytes, delivery: entry.delivery) == entry.message)
            let other: ChannelMessage.Delivery = entry.delivery == .sealed ? .broadcast : .sealed
            #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(bytes, delivery: other) }
        }
    }

    @Test("the broadcast verifies and carries channel 1; the sealed ones open for bob only and hide the text from relays")
    func deliveriesOpen() throws {
        let file = try Self.load()
        for (entry, delivery) in zip(ChatVector.messages, file.deliveries) {
            let routed = try file.routed(delivery.name)
            let channel: ChannelMessagePayload
            if entry.delivery == .broadcast {
                channel = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: alice.nodeID, packetID: routed.packetID).channel
            } else {
                let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: routed.packetID)
                let (plaintext, aliceFailed) = try SealedVectors.openAsBobOnly(routed.sealed, header: header, bob: bob, other: alice)
                #expect(aliceFailed)
                channel = plaintext.channel
                #expect(routed.sealed.range(of: Data("only for bob".utf8)) == nil)
            }
            #expect(channel.channel == ChannelID.chat.rawValue)
            #expect(try ChatPayload.decode(channel.payload, delivery: entry.delivery) == entry.message)
        }
    }
}
