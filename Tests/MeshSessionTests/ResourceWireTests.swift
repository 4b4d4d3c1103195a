import Foundation
@testable import MeshSession
import MeshWire
import Testing

/// The chunk message written and read without SwiftProtobuf (ResourceWire, PROTOCOL.md §16.3):
/// the same bytes as SwiftProtobuf's serialization, read the same as its decoder reads them.
@Suite("Resource chunk messages written and read by hand")
struct ResourceWireTests {
    /// (index, length) pairs: index 0 (omitted on the wire), one- to five-byte varints, short and full chunks.
    static let chunks: [(Int, Int)] = [(0, 1), (0, 60_000), (1, 1_024), (127, 60_000), (128, 5), (16_384, 59_999), (286_331, 60_000), (Int(UInt32.max), 3)]

    @Test("a chunk message is SwiftProtobuf's serialization, byte for byte, and reads back the same by hand (from a slice too) and by the decoder",
          arguments: 0..<chunks.count)
    func sameAsProtobuf(which: Int) throws {
        let (index, length) = Self.chunks[which]
        let id = ResourceID.random()
        let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ which) })
        let written = ResourceWire.chunkMessage(id: id, index: index, length: length) { (buffer: UnsafeMutableRawBufferPointer) in
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
        var message = ResourceMessagePayload()
        message.transferID = id.bytes
        var chunk = ResourceChunkPayload()
        chunk.index = UInt32(index)
        chunk.data = data
        message.chunk = chunk
        #expect(written == message.serialized)
        let sliced = (Data([7, 7]) + written).dropFirst(2)
        let plain = try #require(ResourceWire.plainChunk(in: sliced))
        #expect(plain.transferID == id.bytes && plain.index == UInt32(index) && plain.data == data)
        let decoded = try ResourceMessagePayload(decoding: sliced, what: "resource message")
        #expect(decoded.chunk.index == UInt32(index) && decoded.chunk.data == data && decoded.transferID == id.bytes)
    }

    @Test("a failing read fails the message")
    func failingRead() {
        struct Failed: Error {}
        #expect(throws: Failed.self) {
            _ = try ResourceWire.chunkMessage(id: .random(), index: 3, length: 10) { (_: UnsafeMutableRawBufferPointer) throws(Failed) in throw Failed() }
        }
    }

    @Test("other messages and other layouts are left to the decoder, and never trap")
    func others() throws {
        let id = Data(repeating: 0xAB, count: 16)
        var ack = ResourceMessagePayload()
        ack.transferID = id
        var payload = ResourceAckPayload()
        payload.next = 3
        ack.ack = payload
        #expect(ResourceWire.plainChunk(in: ack.serialized) == nil)
        let prefix: [UInt8] = [0x0A, 0x10] + [UInt8](repeating: 0xAB, count: 16)
        let layouts: [[UInt8]] = [
            [0x1A, 0x05, 0x08, 0x01, 0x12, 0x01, 0xAA] + prefix,  // the body before the id
            prefix + [0x1A, 0x05, 0x12, 0x01, 0xAA, 0x08, 0x01],  // data before index
            prefix + [0x1A, 0x03, 0x12, 0x01, 0xAA, 0x20, 0x01],  // an unknown field after the body
            prefix + [0x1A, 0x05, 0x08, 0x01, 0x12, 0x05, 0xAA],  // data longer than what is there
            prefix + [0x1A, 0x04, 0x08, 0x01, 0x12, 0x00],  // empty data
            prefix + [0x1A, 0x0E, 0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01, 0x12, 0x01, 0xAA],  // an index over 32 bits
            [0x0A, 0x0F] + [UInt8](repeating: 0xAB, count: 15) + [0x1A, 0x03, 0x12, 0x01, 0xAA],  // a 15-byte id
            prefix,
            [],
        ]
        for (index, bytes) in layouts.enumerated() {
            #expect(ResourceWire.plainChunk(in: Data(bytes)) == nil, "layout \(index)")
            _ = try? ResourceMessagePayload(decoding: Data(bytes), what: "resource message")
        }
        // Valid protobuf in another layout: the decoder reads it.
        let other = try ResourceMessagePayload(decoding: Data(layouts[1]), what: "resource message")
        #expect(other.chunk.index == 1 && other.chunk.data == Data([0xAA]))
    }
}
