import Crypto
import Foundation
import MeshChat
@testable import MeshLink
import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// `Protocol/vectors/chat.json` (PROTOCOL.md §17): every chat message as its channel payload, and
/// one whole envelope per delivery kind (a line broadcast, a private line and a receipt sealed),
/// between the fixed parties of `handshake.json` and `mesh.json` (alice: identity 0x00…, static
/// 0x20…; bob: identity 0x60…, static 0x80…; packet id c0c1…cf; sealing ephemeral key f0f1…ff).
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshChatTests.ChatVectorTests`.
struct ChatVector: Codable, Equatable {
    /// One chat message: how it must travel and its channel payload.
    struct Message: Codable, Equatable {
        var name: String
        var section: String
        var description: String
        var delivery: String
        var payload: String
    }

    /// One envelope carrying a chat message on channel 1: the signed body or sealed plaintext, and
    /// the whole serialized `Envelope { routed }`.
    struct Carried: Codable, Equatable {
        var name: String
        var message: String
        var description: String
        var body: String
        var envelope: String
    }

    var description: String
    var aliceNodeID: String
    var bobNodeID: String
    var sealEphemeralPrivateKey: String
    var messages: [Message]
    var envelopes: [Carried]

    static func pattern(from first: UInt8, count: Int = 32) -> [UInt8] {
        (0..<count).map { first &+ UInt8(truncatingIfNeeded: $0) }
    }

    static let alice = try! LocalIdentity(signingKey: .init(rawRepresentation: pattern(from: 0x00)),
                                          staticKey: .init(rawRepresentation: pattern(from: 0x20)))
    static let bob = try! LocalIdentity(signingKey: .init(rawRepresentation: pattern(from: 0x60)),
                                        staticKey: .init(rawRepresentation: pattern(from: 0x80)))
    static let packetID = Data(pattern(from: 0xc0, count: 16))
    static let sentAt: Int64 = 1_790_000_000_000

    static let payloads: [(name: String, section: String, description: String, delivery: ChannelMessage.Delivery, message: ChatPayload)] = [
        ("line", "§17.2", "alice's line \"hello, mesh\" to everyone, id d0d1…df", .broadcast,
         .line(id: try! NodeID(bytes: pattern(from: 0xd0, count: 16)), text: "hello, mesh", sentAtMilliseconds: sentAt)),
        ("privateLine", "§17.3", "alice's private line \"only for bob\", id e0e1…ef, sequence 1, floor 1", .sealed,
         .privateLine(id: try! NodeID(bytes: pattern(from: 0xe0, count: 16)), text: "only for bob", sentAtMilliseconds: sentAt,
                      sequence: 1, floor: 1)),
        ("receipt", "§17.4", "a receipt for two private lines, ids e0e1…ef and e1e2…f0", .sealed,
         .receipt([try! NodeID(bytes: pattern(from: 0xe0, count: 16)), try! NodeID(bytes: pattern(from: 0xe1, count: 16))])),
    ]

    static func channelMessage(_ payload: ChatPayload) -> ChannelMessagePayload {
        var message = ChannelMessagePayload()
        message.channel = ChannelID.chat.rawValue
        message.payload = payload.encoded
        return message
    }

    static func routed(destination: NodeID?) -> RoutedPayload {
        var routed = RoutedPayload()
        routed.origin = Data(alice.nodeID.bytes)
        routed.destination = destination.map { Data($0.bytes) } ?? Data()
        routed.packetID = packetID
        routed.hopLimit = 7
        routed.hops = 0
        return routed
    }

    static func carried(_ name: String, _ entry: (name: String, section: String, description: String,
                                                  delivery: ChannelMessage.Delivery, message: ChatPayload)) throws -> Carried {
        let content = channelMessage(entry.message)
        switch entry.delivery {
        case .broadcast:
            var body = BroadcastPayload()
            body.packetID = packetID
            body.displayName = "alice"
            body.sentAtMs = sentAt
            body.channel = content
            let signed = MeshSigning.signBroadcast(body, identity: alice)
            var packet = routed(destination: nil)
            packet.broadcast = signed
            return Carried(name: name, message: entry.name, description: "the \(entry.name) message on channel 1; signed broadcast from alice (hop limit 7)",
                           body: signed.body.hexString, envelope: Envelope.routed(packet).encoded.hexString)
        case .sealed:
            let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: packetID)
            let ephemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pattern(from: 0xf0))
            let bytes = try Sealing.seal(.channel(content), displayName: "alice", sealedAtMilliseconds: sentAt, header: header,
                                         recipientStaticKey: bob.staticKey.publicKey, identity: alice, ephemeralKey: ephemeral)
            let plaintext = try Sealing.open(bytes, header: header, identity: bob)
            var packet = routed(destination: bob.nodeID)
            packet.sealed = bytes
            return Carried(name: name, message: entry.name, description: "the \(entry.name) message on channel 1; sealed from alice to bob (hop limit 7)",
                           body: plaintext.serialized.hexString, envelope: Envelope.routed(packet).encoded.hexString)
        }
    }

    static func compute() throws -> ChatVector {
        ChatVector(
            description: "PROTOCOL.md §17: the chat application on channel 1 (§13.12) between the fixed parties of handshake.json "
                + "and mesh.json (same packet id c0c1…cf, same sealing ephemeral key f0f1…ff, sent_at 1790000000000). messages: "
                + "each ChatMessage as a channel payload (ChannelMessage.payload), with the delivery its kind must have. envelopes: "
                + "one per delivery kind, body being the signed Broadcast body or the sealed plaintext (Sealed) and envelope "
                + "the serialized Envelope carrying the Routed packet.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex,
            sealEphemeralPrivateKey: Data(pattern(from: 0xf0)).hexString,
            messages: payloads.map {
                Message(name: $0.name, section: $0.section, description: $0.description,
                        delivery: $0.delivery == .sealed ? "sealed" : "broadcast", payload: $0.message.encoded.hexString)
            },
            envelopes: [
                try carried("lineBroadcast", payloads[0]),
                try carried("privateLineSealed", payloads[1]),
                try carried("receiptSealed", payloads[2]),
            ])
    }

    var json: OrderedJSON {
        .keyed([
            "description": .string(description),
            "aliceNodeID": .string(aliceNodeID), "bobNodeID": .string(bobNodeID),
            "sealEphemeralPrivateKey": .string(sealEphemeralPrivateKey),
            "messages": .array(messages.map {
                .keyed(["name": .string($0.name), "section": .string($0.section), "description": .string($0.description),
                        "delivery": .string($0.delivery), "payload": .string($0.payload)])
            }),
            "envelopes": .array(envelopes.map {
                .keyed(["name": .string($0.name), "message": .string($0.message), "description": .string($0.description),
                        "body": .string($0.body), "envelope": .string($0.envelope)])
            }),
        ])
    }
}

@Suite("Chat vectors (chat.json)", .serialized)
struct ChatVectorTests {
    static func load() throws -> ChatVector {
        if ProcessInfo.processInfo.environment["MESHCHAT_WRITE_VECTORS"] == "1" {
            try ChatVector.compute().json.rendered.write(to: try VectorFiles.url("chat"), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load("chat")
    }

    @Test("chat.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try ChatVector.compute()))
    }

    @Test("every payload decodes to its message with its delivery, and is refused with the other")
    func payloadsDecode() throws {
        let file = try Self.load()
        for (message, expected) in zip(file.messages, ChatVector.payloads) {
            let bytes = try Data(hex: message.payload)
            #expect(try ChatPayload.decode(bytes, delivery: expected.delivery) == expected.message)
            let other: ChannelMessage.Delivery = expected.delivery == .sealed ? .broadcast : .sealed
            #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(bytes, delivery: other) }
        }
    }

    @Test("the envelopes: the broadcast verifies and carries channel 1; sealed ones open for bob only and hide the text from relays")
    func envelopesOpen() throws {
        let file = try Self.load()
        for (carried, expected) in zip(file.envelopes, [ChatVector.payloads[0], ChatVector.payloads[1], ChatVector.payloads[2]]) {
            let bytes = try Data(hex: carried.envelope)
            let envelope = try Envelope(decoding: bytes)
            guard case .routed(let routed)? = envelope.body else { Issue.record("\(carried.name) is not routed"); continue }
            #expect(Envelope.routed(routed).encoded == bytes)
            let channel: ChannelMessagePayload
            if expected.delivery == .broadcast {
                let body = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: ChatVector.alice.nodeID, packetID: routed.packetID)
                channel = body.channel
            } else {
                let header = SealHeader(origin: ChatVector.alice.nodeID, destination: ChatVector.bob.nodeID, packetID: routed.packetID)
                #expect(throws: (any Error).self) { try Sealing.open(routed.sealed, header: header, identity: ChatVector.alice) }
                channel = try Sealing.open(routed.sealed, header: header, identity: ChatVector.bob).channel
                #expect(routed.sealed.range(of: Data("only for bob".utf8)) == nil)
            }
            #expect(channel.channel == 1)
            #expect(try ChatPayload.decode(channel.payload, delivery: expected.delivery) == expected.message)
        }
    }
}
