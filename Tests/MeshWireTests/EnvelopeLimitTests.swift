import struct Foundation.Data
import MeshWire
import SwiftProtobuf
import Testing

/// Receive limits judged from length prefixes before an envelope is decoded (PROTOCOL.md §6.1).
@Suite("Envelope receive limits")
struct EnvelopeLimitTests {
    @Test("a chat line within 64 KiB passes; one over it is refused from its length prefix")
    func chat() throws {
        let fits = Envelope.chat(id: Data(count: 16), text: String(repeating: "x", count: WireLimits.maxChatTextBytes), sentAtMilliseconds: 1)
        #expect(Envelope.receiveLimitViolation(in: try fits.serializedData()) == nil)
        let over = Envelope.chat(id: Data(count: 16), text: String(repeating: "x", count: 1 << 20), sentAtMilliseconds: 1)
        let violation = try #require(Envelope.receiveLimitViolation(in: try over.serializedData()))
        #expect(violation.contains("a chat body of 1048"))
    }

    @Test("data may fill the message; a routed body over one Noise message is refused; a newer peer's body is not limited")
    func others() throws {
        #expect(Envelope.receiveLimitViolation(in: try Envelope.data(Data(count: 1 << 23)).serializedData()) == nil)
        var routed = RoutedPayload()
        routed.sealed = Data(count: 70_000)
        var envelope = Envelope()
        envelope.body = .routed(routed)
        #expect(Envelope.receiveLimitViolation(in: try envelope.serializedData())?.contains("routed") == true)
        // Field 99, length-delimited, 100 kB: unknown, ignored here.
        let unknown = Data([0x9a, 0x06, 0xa0, 0x8d, 0x06]) + Data(count: 100_000)
        #expect(Envelope.receiveLimitViolation(in: unknown) == nil)
        // Many chat bodies add up (protobuf merges them; decoding costs them all).
        let piece = try Envelope.chat(id: Data(count: 16), text: String(repeating: "y", count: 40_000), sentAtMilliseconds: 1).serializedData()
        #expect(Envelope.receiveLimitViolation(in: piece + piece) != nil)
        // Truncated input is left to the decoder.
        #expect(Envelope.receiveLimitViolation(in: Data([0x0a, 0xff])) == nil)
    }
}
