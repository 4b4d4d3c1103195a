import Foundation
import MeshTestSupport
@testable import MeshWire
import NIOCore
import Testing

/// Golden frames from `Protocol/vectors/frames.json` (PROTOCOL.md §3, §11).
@Suite("Frame vectors")
struct FrameVectorTests {
    @Test("valid frame decodes to its type and body and re-encodes byte for byte", arguments: try FrameVectors.load().valid)
    func validFrame(_ vector: FrameVectors.Valid) throws {
        let bytes = try [UInt8](hex: vector.bytes)
        // §3.1 checked independently of the parser: length u32 BE = 1 (type) + body.
        let body = try [UInt8](hex: vector.body)
        let length = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        #expect(length == 1 + body.count)
        #expect(bytes.count == 4 + length)

        var buffer = ByteBuffer(bytes: bytes)
        let frame = try #require(try FrameParser().parse(&buffer))
        #expect(buffer.readableBytes == 0)
        #expect(frame.type == FrameType(name: vector.type))
        #expect(frame.type.rawValue == bytes[4])
        #expect(frame.body.readableArray == body)

        var out = ByteBuffer()
        frame.encode(into: &out)
        #expect(out.readableArray == bytes)

        var header = ByteBuffer()
        Frame.writeHeader(type: frame.type, bodyLength: body.count, into: &header)
        #expect(header.readableArray == Array(bytes.prefix(5)))
    }

    @Test("ABORT vector carries its close code and reason", arguments: try FrameVectors.load().valid.filter { $0.abort != nil })
    func abortFrame(_ vector: FrameVectors.Valid) throws {
        let expected = try #require(vector.abort)
        var buffer = try ByteBuffer(hex: vector.bytes)
        let frame = try #require(try FrameParser().parse(&buffer))
        let (code, reason) = try frame.abortContents()
        #expect(code.description == expected.code)
        #expect(reason == expected.reason)
        #expect(frame.body.readableArray.first == UInt8(expected.codeValue))
        // A known code is built back to the same bytes by Frame.abort.
        if let known = CloseCode(rawValue: UInt8(expected.codeValue)) {
            var out = ByteBuffer()
            Frame.abort(known, reason: expected.reason).encode(into: &out)
            #expect(out.readableArray.hexString == vector.bytes)
        } else {
            #expect(code == .protocolViolation)
        }
    }

    @Test("the largest frame: a 65,535-byte TRANSPORT body, length 65,536")
    func maxFrame() throws {
        let vector = try FrameVectors.load().maxFrame
        #expect(vector.bodyLength == WireLimits.maxNoiseMessage)
        let body = patternBytes(vector.bodyLength)
        let frame = Frame(type: try #require(FrameType(name: vector.type)), body: ByteBuffer(bytes: body))
        var out = ByteBuffer()
        frame.encode(into: &out)
        #expect(out.readableBytes == 5 + 65_535)
        #expect(Array(out.readableArray.prefix(5)).hexString == vector.header)

        let parsed = try #require(try FrameParser().parse(&out))
        #expect(parsed == frame)
        #expect(out.readableBytes == 0)
    }

    @Test("invalid frame raises exactly the named error, naming the value and the limit",
          arguments: try FrameVectors.load().invalid)
    func invalidFrame(_ vector: FrameVectors.Invalid) throws {
        var buffer = try ByteBuffer(hex: vector.bytes)
        let error = #expect(throws: WireError.self) { try FrameParser().parse(&buffer) }
        #expect(error?.code.name == vector.error)
        for part in vector.messageContains {
            #expect(error?.description.contains(part) == true, "\"\(error?.description ?? "")\" lacks \"\(part)\"")
        }
    }

    @Test("invalid frame is refused as soon as the deciding byte arrives, not before",
          arguments: try FrameVectors.load().invalid)
    func refusedAfter(_ vector: FrameVectors.Invalid) throws {
        let bytes = try [UInt8](hex: vector.bytes)
        #expect(vector.refusedAfter <= bytes.count)
        // One byte short of the deciding byte: needs more, nothing consumed.
        var short = ByteBuffer(bytes: bytes.prefix(vector.refusedAfter - 1))
        #expect(try FrameParser().parse(&short) == nil)
        #expect(short.readerIndex == 0)
        // With the deciding byte: refused, without the rest of the frame.
        var exact = ByteBuffer(bytes: bytes.prefix(vector.refusedAfter))
        let error = #expect(throws: WireError.self) { try FrameParser().parse(&exact) }
        #expect(error?.code.name == vector.error)
    }

    @Test("stream vector decodes to its frames in order", arguments: try FrameVectors.load().stream)
    func stream(_ vector: FrameVectors.Stream) throws {
        var buffer = try ByteBuffer(hex: vector.bytes)
        var frames: [Frame] = []
        while let frame = try FrameParser().parse(&buffer) { frames.append(frame) }
        #expect(buffer.readableBytes == 0)
        #expect(frames.count == vector.frames.count)
        for (frame, spec) in zip(frames, vector.frames) {
            #expect(frame.type == FrameType(name: spec.type))
            #expect(frame.body.readableArray.hexString == spec.body)
        }
        var out = ByteBuffer()
        for frame in frames { frame.encode(into: &out) }
        #expect(out.readableArray.hexString == vector.bytes)
    }

    @Test("a frame length of exactly the maximum is accepted and one above it is refused, for a custom maximum too")
    func customMaximum() throws {
        let parser = FrameParser(maxFrameLength: 100)
        var atLimit = ByteBuffer(bytes: [0, 0, 0, 100, 0x01] + [UInt8](repeating: 7, count: 99))
        #expect(try parser.parse(&atLimit)?.body.readableBytes == 99)

        var above = ByteBuffer(bytes: [0, 0, 0, 101])
        let error = #expect(throws: WireError.self) { try parser.parse(&above) }
        #expect(error?.code == .frameTooLarge)
        #expect(error?.closeCode == .frameTooLarge)
        #expect(error?.description.contains("101") == true)
        #expect(error?.description.contains("100") == true, "\(error?.description ?? "") does not name the parser's limit")

        var protocolMax = ByteBuffer(bytes: [0x00, 0x01, 0x00, 0x00])  // 65,536: allowed, waits for more
        #expect(try FrameParser().parse(&protocolMax) == nil)
    }

    @Test("errors map to the close codes of §9")
    func errorCloseCodes() throws {
        #expect(parseError([0xff, 0xff, 0xff, 0xff])?.closeCode == .frameTooLarge)
        #expect(parseError([0, 0, 0, 0])?.closeCode == .protocolViolation)
        #expect(parseError([0, 0, 0, 1, 9])?.closeCode == .protocolViolation)
        #expect(parseError([0, 0, 0, 2, 2, 0])?.closeCode == .protocolViolation)
    }
}

/// ABORT frames built by ``Frame/abort(_:reason:)`` (§3.2, §9, §10).
@Suite("ABORT frames")
struct AbortFrameTests {
    /// The reason bytes of an ABORT frame (after the code byte).
    private func reasonBytes(_ frame: Frame) -> [UInt8] { Array(frame.body.readableArray.dropFirst()) }

    @Test("a reason of 300 \"é\" is cut to at most 256 bytes of valid UTF-8")
    func truncatesAtCharacterBoundary() throws {
        let frame = Frame.abort(.invalidIdentity, reason: String(repeating: "é", count: 300))
        let bytes = reasonBytes(frame)
        #expect(bytes.count <= WireLimits.maxAbortReasonBytes)
        #expect(bytes.count == 256)
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(text == String(repeating: "é", count: 128))
        #expect(frame.body.readableArray.first == CloseCode.invalidIdentity.rawValue)
    }

    @Test("a cut that would split a character stops before it", arguments: [
        ("a" + String(repeating: "é", count: 300), 255),                  // 1 + 127 × 2
        (String(repeating: "e\u{301}", count: 100), 255),                  // 85 × 3-byte grapheme
        (String(repeating: "€", count: 100), 255),                         // 85 × 3 bytes
        (String(repeating: "👋", count: 100), 256),                        // 64 × 4 bytes
        ("ab" + String(repeating: "👋", count: 100), 254),                 // 2 + 63 × 4
        (String(repeating: "x", count: 257), 256),
        (String(repeating: "x", count: 256), 256),
        ("short", 5),
        ("", 0),
    ])
    func truncationBoundaries(reason: String, expectedBytes: Int) throws {
        let bytes = reasonBytes(Frame.abort(.normal, reason: reason))
        #expect(bytes.count == expectedBytes)
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(reason.hasPrefix(text))
    }

    @Test("abortContents returns the code and reason Frame.abort wrote", arguments: CloseCode.allCases)
    func roundTrip(code: CloseCode) throws {
        let reason = "closing: \(code) — détails"
        var wire = ByteBuffer()
        Frame.abort(code, reason: reason).encode(into: &wire)
        let frame = try #require(try FrameParser().parse(&wire))
        let contents = try frame.abortContents()
        #expect(contents.code == code)
        #expect(contents.reason == reason)
    }

    @Test("a receiver ignores reason bytes beyond 256 and repairs invalid UTF-8")
    func receiverSide() throws {
        let long = Frame(type: .abort, body: ByteBuffer(bytes: [5] + [UInt8](repeating: 0x41, count: 300)))
        let contents = try long.abortContents()
        #expect(contents.code == .unsupportedVersion)
        #expect(contents.reason == String(repeating: "A", count: 256))

        let invalid = Frame(type: .abort, body: ByteBuffer(bytes: [1, 0x68, 0xff, 0x69]))
        #expect(try invalid.abortContents().reason == "h\u{FFFD}i")
    }

    @Test("abortContents refuses an empty ABORT body and a frame of another type")
    func malformed() throws {
        let empty = Frame(type: .abort, body: ByteBuffer())
        let emptyError = #expect(throws: WireError.self) { try empty.abortContents() }
        #expect(emptyError?.code == .malformedFrame)
        let handshake = Frame(type: .handshake, body: ByteBuffer(bytes: [0, 1, 2]))
        let error = #expect(throws: WireError.self) { try handshake.abortContents() }
        #expect(error?.code == .malformedFrame)
        #expect(error?.description.contains("HANDSHAKE") == true)
    }
}
