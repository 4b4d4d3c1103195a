import Foundation
import MeshWire
import SwiftProtobuf
import Testing

/// The framing of `direct` envelopes without a protobuf pass over the payload (PROTOCOL.md §6.3).
@Suite("Direct envelopes")
struct DirectEnvelopeTests {
    static let shapes: [(channel: UInt32, time: Int64, count: Int)] = [
        (16, 1_700_000_000_123, 63_936), (17, 0, 0), (1, 1, 1), (65_536, -1, 127), (.max, .max, 128),
        (0, .min, 16_384), (0, 0, 0), (16, 1_700_000_000_123, 64_000),
    ]

    @Test("directHeader followed by the payload is the serialized envelope", arguments: 0..<shapes.count)
    func header(shape: Int) {
        let (channel, time, count) = Self.shapes[shape]
        let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let envelope = Envelope.direct(channel: channel, payload: payload, sentAtMilliseconds: time)
        #expect(Data(Envelope.directHeader(channel: channel, sentAtMilliseconds: time, payloadCount: count)) + payload == envelope.encoded)
        let plain = envelope.plainDirect
        #expect(plain?.channel == channel && plain?.sentAtMilliseconds == time && plain?.payload == payload)
    }

    @Test("a plain direct envelope decodes by its header to what the protobuf decoder gives, keeping a slice", arguments: 0..<shapes.count)
    func decoding(shape: Int) throws {
        let (channel, time, count) = Self.shapes[shape]
        let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let encoded = Envelope.direct(channel: channel, payload: payload, sentAtMilliseconds: time).encoded
        // From a slice whose indices do not start at 0, as a reassembled record's do.
        let sliced = (Data([0xFF, 0xEE]) + encoded).dropFirst(2)
        let fast = try #require(Envelope.plainDirect(in: sliced))
        #expect(fast.channel == channel && fast.sentAtMilliseconds == time && fast.payload == payload)
        let decoded = try Envelope(decoding: sliced)
        #expect(decoded == (try Envelope(serializedBytes: encoded)))
        if count > 0 { #expect(fast.payload.startIndex > 0) }
    }

    @Test("anything but a plain direct envelope goes to the protobuf decoder, which reads it the same way")
    func refused() throws {
        let plain = Envelope.direct(channel: 16, payload: Data([1, 2, 3]), sentAtMilliseconds: 5).encoded
        let cases: [Data] = [
            Data([0x42, 0x09, 0x1A, 0x03, 1, 2, 3, 0x08, 0x10, 0x10, 0x05]),  // payload first, then channel and time
            Data([0x42, 0x0B, 0x08, 0x10, 0x08, 0x11, 0x10, 0x05, 0x1A, 0x03, 1, 2, 3]),  // channel twice: the last wins
            plain + Data([0x78, 0x01]),                                     // an unknown envelope field after the body
            Data([0x42, 0x0B, 0x08, 0x10, 0x10, 0x05, 0x1A, 0x03, 1, 2, 3, 0x20, 0x01]),  // an unknown field after the payload
            Data([0x42, 0x09, 0x08, 0x90, 0x80, 0x00, 0x1A, 0x03, 1, 2, 3]),  // a non-minimal varint: still valid protobuf
        ]
        for (index, bytes) in cases.enumerated() {
            let expected = try Envelope(serializedBytes: bytes)
            #expect(try Envelope(decoding: bytes) == expected, "case \(index)")
        }
        #expect(Envelope.plainDirect(in: cases[0]) == nil)
        #expect(Envelope.plainDirect(in: cases[1]) == nil)
        #expect(Envelope.plainDirect(in: cases[2]) == nil)
        #expect(Envelope.plainDirect(in: cases[3]) == nil)
        // The non-minimal varint is read by both to the same channel.
        #expect(Envelope.plainDirect(in: cases[4])?.channel == 16)
        // Truncated, overlong or overflowing: refused by the header check, then by the decoder.
        #expect(Envelope.plainDirect(in: plain.dropLast()) == nil)
        #expect(throws: WireError.self) { try Envelope(decoding: plain.dropLast()) }
        #expect(Envelope.plainDirect(in: Data([0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])) == nil)
        #expect(Envelope.plainDirect(in: Data([0x42, 0x0B, 0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x02])) == nil)
        #expect(Envelope.plainDirect(in: Data([0x42, 0x02, 0x1A, 0x00])) == nil)
        #expect(Envelope.plainDirect(in: Data()) == nil)
    }

    @Test("a direct body over a channel payload and its fields is refused from its length prefix")
    func receiveLimit() throws {
        let fits = Envelope.direct(channel: 16, payload: Data(count: WireLimits.maxRelayedPayload), sentAtMilliseconds: .min)
        #expect(Envelope.receiveLimitViolation(in: fits.encoded) == nil)
        let over = Envelope.direct(channel: 16, payload: Data(count: WireLimits.maxRelayedPayload + 40), sentAtMilliseconds: 1)
        #expect(Envelope.receiveLimitViolation(in: over.encoded)?.contains("a direct body") == true)
    }
}
