import Foundation
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

// The shapes of Protocol/vectors/{frames,records,envelopes}.json (PROTOCOL.md §11).

/// `frames.json`.
struct FrameVectors: Decodable {
    struct Abort: Decodable {
        var code: String
        var codeValue: Int
        var reason: String
    }
    struct Valid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var type: String
        var body: String
        var abort: Abort?
        var testDescription: String { name }
    }
    struct MaxFrame: Decodable {
        var name: String
        var description: String
        var header: String
        var type: String
        var bodyLength: Int
    }
    struct Invalid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var error: String
        /// The number of leading bytes after which the parser must refuse the input.
        var refusedAfter: Int
        var messageContains: [String]
        var testDescription: String { name }
    }
    struct FrameSpec: Decodable {
        var type: String
        var body: String
    }
    struct Stream: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var frames: [FrameSpec]
        var testDescription: String { name }
    }
    var valid: [Valid]
    var maxFrame: MaxFrame
    var invalid: [Invalid]
    var stream: [Stream]

    static func load() throws -> FrameVectors { try VectorFiles.load("frames") }
}

/// `records.json`.
struct RecordVectors: Decodable {
    struct Valid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var final: Bool
        var data: String
        var testDescription: String { name }
    }
    struct Invalid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var error: String
        var messageContains: [String]
        var testDescription: String { name }
    }
    struct RecordSpec: Decodable {
        var offset: Int
        var length: Int
        var flags: UInt8
        var firstByte: UInt8?
        var lastByte: UInt8?
    }
    struct Fragmentation: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var messageLength: Int
        var pattern: String
        var maxRecordData: Int
        var records: [RecordSpec]
        var testDescription: String { name }
    }
    var valid: [Valid]
    var invalid: [Invalid]
    var fragmentation: [Fragmentation]

    static func load() throws -> RecordVectors { try VectorFiles.load("records") }
}

/// `envelopes.json`.
struct EnvelopeVectors: Decodable {
    struct Valid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var json: String
        var testDescription: String { name }
    }
    struct Unknown: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var json: String
        /// The `body` case expected after decoding, or nil when the envelope is to be ignored.
        var body: String?
        var testDescription: String { name }
    }
    struct Invalid: Decodable, CustomTestStringConvertible {
        var name: String
        var description: String
        var bytes: String
        var error: String
        var testDescription: String { name }
    }
    var valid: [Valid]
    var unknown: [Unknown]
    var invalid: [Invalid]

    static func load() throws -> EnvelopeVectors { try VectorFiles.load("envelopes") }
}

// MARK: - Small helpers shared by the MeshWire tests

extension ByteBuffer {
    /// A buffer holding the bytes of lowercase hex text.
    init(hex: String) throws {
        self.init(bytes: try [UInt8](hex: hex))
    }

    /// The readable bytes.
    var readableArray: [UInt8] { getBytes(at: readerIndex, length: readableBytes)! }
}

extension FrameType {
    /// The frame type with the name PROTOCOL.md §3.2 gives it, e.g. `HANDSHAKE`.
    init?(name: String) {
        guard let type = [FrameType.handshake, .transport, .abort, .retry].first(where: { $0.description == name }) else {
            return nil
        }
        self = type
    }
}

extension WireError.Code {
    /// The case name, as the vectors spell it (e.g. `frameTooLarge`).
    var name: String { String(describing: self) }
}

/// The test message pattern used by the vectors: byte i = i mod 251.
func patternBytes(_ count: Int, offset: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8((offset + $0) % 251) }
}

/// The error `FrameParser.parse` throws for `bytes`, or nil when it does not throw.
func parseError(_ bytes: [UInt8], parser: FrameParser = FrameParser()) -> WireError? {
    var buffer = ByteBuffer(bytes: bytes)
    do {
        _ = try parser.parse(&buffer)
        return nil
    } catch {
        return error
    }
}
