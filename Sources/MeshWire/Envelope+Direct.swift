import struct Foundation.Data
import SwiftProtobuf

/// The framing of `direct` envelopes without a protobuf pass over their payload (PROTOCOL.md §6.3).
///
/// A `Direct` serializes its payload last (field 3), so a serialized direct envelope is a short
/// header followed by the payload: a sender frames the payload in place (``directHeader(channel:sentAtMilliseconds:payloadCount:)``),
/// and a receiver finds it by the header (``plainDirect(in:)``) and keeps a slice of the record it
/// decrypted instead of a copy. The bytes are exactly SwiftProtobuf's (proto3: fields in number
/// order, zero values omitted); anything else — another order, a repeated or unknown field — is
/// left to the protobuf decoder, which reads it the same way.
extension Meshchat_V1_Envelope {
    /// A `direct` envelope's channel, time and payload, when it is a plain one (no unknown fields).
    public var plainDirect: (channel: UInt32, sentAtMilliseconds: Int64, payload: Data)? {
        guard case .direct(let direct)? = body, unknownFields.data.isEmpty, direct.unknownFields.data.isEmpty else { return nil }
        return (direct.channel, direct.sentAtMs, direct.payload)
    }

    /// The bytes that precede the payload in a serialized ``direct(channel:payload:sentAtMilliseconds:)``
    /// envelope: the body's tag and length, the channel and time fields (when not zero), and the
    /// payload's tag and length (when not empty).
    /// - Returns: the header; `header + payload` equals the serialized envelope.
    public static func directHeader(channel: UInt32, sentAtMilliseconds: Int64, payloadCount: Int) -> [UInt8] {
        var fields: [UInt8] = []
        fields.reserveCapacity(32)
        if channel != 0 {
            fields.append(0x08)
            ProtobufVarint.append(UInt64(channel), to: &fields)
        }
        if sentAtMilliseconds != 0 {
            fields.append(0x10)
            ProtobufVarint.append(UInt64(bitPattern: sentAtMilliseconds), to: &fields)
        }
        if payloadCount > 0 {
            fields.append(0x1A)
            ProtobufVarint.append(UInt64(payloadCount), to: &fields)
        }
        var header: [UInt8] = [0x42]
        header.reserveCapacity(fields.count + 6)
        ProtobufVarint.append(UInt64(fields.count + payloadCount), to: &header)
        header.append(contentsOf: fields)
        return header
    }

    /// The channel, time and payload of a serialized plain direct envelope, read from its header
    /// when it is exactly ``directHeader(channel:sentAtMilliseconds:payloadCount:)`` followed by
    /// the payload; `nil` for anything else (the protobuf decoder reads that).
    /// - Parameter message: a serialized envelope; every byte is untrusted.
    /// - Returns: the fields; the payload is a slice of `message`.
    public static func plainDirect(in message: Data) -> (channel: UInt32, sentAtMilliseconds: Int64, payload: Data)? {
        var index = message.startIndex
        guard index < message.endIndex, message[index] == 0x42 else { return nil }
        index += 1
        guard let inner = ProtobufVarint.read(message, at: &index), inner == UInt64(message.endIndex - index) else { return nil }
        var channel: UInt32 = 0
        var sentAt: Int64 = 0
        if index < message.endIndex, message[index] == 0x08 {
            index += 1
            guard let value = ProtobufVarint.read(message, at: &index) else { return nil }
            channel = UInt32(truncatingIfNeeded: value)
        }
        if index < message.endIndex, message[index] == 0x10 {
            index += 1
            guard let value = ProtobufVarint.read(message, at: &index) else { return nil }
            sentAt = Int64(bitPattern: value)
        }
        if index == message.endIndex { return (channel, sentAt, Data()) }
        guard message[index] == 0x1A else { return nil }
        index += 1
        guard let count = ProtobufVarint.read(message, at: &index), count > 0, count == UInt64(message.endIndex - index) else { return nil }
        return (channel, sentAt, message[index...])
    }
}

/// Protobuf's base-128 varints, for the decoders that read a known layout by hand (direct envelopes
/// here, stream data packets in the session) before leaving anything else to SwiftProtobuf.
public enum ProtobufVarint {
    /// Reads a varint of at most 10 bytes at `index`, moving past it.
    /// - Parameters:
    ///   - bytes: untrusted bytes.
    ///   - index: where the varint starts; moved past it (also when `nil` is returned).
    /// - Returns: the value, or `nil` when the bytes end inside it or it overflows 64 bits (a
    ///   tenth byte above 1, left to the protobuf decoder's judgement).
    public static func read(_ bytes: Data, at index: inout Data.Index) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// Appends `value` as a varint (1–10 bytes), least significant group first.
    /// - Parameters:
    ///   - value: the value.
    ///   - bytes: where it goes.
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
