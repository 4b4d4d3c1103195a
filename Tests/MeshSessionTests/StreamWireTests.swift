import Foundation
@testable import MeshSession
import Testing

/// The stream data packet read without the protobuf decoder (StreamWire.plainData): the same
/// packet as the decoder's, or `nil` and the decoder reads it.
@Suite("Stream data packets read by hand")
struct StreamWireTests {
    static let packets: [StreamPacket] = [
        .data(id: 1, offset: 0, bytes: Data([1, 2, 3]), fin: false),
        .data(id: .max, offset: .max, bytes: Data((0..<63_936).map { UInt8(truncatingIfNeeded: $0) }), fin: true),
        .data(id: 77, offset: 128, bytes: Data(), fin: true),
        .data(id: 77, offset: 0, bytes: Data(), fin: false),
        .data(id: 1 << 40, offset: 1 << 33, bytes: Data(count: 16_384), fin: false),
    ]

    @Test("an encoded data packet reads the same by hand as by the decoder, from a slice too", arguments: 0..<packets.count)
    func same(index: Int) throws {
        let packet = Self.packets[index]
        let encoded = StreamWire.encode(packet)
        #expect(encoded == StreamWire.encodeWithProtobuf(packet), "the hand-built packet is the protobuf encoder's")
        let sliced = (Data([9, 9, 9]) + encoded).dropFirst(3)
        let plain = try #require(StreamWire.plainData(in: sliced))
        guard case .data(let id, let offset, let bytes, let fin) = packet else { return }
        #expect(plain.id == id && plain.offset == offset && plain.chunk == bytes && plain.fin == fin)
        let decoded = try StreamWire.decode(sliced)
        #expect(decoded == packet)
        if case .data(_, _, let chunk, _) = decoded, !chunk.isEmpty {
            #expect(chunk.startIndex > sliced.startIndex, "the chunk is a slice of the packet, not a copy")
            // The application's element starts at 0 (MeshInputStream copies the slice once).
            let element = MeshInputStream.joined([chunk], total: chunk.count)
            #expect(element.startIndex == 0 && element == bytes)
        }
    }

    @Test("the reader's elements: a chunk from 0 as it is, a slice copied to 0, chunks waiting together joined")
    func elements() {
        let whole = Data([1, 2, 3])
        #expect(MeshInputStream.joined([whole], total: 3) == whole)
        let slice = Data([0, 1, 2, 3, 4]).dropFirst(2)
        let rebased = MeshInputStream.joined([slice], total: 3)
        #expect(rebased.startIndex == 0 && rebased == Data([2, 3, 4]))
        let joined = MeshInputStream.joined([whole, slice, Data()], total: 6)
        #expect(joined.startIndex == 0 && joined == Data([1, 2, 3, 2, 3, 4]))
    }

    @Test("other packets and other layouts go to the decoder")
    func others() throws {
        #expect(StreamWire.plainData(in: StreamWire.encode(.ack(id: 3, offset: 1, window: 2, fin: false))) == nil)
        #expect(StreamWire.plainData(in: StreamWire.encode(.open(id: 3, name: "n"))) == nil)
        let layouts: [Data] = [
            Data([0x1A, 0x05, 0x08, 0x01, 0x12, 0x01, 0xAA, 0x08, 0x03]),  // the body before the id
            Data([0x08, 0x03, 0x1A, 0x07, 0x12, 0x01, 0xAA, 0x08, 0x01, 0x18, 0x01]),  // chunk before offset
            Data([0x08, 0x03, 0x1A, 0x05, 0x08, 0x01, 0x12, 0x01, 0xAA, 0x20, 0x01]),  // an unknown field after the body
            Data([0x08, 0x03, 0x1A, 0x06, 0x08, 0x01, 0x12, 0x01, 0xAA, 0x18]),  // fin without its value
            Data([0x08, 0x03, 0x1A, 0x07, 0x08, 0x01, 0x12, 0x01, 0xAA, 0x18, 0x02]),  // fin of 2
            Data([0x08, 0x03, 0x1A, 0x09, 0x08, 0x01, 0x12, 0x05, 0xAA]),  // a chunk longer than what is there
        ]
        for (index, bytes) in layouts.enumerated() {
            #expect(StreamWire.plainData(in: bytes) == nil, "layout \(index)")
            _ = try? StreamWire.decode(bytes)  // never a trap
        }
        // Valid protobuf in another layout: the decoder reads it.
        #expect(try StreamWire.decode(layouts[1]) == .data(id: 3, offset: 1, bytes: Data([0xAA]), fin: true))
        #expect(try StreamWire.decode(layouts[2]) == .data(id: 3, offset: 1, bytes: Data([0xAA]), fin: false))
        #expect(StreamWire.plainData(in: Data()) == nil)
        #expect(StreamWire.plainData(in: Data([0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x02])) == nil)
    }
}
