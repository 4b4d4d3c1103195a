import Foundation
import MeshChat
import Testing

/// ``AwayText``: the away text in the chat channel's attachment (PROTOCOL.md §17.7), checked by
/// the sender and again by the receiver.
@Suite("away text")
struct AwayTextTests {
    @Test("a text round-trips through the attachment; nil, empty and spaces clear it")
    func roundTrip() throws {
        let data = try #require(try AwayText.attachment("at lunch 🍕"))
        #expect(AwayText.text(fromAttachment: data) == "at lunch 🍕")
        #expect(try AwayText.attachment(nil) == nil)
        #expect(try AwayText.attachment("") == nil)
        #expect(try AwayText.attachment("   ") == nil)
        #expect(AwayText.text(fromAttachment: nil) == nil)
        let longest = String(repeating: "é", count: AwayText.maxBytes / 2)
        #expect(AwayText.text(fromAttachment: try AwayText.attachment(longest)) == longest)
    }

    @Test("the sender refuses a text over 256 bytes or with a control character or line break",
          arguments: [String(repeating: "x", count: 257), String(repeating: "é", count: 129), "two\nlines", "bell\u{07}", "esc\u{1B}[2J", "sep\u{2028}x"])
    func senderRefuses(_ text: String) {
        #expect(throws: AwayText.Problem.self) { try AwayText.attachment(text) }
    }

    @Test("the receiver ignores an attachment that breaks a rule (no away text), whatever the peer sent",
          arguments: [Data(repeating: 0x78, count: 257), Data([0xFF, 0xFE, 0x41]), Data([0xC3]), Data("a\u{1B}[31mred".utf8),
                      Data("line\r\nbreak".utf8), Data("nul\u{0}".utf8), Data()])
    func receiverIgnores(_ data: Data) {
        #expect(AwayText.text(fromAttachment: data) == nil)
    }
}
