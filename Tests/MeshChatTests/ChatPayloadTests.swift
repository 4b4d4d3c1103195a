import Foundation
import MeshChat
import MeshSession
import Testing

/// ``ChatPayload``: the chat's messages on channel 1 (PROTOCOL.md §17), as a receiver reads them.
@Suite("ChatPayload")
struct ChatPayloadTests {
    static let id = try! NodeID(bytes: (0..<16).map { UInt8($0) })

    @Test("each message round-trips with the delivery its kind must have")
    func roundTrip() throws {
        let cases: [(ChatPayload, ChannelMessage.Delivery)] = [
            (.line(id: Self.id, text: "hello, mesh", sentAtMilliseconds: 1_790_000_000_000), .broadcast),
            (.privateLine(id: Self.id, text: "only for bob", sentAtMilliseconds: -5, sequence: 7, floor: 3), .sealed),
            (.receipt([Self.id, NodeID.random()]), .sealed),
            (.line(id: Self.id, text: "waves", sentAtMilliseconds: 1, action: true), .broadcast),
            (.privateLine(id: Self.id, text: "waves", sentAtMilliseconds: 1, sequence: 1, floor: 1, action: true), .sealed),
        ]
        for (message, delivery) in cases {
            #expect(try ChatPayload.decode(message.encoded, delivery: delivery) == message)
        }
    }

    @Test("an action line is a plain line with one more field: without it (an older peer's reading) the text is the same, and a plain line has no action byte")
    func actionIsAdditive() throws {
        let plain = ChatPayload.line(id: Self.id, text: "waves", sentAtMilliseconds: 1)
        let action = ChatPayload.line(id: Self.id, text: "waves", sentAtMilliseconds: 1, action: true)
        // Field 4 of Line, varint 1, at the end of the Line: a version 4 reader skips it as unknown.
        #expect(action.encoded.count == plain.encoded.count + 2)
        #expect(Array(action.encoded.suffix(2)) == [0x20, 0x01])
        #expect(Array(action.encoded.prefix(plain.encoded.count).dropFirst(2)) == Array(plain.encoded.dropFirst(2)))
        #expect(try ChatPayload.decode(plain.encoded, delivery: .broadcast) == plain)
    }

    @Test("a line to everyone must come broadcast; a private line and a receipt must come sealed")
    func deliveryIsChecked() {
        let line = ChatPayload.line(id: Self.id, text: "x", sentAtMilliseconds: 1)
        let privateLine = ChatPayload.privateLine(id: Self.id, text: "x", sentAtMilliseconds: 1, sequence: 1, floor: 1)
        let receipt = ChatPayload.receipt([Self.id])
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(line.encoded, delivery: .sealed) }
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(privateLine.encoded, delivery: .broadcast) }
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(receipt.encoded, delivery: .broadcast) }
    }

    @Test("the longest line fits one channel payload with the longest framing; one byte more is refused by the receiver")
    func lineLimit() throws {
        let longest = String(repeating: "x", count: ChatLimits.maxLineBytes)
        let worst = ChatPayload.privateLine(id: Self.id, text: longest, sentAtMilliseconds: Int64.min, sequence: .max, floor: .max,
                                            action: true)
        #expect(worst.encoded.count <= Session.maxChannelPayload)
        #expect(try ChatPayload.decode(worst.encoded, delivery: .sealed) == worst)
        let broadcast = ChatPayload.line(id: Self.id, text: longest, sentAtMilliseconds: Int64.min, action: true)
        #expect(broadcast.encoded.count <= ChatLimits.channel.maxBroadcastSize)
        let over = ChatPayload.line(id: Self.id, text: longest + "x", sentAtMilliseconds: 1)
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(over.encoded, delivery: .broadcast) }
    }

    @Test("bad ids, garbage and empty messages: refused or ignored, never trapping")
    func hostile() throws {
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(Data([0xff, 0xff, 0xff]), delivery: .sealed) }
        #expect(throws: ChatPayload.Invalid.self) {
            try ChatPayload.decode(Data(count: Session.maxChannelPayload + 1), delivery: .sealed)
        }
        // A line whose id is 3 bytes: field 1 (line), containing field 1 (message_id) of 3 bytes.
        #expect(throws: ChatPayload.Invalid.self) { try ChatPayload.decode(Data([0x0a, 0x05, 0x0a, 0x03, 1, 2, 3]), delivery: .broadcast) }
        // An empty ChatMessage (a newer peer's kind): ignored.
        #expect(try ChatPayload.decode(Data(), delivery: .sealed) == nil)
        // A receipt is read up to 64 ids, skipping ids that are not 16 bytes.
        let many = ChatPayload.receipt((0..<100).map { _ in NodeID.random() })
        guard case .receipt(let ids)? = try ChatPayload.decode(many.encoded, delivery: .sealed) else { Issue.record("no receipt"); return }
        #expect(ids.count == ChatLimits.maxReceiptIDs)
        // Receipt { message_ids: [16 bytes, 2 bytes] } inside ChatMessage field 3.
        let mixed = Data([0x1a, 0x16, 0x0a, 0x10] + (0..<16).map { UInt8($0) } + [0x0a, 0x02, 9, 9])
        #expect(try ChatPayload.decode(mixed, delivery: .sealed) == .receipt([Self.id]))
    }

    @Test("the channel's limits: lines of the longest size both ways, no replay window, nothing dropped when the queue is full")
    func channelLimits() {
        let limits = ChatLimits.channel
        #expect(limits.maxMessageSize == Session.maxChannelPayload && limits.maxBroadcastSize == Session.maxChannelPayload)
        #expect(limits.replayWindow == nil)
        #expect(limits.overflow == .wait)
        #expect(limits.burst >= 1_024 && limits.messagesPerSecond >= 1_024)
        #expect(ChatLimits.maxLineBytes == 63_936)
    }
}
