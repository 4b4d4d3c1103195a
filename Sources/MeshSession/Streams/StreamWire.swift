import struct Foundation.Data
import MeshWire
import SwiftProtobuf

/// One stream packet (PROTOCOL.md §18.1), decoded: the typed form of `StreamPacket` in
/// `Protocol/streams.proto`.
package enum StreamPacket: Sendable, Hashable {
    /// §18.2 opener → reader.
    case open(id: UInt64, name: String)
    /// §18.3 opener → reader.
    case data(id: UInt64, offset: UInt64, bytes: Data, fin: Bool)
    /// §18.4 reader → opener.
    case ack(id: UInt64, offset: UInt64, window: UInt64, fin: Bool)
    /// §18.5 either way.
    case close(id: UInt64, code: StreamCloseCode, reason: String, fromReader: Bool)

    /// The stream id.
    package var id: UInt64 {
        switch self {
        case .open(let id, _), .data(let id, _, _, _), .ack(let id, _, _, _), .close(let id, _, _, _): id
        }
    }
}

/// The codec and size limits of stream packets (PROTOCOL.md §18.1, §18.7).
package enum StreamWire {
    /// Bytes a stream packet adds around a chunk, at most (ids, offsets and tags as varints).
    static let framing = 64
    /// The largest chunk in one data packet: the channel payload limit less ``framing``.
    static let maxChunkSize = Session.maxChannelPayload - framing
    /// The longest stream name, in bytes of UTF-8.
    static let maxNameBytes = 255
    /// The longest close reason, in bytes of UTF-8 (longer ones are cut by the sender and the reader).
    static let maxReasonBytes = 256

    /// Why a packet could not be decoded.
    package struct DecodeError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Encodes a packet.
    package static func encode(_ packet: StreamPacket) -> Data {
        if case .data(let id, let offset, let bytes, let fin) = packet, id != 0 {
            return encodeData(id: id, offset: offset, bytes: bytes, fin: fin)
        }
        return encodeWithProtobuf(packet)
    }

    /// A data packet in SwiftProtobuf's own layout (the bytes ``encodeWithProtobuf(_:)`` makes,
    /// which ``plainData(in:)`` reads), built by hand: the chunk is copied once into a buffer of
    /// the packet's size, where the protobuf encoder zero-fills its buffer before writing it.
    static func encodeData(id: UInt64, offset: UInt64, bytes: Data, fin: Bool) -> Data {
        var fields: [UInt8] = []
        fields.reserveCapacity(24)
        if offset != 0 {
            fields.append(0x08)
            ProtobufVarint.append(offset, to: &fields)
        }
        if !bytes.isEmpty {
            fields.append(0x12)
            ProtobufVarint.append(UInt64(bytes.count), to: &fields)
        }
        let bodyLength = fields.count + bytes.count + (fin ? 2 : 0)
        var head: [UInt8] = [0x08]
        head.reserveCapacity(24)
        ProtobufVarint.append(id, to: &head)
        head.append(0x1A)
        ProtobufVarint.append(UInt64(bodyLength), to: &head)
        var packet = Data(capacity: head.count + bodyLength)
        packet.append(contentsOf: head)
        packet.append(contentsOf: fields)
        packet.append(bytes)
        if fin { packet.append(contentsOf: [0x18, 0x01]) }
        return packet
    }

    /// ``encode(_:)`` through the protobuf encoder for every packet (for tests and the fuzzer,
    /// which check that both agree).
    package static func encodeWithProtobuf(_ packet: StreamPacket) -> Data {
        var message = Meshchat_Streams_V1_StreamPacket()
        message.streamID = packet.id
        switch packet {
        case .open(_, let name):
            message.open = .with { $0.name = name }
        case .data(_, let offset, let bytes, let fin):
            message.data = .with {
                $0.offset = offset
                $0.bytes = bytes
                $0.fin = fin
            }
        case .ack(_, let offset, let window, let fin):
            message.ack = .with {
                $0.offset = offset
                $0.window = window
                $0.fin = fin
            }
        case .close(_, let code, let reason, let fromReader):
            message.close = .with {
                $0.code = code.rawValue
                $0.reason = truncated(reason)
                $0.fromReader = fromReader
            }
        }
        // Encoding a message built here cannot fail (no required fields, no unknown extensions).
        return (try? message.serializedData()) ?? Data()
    }

    /// Decodes a packet from another node; every byte is untrusted.
    /// - Throws: ``DecodeError`` naming what was wrong: malformed protobuf, no body, stream id 0,
    ///   a name over 255 bytes, a chunk over ``maxChunkSize``.
    package static func decode(_ bytes: Data) throws(DecodeError) -> StreamPacket {
        if let data = plainData(in: bytes) {
            guard data.id != 0 else { throw DecodeError(description: "stream id 0") }
            guard data.chunk.count <= maxChunkSize else {
                throw DecodeError(description: "chunk of \(data.chunk.count) bytes exceeds \(maxChunkSize)")
            }
            // No copy: the chunk is a slice of the packet (of the received record), which the
            // reader copies once when its application takes it (MeshInputStream).
            return .data(id: data.id, offset: data.offset, bytes: data.chunk, fin: data.fin)
        }
        return try decodeWithProtobuf(bytes)
    }

    /// ``decode(_:)`` without the data packet's fast path: the protobuf decoder reads every packet
    /// (for the fuzzer, which checks that both agree).
    package static func decodeWithProtobuf(_ bytes: Data) throws(DecodeError) -> StreamPacket {
        let message: Meshchat_Streams_V1_StreamPacket
        do {
            message = try Meshchat_Streams_V1_StreamPacket(serializedBytes: bytes)
        } catch {
            throw DecodeError(description: "malformed stream packet of \(bytes.count) bytes")
        }
        let id = message.streamID
        guard id != 0 else { throw DecodeError(description: "stream id 0") }
        switch message.body {
        case .open(let open):
            guard open.name.utf8.count <= maxNameBytes else {
                throw DecodeError(description: "stream name of \(open.name.utf8.count) bytes exceeds \(maxNameBytes)")
            }
            return .open(id: id, name: open.name)
        case .data(let data):
            guard data.bytes.count <= maxChunkSize else {
                throw DecodeError(description: "chunk of \(data.bytes.count) bytes exceeds \(maxChunkSize)")
            }
            return .data(id: id, offset: data.offset, bytes: data.bytes, fin: data.fin)
        case .ack(let ack):
            return .ack(id: id, offset: ack.offset, window: ack.window, fin: ack.fin)
        case .close(let close):
            return .close(id: id, code: StreamCloseCode(wire: close.code), reason: truncated(close.reason), fromReader: close.fromReader)
        case nil:
            throw DecodeError(description: "stream packet without a body")
        }
    }

    /// A data packet in SwiftProtobuf's own layout (proto3: fields in number order, zero values
    /// omitted), read without the protobuf decoder, which would copy the chunk twice; `nil` for
    /// anything else, which the decoder then reads (it reads this layout the same way).
    /// - Parameter bytes: a packet; every byte is untrusted.
    /// - Returns: the fields; `chunk` is a slice of `bytes`.
    package static func plainData(in bytes: Data) -> (id: UInt64, offset: UInt64, chunk: Data, fin: Bool)? {
        var index = bytes.startIndex
        guard index < bytes.endIndex, bytes[index] == 0x08 else { return nil }
        index += 1
        guard let id = ProtobufVarint.read(bytes, at: &index), index < bytes.endIndex, bytes[index] == 0x1A else { return nil }
        index += 1
        guard let length = ProtobufVarint.read(bytes, at: &index), length == UInt64(bytes.endIndex - index) else { return nil }
        var offset: UInt64 = 0
        var chunk = Data()
        var fin = false
        if index < bytes.endIndex, bytes[index] == 0x08 {
            index += 1
            guard let value = ProtobufVarint.read(bytes, at: &index) else { return nil }
            offset = value
        }
        if index < bytes.endIndex, bytes[index] == 0x12 {
            index += 1
            guard let count = ProtobufVarint.read(bytes, at: &index), count <= UInt64(bytes.endIndex - index) else { return nil }
            let end = index + Int(count)
            chunk = bytes[index..<end]
            index = end
        }
        if index < bytes.endIndex, bytes[index] == 0x18 {
            index += 1
            guard index < bytes.endIndex, bytes[index] == 0x01 else { return nil }
            index += 1
            fin = true
        }
        guard index == bytes.endIndex else { return nil }
        return (id, offset, chunk, fin)
    }

    /// `text` cut to ``maxReasonBytes`` bytes of UTF-8 on a character boundary.
    static func truncated(_ text: String) -> String {
        guard text.utf8.count > maxReasonBytes else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= maxReasonBytes else { break }
            result.append(character)
        }
        return result
    }
}
