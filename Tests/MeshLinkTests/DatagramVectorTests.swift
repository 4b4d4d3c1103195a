import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// `Protocol/vectors/datagrams.json` (PROTOCOL.md §8.2, §11): datagrams sealed with a fixed key
/// and tag at counters 0, 1 and 1000.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.DatagramVectorTests`.
struct DatagramVectors: Codable, Equatable {
    struct Datagram: Codable, Equatable, CustomTestStringConvertible {
        var name: String
        var description: String
        var counter: UInt64
        var payload: String
        var header: String
        var datagram: String
        var testDescription: String { name }
    }

    var description: String
    var key: String
    var tag: String
    var datagrams: [Datagram]

    static let key = pattern(from: 0xd0)
    static let tag: UInt64 = 0x0123_4567_89ab_cdef
    /// The largest payload (§8.3): byte i is i mod 256.
    static let largestPayload = (0..<WireLimits.maxUnreliablePayload).map { UInt8(truncatingIfNeeded: $0) }

    static var keys: DatagramKeys {
        DatagramKeys(sendKey: SymmetricKey(data: key), receiveKey: SymmetricKey(data: key), sendTag: tag, receiveTag: tag)
    }

    /// Seals the vector payloads with ``DatagramSealer``, which numbers datagrams from 0.
    static func compute() throws -> DatagramVectors {
        var sealer = DatagramSealer(keys: keys)
        let cases: [(name: String, description: String, counter: UInt64, payload: [UInt8])] = [
            ("empty", "counter 0, empty payload: plaintext is just the kind byte 0x01", 0, []),
            ("hello", "counter 1, payload \"hello\"", 1, Array("hello".utf8)),
            ("largest", "counter 1000, the largest payload of 1,198 bytes (byte i = i mod 256): a datagram of exactly 1,232 bytes",
             1000, largestPayload),
        ]
        var datagrams: [Datagram] = []
        for item in cases {
            while sealer.counter < item.counter {
                var discard = ByteBuffer()
                try sealer.seal([UInt8](), into: &discard)
            }
            var buffer = ByteBuffer()
            try sealer.seal(item.payload, into: &buffer)
            let bytes = Array(buffer.readableBytesView)
            datagrams.append(Datagram(
                name: item.name, description: item.description, counter: item.counter, payload: item.payload.hexString,
                header: bytes.prefix(WireLimits.datagramHeaderSize).hexString, datagram: bytes.hexString))
        }
        return DatagramVectors(
            description: "UDP datagrams, PROTOCOL.md §8.2: type 0x01 | receiver tag u64 | counter u64 (big-endian) | "
                + "ChaChaPoly(key, nonce = 0x00000000 ‖ counter u64 little-endian, ad = the 17 header bytes, "
                + "plaintext = kind 0x01 ‖ payload) ‖ 16-byte tag. All datagrams use the same key and tag. Hex is lowercase.",
            key: key.hexString,
            tag: withUnsafeBytes(of: tag.bigEndian) { Array($0) }.hexString,
            datagrams: datagrams)
    }

    var json: OrderedJSON {
        .keyed([
            "description": .string(description),
            "key": .string(key),
            "tag": .string(tag),
            "datagrams": .array(datagrams.map {
                .keyed([
                    "name": .string($0.name), "description": .string($0.description), "counter": .integer(Int64($0.counter)),
                    "payload": .string($0.payload), "header": .string($0.header), "datagram": .string($0.datagram),
                ])
            }),
        ])
    }

    static func load() throws -> DatagramVectors {
        if writeVectors {
            try compute().json.rendered.write(to: try VectorFiles.url("datagrams"), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load("datagrams")
    }
}

@Suite("Datagram vectors", .serialized)
struct DatagramVectorTests {
    @Test("datagrams.json is what DatagramSealer produces, byte for byte")
    func fileMatchesSealer() throws {
        let file = try DatagramVectors.load()
        let computed = try DatagramVectors.compute()
        #expect(file.key == computed.key)
        #expect(file.tag == "0123456789abcdef")
        #expect(file.datagrams.map(\.counter) == [0, 1, 1000])
        for (recorded, fresh) in zip(file.datagrams, computed.datagrams) {
            #expect(recorded == fresh, "\(recorded.name)")
        }
        #expect(file.datagrams.count == computed.datagrams.count)
        #expect(file.description == computed.description)
    }

    @Test("each vector equals §8.2 computed with swift-crypto directly", arguments: try DatagramVectors.load().datagrams)
    func independentSeal(_ vector: DatagramVectors.Datagram) throws {
        let file = try DatagramVectors.load()
        let header = [0x01] + (try Array(hex: file.tag)) + withUnsafeBytes(of: vector.counter.bigEndian) { Array($0) }
        #expect(header.hexString == vector.header)
        let payload = try Array(hex: vector.payload)
        let box = try SpecChaChaPoly.seal([0x01] + payload, key: SymmetricKey(data: try Array(hex: file.key)), counter: vector.counter, ad: header)
        #expect((header + box).hexString == vector.datagram)
        #expect(try Array(hex: vector.datagram).count == 17 + 1 + payload.count + 16)
        if vector.name == "largest" {
            #expect(payload == DatagramVectors.largestPayload)
            #expect(try Array(hex: vector.datagram).count == WireLimits.maxDatagramSize)
        }
    }

    @Test("DatagramOpener opens every vector, in order and in reverse order (all within the window)", arguments: [false, true])
    func open(reversed: Bool) throws {
        let file = try DatagramVectors.load()
        var opener = DatagramOpener(keys: DatagramVectors.keys)
        for vector in reversed ? file.datagrams.reversed() : file.datagrams {
            var buffer = ByteBuffer(bytes: try Array(hex: vector.datagram))
            let header = try DatagramHeader(decoding: &buffer)
            #expect(header.tag == opener.tag)
            #expect(header.counter == vector.counter)
            #expect(try opener.open(header: header, box: buffer).hexString == vector.payload)
            let error = #expect(throws: DatagramOpener.Drop.self) { try opener.open(header: header, box: buffer) }
            #expect(error == .replayed)
        }
    }
}
