import Foundation
import MeshTestSupport
import MeshWire
import SwiftProtobuf
import Testing

/// Envelope golden bytes (PROTOCOL.md §6, §11).
@Suite("Envelopes")
struct EnvelopeTests {
    @Test("valid envelope decodes to its JSON form and re-encodes byte for byte", arguments: try EnvelopeVectors.load().valid)
    func validEnvelope(_ vector: EnvelopeVectors.Valid) throws {
        let bytes = try Data(hex: vector.bytes)
        let envelope = try Envelope(decoding: bytes)
        #expect(envelope.body != nil)
        #expect(try envelope.jsonString() == vector.json)
        #expect(try Envelope(jsonString: vector.json) == envelope)
        #expect(envelope.encoded == bytes)
        #expect(envelope.unknownFields.data.isEmpty)
    }

    @Test("a data envelope serializes as dataHeader followed by the payload", arguments: [
        0, 1, 2, 125, 126, 127, 128, 16_380, 16_381, 16_383, 16_384, 65_518, 1 << 20, 2_097_149, 2_097_152,
    ])
    func dataHeader(payloadCount: Int) {
        let payload = Data((0..<payloadCount).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let envelope = Envelope.data(payload)
        #expect(envelope.plainDataPayload == payload)
        #expect(Data(Envelope.dataHeader(payloadCount: payloadCount)) + payload == envelope.encoded)
    }

    @Test("only plain data envelopes have a plainDataPayload")
    func plainDataPayload() throws {
        #expect(Envelope.ping(nonce: 7).plainDataPayload == nil)
        #expect(Envelope.chat(id: Data(count: 16), text: "hi", sentAtMilliseconds: 1).plainDataPayload == nil)
        var withUnknown = try Envelope(decoding: Envelope.data(Data([1, 2])).encoded + Data([0x78, 0x01]))  // field 15
        #expect(withUnknown.plainDataPayload == nil)
        withUnknown.unknownFields = UnknownStorage()
        #expect(withUnknown.plainDataPayload == Data([1, 2]))
    }

    @Test("a plain data envelope decodes by its header to what the protobuf decoder gives", arguments: [
        0, 1, 64, 127, 128, 16_383, 16_384, 65_518, 1 << 20,
    ])
    func plainDataDecoding(payloadCount: Int) throws {
        let payload = Data((0..<payloadCount).map { UInt8(truncatingIfNeeded: $0 &* 29) })
        let encoded = Envelope.data(payload).encoded
        #expect(Envelope.plainDataPayload(in: encoded) == payload)
        // From a slice whose indices do not start at 0, as a reassembled record's do.
        let sliced = (Data([0xFF]) + encoded).dropFirst()
        let decoded = try Envelope(decoding: sliced)
        #expect(decoded == (try Envelope(serializedBytes: encoded)))
        #expect(decoded.plainDataPayload == payload)
        #expect(decoded.plainDataPayload?.startIndex == 0)
    }

    @Test("anything but a plain data envelope goes to the protobuf decoder")
    func plainDataDecodingRefuses() throws {
        let data = Envelope.data(Data([1, 2])).encoded
        let cases: [Data] = [
            data + Data([0x78, 0x01]),                         // an unknown envelope field after the data
            Data([0x12, 0x06, 0x0A, 0x02, 1, 2, 0x78, 0x01]),  // an unknown field inside the data message
            Data([0x12, 0x05, 0x0A, 0x82, 0x00, 1, 2]),        // a non-minimal varint: still valid protobuf
            Envelope.ping(nonce: 7).encoded,
            Envelope.chat(id: Data(count: 16), text: "hi", sentAtMilliseconds: 1).encoded,
        ]
        for bytes in cases {
            let expected = try Envelope(serializedBytes: bytes)
            #expect(try Envelope(decoding: bytes) == expected)
        }
        #expect(Envelope.plainDataPayload(in: cases[0]) == nil)
        #expect(Envelope.plainDataPayload(in: cases[1]) == nil)
        #expect(Envelope.plainDataPayload(in: cases[3]) == nil)
        // Truncated or overlong: refused by the header check, then by the decoder.
        #expect(Envelope.plainDataPayload(in: data.dropLast()) == nil)
        #expect(throws: WireError.self) { try Envelope(decoding: data.dropLast()) }
        #expect(Envelope.plainDataPayload(in: Data([0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])) == nil)
    }

    @Test("the Envelope constructors produce the vector bytes")
    func constructors() throws {
        let vectors = Dictionary(uniqueKeysWithValues: try EnvelopeVectors.load().valid.map { ($0.name, $0.bytes) })
        let built: [String: Envelope] = [
            "chat": .chat(id: Data(0..<16), text: "héllo wörld — 你好 👋", sentAtMilliseconds: 1_700_000_000_123),
            "data": .data(try Data(hex: "00ff10fe7f80fbff")),
            "ping": .ping(nonce: 0x0123_4567_89ab_cdef),
            "ping_zero": .ping(nonce: 0),
            "ping_max_nonce": .ping(nonce: .max),
            "pong": .pong(nonce: 0x0123_4567_89ab_cdef),
            "goodbye": .goodbye(.duplicateConnection, reason: "another link to this node won the tie-break"),
            "goodbye_normal": .goodbye(.normal, reason: "user quit"),
            "invitation_accepted": .invitationAccepted,
            "goodbye_invitation_declined": .goodbye(.invitationDeclined, reason: "no thank"),
            "direct": .direct(channel: 16, payload: try Data(hex: "00ff10fe7f80fbff"), sentAtMilliseconds: 1_700_000_000_123),
            "direct_empty": .direct(channel: 17, payload: Data(), sentAtMilliseconds: 0),
            "direct_negative_time": .direct(channel: 65_536, payload: Data([1]), sentAtMilliseconds: -1),
        ]
        #expect(Set(built.keys) == Set(vectors.keys))
        for (name, envelope) in built {
            #expect(envelope.encoded.hexString == vectors[name], "\(name)")
        }
    }

    @Test("envelope from a newer peer decodes, keeps unknown fields and re-encodes byte for byte",
          arguments: try EnvelopeVectors.load().unknown)
    func unknownContent(_ vector: EnvelopeVectors.Unknown) throws {
        let bytes = try Data(hex: vector.bytes)
        let envelope = try Envelope(decoding: bytes)
        switch (vector.body, envelope.body) {
        case (nil, nil): break  // ignored per §6.2
        case ("chat", .chat(let chat)?):
            #expect(chat.messageID == Data(0..<16))
            #expect(!chat.unknownFields.data.isEmpty)
        default:
            Issue.record("body \(String(describing: envelope.body)), expected \(vector.body ?? "nil")")
        }
        #expect(envelope.encoded == bytes)
        #expect(try envelope.jsonString() == vector.json)
    }

    @Test("the unknown fields of a newer peer's Chat are kept in order")
    func chatUnknownFieldBytes() throws {
        let vector = try #require(try EnvelopeVectors.load().unknown.first { $0.name == "chat_with_unknown_fields" })
        let envelope = try Envelope(decoding: try Data(hex: vector.bytes))
        guard case .chat(let chat)? = envelope.body else {
            Issue.record("not a chat")
            return
        }
        #expect(chat.text == "hi")
        #expect(chat.sentAtMs == 1_700_000_000_123)
        // field 7 varint 42, field 9 "future"
        #expect(chat.unknownFields.data.hexString == "382a4a06667574757265")
    }

    @Test("invalid envelope bytes raise malformedMessage", arguments: try EnvelopeVectors.load().invalid)
    func invalidEnvelope(_ vector: EnvelopeVectors.Invalid) throws {
        let bytes = try Data(hex: vector.bytes)
        let error = #expect(throws: WireError.self) { try Envelope(decoding: bytes) }
        #expect(error?.code.name == vector.error)
        #expect(error?.closeCode == .protocolViolation)
        #expect(error?.description.contains("envelope") == true)
    }

    @Test("an envelope reassembled from records (a Data slice) decodes")
    func decodesFromSlices() throws {
        let envelope = Envelope.chat(id: Data(repeating: 9, count: 16), text: String(repeating: "ü", count: 40_000), sentAtMilliseconds: 1)
        var reassembler = MessageReassembler()
        var message: Data?
        for record in MessageFragmenter.records(for: envelope.encoded, maxFragment: 1_000) {
            message = try reassembler.append(try Record(decoding: record.encoded))
        }
        #expect(try Envelope(decoding: try #require(message)) == envelope)
        // A one-record message comes back as a slice of the transport plaintext.
        let single = try Record(decoding: Data([0x01]) + Envelope.ping(nonce: 5).encoded)
        #expect(try Envelope(decoding: single.data) == .ping(nonce: 5))
    }

    @Test("a Hello payload over 1,024 bytes is refused")
    func helloLimit() throws {
        var hello = HelloPayload()
        hello.protocolVersion = 1
        hello.serviceType = "meshchat"
        #expect(try HelloPayload(decoding: hello.serializedData()) == hello)
        hello.serviceType = String(repeating: "s", count: 1_100)
        let error = #expect(throws: WireError.self) { try HelloPayload(decoding: hello.serializedData()) }
        #expect(error?.code == .malformedMessage)
        #expect(error?.description.contains("1024") == true)
    }
}
