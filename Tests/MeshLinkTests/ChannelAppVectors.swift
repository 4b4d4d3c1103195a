import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire

/// The shape of `Protocol/vectors/rooms.json` and `places.json` (PROTOCOL.md §13.12, §14, §15):
/// every message of a channel application as its channel payload, and one whole envelope per way
/// it travels (sealed, broadcast, attachment), between the fixed parties alice and bob.
struct ChannelAppVector: Codable, Equatable {
    /// One application message: the bytes its channel carries.
    struct Message: Codable, Equatable {
        var name: String
        var section: String
        var description: String
        /// The serialized application message (the channel payload, or a plaintext inside one).
        var payload: String
    }

    /// One message as the mesh carries it.
    struct Delivery: Codable, Equatable {
        var name: String
        /// `sealed`, `broadcast` or `attachment`.
        var delivery: String
        var description: String
        /// The sealed plaintext, the signed broadcast body or the signed advert body.
        var body: String
        /// The whole serialized Envelope { routed }.
        var envelope: String
    }

    var description: String
    var aliceNodeID: String
    var bobNodeID: String
    var channel: UInt32
    var roomNonce: String?
    var rooms: [AppVector.Room]?
    var messages: [Message]
    var deliveries: [Delivery]

    static func channelMessage(_ channel: UInt32, _ payload: Data) -> ChannelMessagePayload {
        var message = ChannelMessagePayload()
        message.channel = channel
        message.payload = payload
        return message
    }

    /// A payload sealed from alice to bob on a channel.
    static func sealed(_ name: String, channel: UInt32, _ payload: Data, _ description: String) throws -> Delivery {
        let found = try AppVector.sealed(name, "", description, .channel(channelMessage(channel, payload)))
        return Delivery(name: name, delivery: "sealed", description: found.description, body: found.body, envelope: found.envelope)
    }

    /// A payload broadcast by alice on a channel.
    static func broadcast(_ name: String, channel: UInt32, _ payload: Data, _ description: String) -> Delivery {
        let found = AppVector.broadcast(name, "", description, .channel(channelMessage(channel, payload)))
        return Delivery(name: name, delivery: "broadcast", description: found.description, body: found.body, envelope: found.envelope)
    }

    /// alice's advert (mesh.json's) carrying one attachment.
    static func attachment(_ name: String, channel: UInt32, _ data: Data, _ description: String) -> Delivery {
        let found = AppVector.advert(name, description, attachments: [(channel, data)])
        return Delivery(name: name, delivery: "attachment", description: found.description, body: found.body, envelope: found.envelope)
    }

    var json: OrderedJSON {
        var members: [OrderedJSON.Member] = [
            .init("description", .string(description)),
            .init("aliceNodeID", .string(aliceNodeID)), .init("bobNodeID", .string(bobNodeID)),
            .init("channel", .integer(Int64(channel))),
        ]
        if let roomNonce { members.append(.init("roomNonce", .string(roomNonce))) }
        if let rooms {
            members.append(.init("rooms", .array(rooms.map { room in
                .object([OrderedJSON.Member("name", .string(room.name))]
                    + (room.password.map { [OrderedJSON.Member("password", .string($0))] } ?? [])
                    + [OrderedJSON.Member("key", .string(room.key)), OrderedJSON.Member("id", .string(room.id))])
            })))
        }
        members.append(.init("messages", .array(messages.map {
            .keyed(["name": .string($0.name), "section": .string($0.section), "description": .string($0.description),
                    "payload": .string($0.payload)])
        })))
        members.append(.init("deliveries", .array(deliveries.map {
            .keyed(["name": .string($0.name), "delivery": .string($0.delivery), "description": .string($0.description),
                    "body": .string($0.body), "envelope": .string($0.envelope)])
        })))
        return .object(members)
    }

    /// Loads a vector file, first writing it from `compute` under `MESHCHAT_WRITE_VECTORS=1`.
    static func load(_ name: String, compute: () throws -> ChannelAppVector) throws -> ChannelAppVector {
        if writeVectors {
            try compute().json.rendered.write(to: try VectorFiles.url(name), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load(name)
    }

    /// The payload of a message, by name.
    func payload(_ name: String) throws -> Data {
        guard let found = messages.first(where: { $0.name == name }) else { throw VectorError("no message \(name)") }
        return try Data(hex: found.payload)
    }

    /// The routed packet of a delivery, checked to re-encode byte for byte.
    func routed(_ name: String) throws -> RoutedPayload {
        guard let found = deliveries.first(where: { $0.name == name }) else { throw VectorError("no delivery \(name)") }
        let bytes = try Data(hex: found.envelope)
        guard case .routed(let routed)? = try Envelope(decoding: bytes).body else { throw VectorError("\(name) is not routed") }
        guard Envelope.routed(routed).encoded == bytes else { throw VectorError("\(name) does not re-encode") }
        return routed
    }
}
