import Foundation
@testable import MeshSession
import MeshTestSupport
import Testing

/// `Protocol/vectors/streams.json` (PROTOCOL.md §17.1): every `StreamPacket` body as the channel
/// payload bytes. The tests encode each packet and compare byte for byte, and decode the file's bytes
/// back into the packet.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshSessionTests.StreamVectorTests`.
@Suite("Stream vectors")
struct StreamVectorTests {
    struct Case: Codable, Equatable {
        var name: String
        var description: String
        var payload: String
    }

    struct File: Codable, Equatable {
        var description: String
        var cases: [Case]
    }

    static let id: UInt64 = 0x0102_0304_0506_0708

    /// The packets, by name and description.
    static let packets: [(String, String, StreamPacket)] = {
        var packets: [(String, String, StreamPacket)] = [
            ("open", "§17.2 the opener names the stream \"log\"", .open(id: id, name: "log")),
            ("open-unnamed", "§17.2 a stream with an empty name", .open(id: id, name: "")),
            ("data", "§17.3 5 bytes at offset 65,536", .data(id: id, offset: 65_536, bytes: Data("hello".utf8), fin: false)),
            ("data-fin", "§17.5 the last 3 bytes, ending the stream at 65,544", .data(id: id, offset: 65_541, bytes: Data("bye".utf8), fin: true)),
            ("fin", "§17.5 the end alone, at offset 65,544", .data(id: id, offset: 65_544, bytes: Data(), fin: true)),
            ("probe", "§17.6 an empty probe at offset 1,048,576", .data(id: id, offset: 1_048_576, bytes: Data(), fin: false)),
            ("ack-first", "§17.2 acceptance: nothing received, a window of 1 MiB", .ack(id: id, offset: 0, window: 1_048_576, fin: false)),
            ("ack", "§17.4 65,541 bytes received, 983,035 more may be sent", .ack(id: id, offset: 65_541, window: 983_035, fin: false)),
            ("ack-fin", "§17.5 every byte up to the end at 65,544 held", .ack(id: id, offset: 65_544, window: 983_032, fin: true)),
            ("close-finished", "§17.5 the reader's application read everything", .close(id: id, code: .finished, reason: "", fromReader: true)),
        ]
        let reasons: [StreamCloseCode: String] = [
            .cancelled: "user pressed ^C", .refused: "this node does not accept streams",
            .busy: "16 streams from this node already (limit 16)", .unknownStream: "no stream here",
            .protocolViolation: "bytes up to 2097153 exceed the window's end 2097152",
            .timedOut: "no answer from the reader for 20 seconds", .idle: "no byte moved for 300 seconds",
            .closed: "the session stopped",
        ]
        for code in [StreamCloseCode.cancelled, .refused, .busy, .unknownStream, .protocolViolation, .timedOut, .idle, .closed] {
            let fromReader = code != .cancelled && code != .timedOut
            packets.append(("close-\(code)", "§17.5 close \(code.rawValue) (\(code)) from the \(fromReader ? "reader" : "opener")",
                            .close(id: id, code: code, reason: reasons[code] ?? "", fromReader: fromReader)))
        }
        return packets
    }()

    static func compute() -> File {
        File(description: "PROTOCOL.md §17.1: StreamPacket (Protocol/streams.proto) bodies as the payload of a sealed message on channel 16; stream id 0x0102030405060708.",
             cases: packets.map { Case(name: $0.0, description: $0.1, payload: Hex.encode(StreamWire.encode($0.2))) })
    }

    @Test("every stream packet encodes to the file's bytes and decodes back")
    func vectors() throws {
        let computed = Self.compute()
        if ProcessInfo.processInfo.environment["MESHCHAT_WRITE_VECTORS"] != nil {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            var data = try encoder.encode(computed)
            data.append(0x0A)
            try data.write(to: try VectorFiles.url("streams"))
        }
        let file = try JSONDecoder().decode(File.self, from: try VectorFiles.data("streams"))
        #expect(file == computed)
        for (name, _, packet) in Self.packets {
            let stored = try #require(file.cases.first { $0.name == name }, "no case \(name)")
            #expect(try StreamWire.decode(Data(hex: stored.payload)) == packet, "\(name)")
        }
    }

    @Test("hostile payloads are refused with a reason, never a trap",
          arguments: ["", "08", "0800", "0801", "080112", "ff", "0801" + "1a" + "ffffffff0f"])
    func hostile(hex: String) throws {
        #expect(throws: StreamWire.DecodeError.self) { try StreamWire.decode(try Data(hex: hex)) }
    }

    @Test("a name over 255 bytes and a chunk over the maximum are refused")
    func oversized() {
        func varint(_ value: Int) -> Data {
            var value = value, bytes = Data()
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
            return bytes
        }
        func field(_ tag: UInt8, _ body: Data) -> Data { Data([tag]) + varint(body.count) + body }
        let name = field(0x12, field(0x0A, Data(repeating: 0x6E, count: 256)))
        #expect(throws: StreamWire.DecodeError.self) { try StreamWire.decode(Data([0x08, 0x01]) + name) }
        let fits = field(0x1A, field(0x12, Data(count: StreamWire.maxChunkSize)))
        #expect((try? StreamWire.decode(Data([0x08, 0x01]) + fits)) != nil, "the largest chunk is accepted")
        let chunk = field(0x1A, field(0x12, Data(count: StreamWire.maxChunkSize + 1)))
        #expect(throws: StreamWire.DecodeError.self) { try StreamWire.decode(Data([0x08, 0x01]) + chunk) }
    }
}
