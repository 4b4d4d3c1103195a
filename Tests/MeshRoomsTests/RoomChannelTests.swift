import Foundation
import Logging
@testable import MeshRooms
import MeshSession
import SwiftProtobuf
import Testing

/// The rooms application on channel 2 (PROTOCOL.md §15.2, §15.3): what the channel accepts as a
/// room line, and that the limits fit the channel.
@Suite("room channel")
struct RoomChannelTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    static let alice = try! PeerID(id: NodeID(hex: "56475aa75463474c0285df5dbf2bcab7"), displayName: "alice")

    static func message(_ payload: Data, _ delivery: ChannelMessage.Delivery) -> ChannelMessage {
        ChannelMessage(sender: alice, payload: payload, delivery: delivery, hops: 2, sentAt: Date())
    }

    @Test("a broadcast RoomChat is a line with its sender and hops; a sealed one or one that does not decode is dropped")
    func lines() throws {
        let key = try RoomKey(name: "#lunch")
        var text = RoomTextPayload()
        text.room = key.name
        text.messageID = Data(repeating: 1, count: 16)
        text.text = "hello"
        let chat = key.seal(text, origin: Self.alice.id)
        let line = try #require(RoomChannel.line(Self.message(try chat.serializedData(), .broadcast), logger: Self.logger))
        #expect(line.chat == chat && line.sender == Self.alice && line.hops == 2)
        #expect(try key.open(line.chat, origin: line.sender.id).text == "hello")
        #expect(RoomChannel.line(Self.message(try chat.serializedData(), .sealed), logger: Self.logger) == nil)
        #expect(RoomChannel.line(Self.message(Data([0xff, 0xff, 0xff]), .broadcast), logger: Self.logger) == nil)
    }

    @Test("§15.3: the longest line, sealed, fits one channel broadcast; the channel's limits are valid and take no attachment")
    func limits() throws {
        let key = try RoomKey(name: "#" + String(repeating: "x", count: 32))
        var text = RoomTextPayload()
        text.room = key.name
        text.messageID = Data(repeating: 1, count: 16)
        text.text = String(repeating: "é", count: RoomLimits.maxTextBytes / 2)
        text.sentAtMs = .max
        let chat = key.seal(text, origin: Self.alice.id)
        #expect(try chat.serializedData().count <= Session.maxChannelPayload)
        #expect(RoomLimits.channel.maxBroadcastSize == Session.maxChannelPayload)
        #expect(RoomLimits.channel.maxAttachmentSize == 0 && RoomLimits.channel.replayWindow == nil)
    }
}
