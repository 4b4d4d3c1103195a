import struct Foundation.Data
import MeshWire

/// The chunk message (PROTOCOL.md §16.3) in SwiftProtobuf's own layout, written and read by hand:
/// a chunk is the one message of a transfer that is large and frequent, and the protobuf encoder
/// and decoder would each copy its 60,000 bytes (twice when decoding). Every other message, and
/// any chunk in another layout, goes through SwiftProtobuf, which reads this layout the same way
/// (the fuzz corpus and ``ResourceWireTests`` check that both agree).
///
/// The layout (proto3: fields in number order, zero values omitted):
/// `0A 10 <transfer id: 16 bytes>` `1A <varint: chunk length>`
/// `[08 <varint: index>, omitted for 0]` `12 <varint: data length> <data>`.
package enum ResourceWire {
    /// The bytes before a chunk's data, at most: id field (18), body tag and length (≤ 6), index
    /// (≤ 6), data tag and length (≤ 6).
    package static let maxChunkHeader = 40

    /// A serialized `ResourceMessage` carrying chunk `index`, whose `length` bytes of data `fill`
    /// writes in place (a `pread` straight into the message: no copy of the data).
    /// - Parameters:
    ///   - id: the transfer id.
    ///   - index: the chunk's index.
    ///   - length: the chunk's byte count (> 0).
    ///   - fill: writes exactly `length` bytes into the buffer it is given, or throws.
    /// - Returns: the message's bytes, the same as SwiftProtobuf's serialization of it.
    package static func chunkMessage<E: Error>(id: ResourceID, index: Int, length: Int,
                                       fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) -> Data {
        var inner: [UInt8] = []
        inner.reserveCapacity(12)
        if index != 0 {
            inner.append(0x08)
            ProtobufVarint.append(UInt64(index), to: &inner)
        }
        inner.append(0x12)
        ProtobufVarint.append(UInt64(length), to: &inner)
        var header: [UInt8] = [0x0A, 0x10]
        header.reserveCapacity(maxChunkHeader)
        header.append(contentsOf: id.bytes)
        header.append(0x1A)
        ProtobufVarint.append(UInt64(inner.count + length), to: &header)
        header.append(contentsOf: inner)
        // Uninitialized memory (`Data(count:)` would zero the 60,000 bytes `fill` overwrites),
        // owned by the message from here on.
        let count = header.count + length
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        header.withUnsafeBytes { memory.copyMemory(from: $0) }
        do throws(E) {
            try fill(UnsafeMutableRawBufferPointer(rebasing: memory[header.count...]))
        } catch {
            memory.deallocate()
            throw error
        }
        return Data(bytesNoCopy: memory.baseAddress!, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// A chunk message in exactly the layout of ``chunkMessage(id:index:length:fill:)``, read
    /// without the protobuf decoder; `nil` for anything else (SwiftProtobuf reads that).
    /// - Parameter bytes: a message; every byte is untrusted.
    /// - Returns: the transfer id (16 bytes), the index and the data, both slices of `bytes`.
    package static func plainChunk(in bytes: Data) -> (transferID: Data, index: UInt32, data: Data)? {
        var index = bytes.startIndex
        guard bytes.endIndex - index > 18, bytes[index] == 0x0A, bytes[index + 1] == 0x10 else { return nil }
        let transferID = bytes[(index + 2)..<(index + 18)]
        index += 18
        guard index < bytes.endIndex, bytes[index] == 0x1A else { return nil }
        index += 1
        guard let inner = ProtobufVarint.read(bytes, at: &index), inner == UInt64(bytes.endIndex - index) else { return nil }
        var chunkIndex: UInt64 = 0
        if index < bytes.endIndex, bytes[index] == 0x08 {
            index += 1
            guard let value = ProtobufVarint.read(bytes, at: &index), value <= UInt64(UInt32.max) else { return nil }
            chunkIndex = value
        }
        guard index < bytes.endIndex, bytes[index] == 0x12 else { return nil }
        index += 1
        guard let count = ProtobufVarint.read(bytes, at: &index), count > 0, count == UInt64(bytes.endIndex - index) else { return nil }
        return (transferID, UInt32(chunkIndex), bytes[index...])
    }
}
