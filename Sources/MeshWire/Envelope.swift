import struct Foundation.Data
import SwiftProtobuf

/// One application-level message (PROTOCOL.md §6): the generated `meshchat.v1.Envelope`.
public typealias Envelope = Meshchat_V1_Envelope
/// The clear-text payload of handshake message 1 (§4.3).
public typealias HelloPayload = Meshchat_V1_Hello
/// The identity payload of handshake messages 2 and 3 (§4.3).
public typealias IdentityPayload = Meshchat_V1_HandshakeIdentity
/// An invitation carried in handshake message 3 (§4.8).
public typealias InvitationPayload = Meshchat_V1_Invitation

extension Meshchat_V1_Envelope {
    /// A chat line.
    /// - Parameters:
    ///   - id: 16 random bytes that name the message.
    ///   - text: the line, at most ``WireLimits/maxChatTextBytes`` bytes of UTF-8.
    ///   - sentAtMilliseconds: the sender's clock, Unix time in ms.
    /// - Returns: the envelope.
    public static func chat(id: Data, text: String, sentAtMilliseconds: Int64) -> Envelope {
        var chat = Meshchat_V1_Chat()
        chat.messageID = id
        chat.text = text
        chat.sentAtMs = sentAtMilliseconds
        var envelope = Envelope()
        envelope.body = .chat(chat)
        return envelope
    }

    /// Opaque application data.
    /// - Parameter payload: the bytes.
    /// - Returns: the envelope.
    public static func data(_ payload: Data) -> Envelope {
        var data = Meshchat_V1_Data()
        data.payload = payload
        var envelope = Envelope()
        envelope.body = .data(data)
        return envelope
    }

    /// A channel message for the link's other end only (§6.3, protocol version 7): the link's
    /// encryption is its end-to-end sealing, and it is never relayed.
    /// - Parameters:
    ///   - channel: the channel id (§13.12), not 0.
    ///   - payload: at most ``WireLimits/maxRelayedPayload`` bytes.
    ///   - sentAtMilliseconds: the sender's clock, Unix time in ms (the channel's replay window).
    /// - Returns: the envelope.
    public static func direct(channel: UInt32, payload: Data, sentAtMilliseconds: Int64) -> Envelope {
        var direct = Meshchat_V1_Direct()
        direct.channel = channel
        direct.payload = payload
        direct.sentAtMs = sentAtMilliseconds
        var envelope = Envelope()
        envelope.body = .direct(direct)
        return envelope
    }

    /// A keepalive probe (§7).
    /// - Parameter nonce: echoed by the pong.
    /// - Returns: the envelope.
    public static func ping(nonce: UInt64) -> Envelope {
        var ping = Meshchat_V1_Ping()
        ping.nonce = nonce
        var envelope = Envelope()
        envelope.body = .ping(ping)
        return envelope
    }

    /// The answer to a ping (§7).
    /// - Parameter nonce: the ping's nonce.
    /// - Returns: the envelope.
    public static func pong(nonce: UInt64) -> Envelope {
        var pong = Meshchat_V1_Pong()
        pong.nonce = nonce
        var envelope = Envelope()
        envelope.body = .pong(pong)
        return envelope
    }

    /// A close notice (§6.1, §9).
    /// - Parameters:
    ///   - code: why the sender closes.
    ///   - reason: a human-readable explanation.
    /// - Returns: the envelope.
    public static func goodbye(_ code: CloseCode, reason: String) -> Envelope {
        var goodbye = Meshchat_V1_Goodbye()
        goodbye.code = UInt32(code.rawValue)
        goodbye.reason = reason
        var envelope = Envelope()
        envelope.body = .goodbye(goodbye)
        return envelope
    }

    /// The invited side's acceptance of an invitation (§4.8).
    public static var invitationAccepted: Envelope {
        var envelope = Envelope()
        envelope.body = .invitationAccepted(Meshchat_V1_InvitationAccepted())
        return envelope
    }

    /// Decodes a reassembled message.
    /// - Parameter message: the bytes of one message (§5.2).
    /// - Throws: ``WireError`` `malformedMessage` when the bytes are not a valid envelope.
    ///
    /// A plain data envelope (``dataHeader(payloadCount:)`` then the payload, nothing else) is
    /// recognised by its header and not run through the protobuf decoder; the result is the same.
    public init(decoding message: Data) throws(WireError) {
        if let payload = Self.plainDataPayload(in: message) {
            // A copy, so that the payload's indices start at 0 as a decoded one's do.
            self = .data(Data(payload))
            return
        }
        if let direct = Self.plainDirect(in: message) {
            // The payload stays a slice of the message (its indices do not start at 0): the
            // receiver's session copies it once for the application (PROTOCOL.md §6.3).
            self = .direct(channel: direct.channel, payload: direct.payload, sentAtMilliseconds: direct.sentAtMilliseconds)
            return
        }
        do {
            self = try Envelope(serializedBytes: message)
        } catch {
            throw .malformedMessage("envelope", error)
        }
    }

    /// The serialized envelope.
    public var encoded: Data {
        // Serializing a message built from valid Swift values cannot fail.
        try! serializedData()
    }

    /// For a plain ``data(_:)`` envelope (no unknown fields), the payload; `nil` for anything else.
    ///
    /// Such an envelope serializes as ``dataHeader(payloadCount:)`` followed by the payload, so a
    /// sender can frame the payload without serializing a copy of it first.
    public var plainDataPayload: Data? {
        guard case .data(let data)? = body, unknownFields.data.isEmpty, data.unknownFields.data.isEmpty else { return nil }
        return data.payload
    }

    /// The bytes that precede the payload in a serialized ``data(_:)`` envelope: the `data` field's
    /// tag and length, and the `payload` field's tag and length (PROTOCOL.md §6.1, proto3 binary
    /// encoding; an empty payload is omitted, as SwiftProtobuf omits it).
    /// - Parameter payloadCount: the payload's size in bytes.
    /// - Returns: the header; `header + payload` equals `Envelope.data(payload).encoded`.
    public static func dataHeader(payloadCount: Int) -> [UInt8] {
        var header: [UInt8] = [0x12]
        guard payloadCount > 0 else {
            header.append(0)
            return header
        }
        let innerLength = 1 + varintSize(payloadCount) + payloadCount
        ProtobufVarint.append(UInt64(innerLength), to: &header)
        header.append(0x0A)
        ProtobufVarint.append(UInt64(payloadCount), to: &header)
        return header
    }

    /// The payload of a serialized plain ``data(_:)`` envelope, found by its header: the bytes after
    /// ``dataHeader(payloadCount:)`` when the header's lengths match the message's size exactly;
    /// `nil` for anything else (another body, unknown fields, a varint over 5 bytes), which the
    /// protobuf decoder then reads.
    /// - Parameter message: a serialized envelope.
    /// - Returns: the payload, a slice of `message`.
    public static func plainDataPayload(in message: Data) -> Data? {
        var index = message.startIndex
        guard index < message.endIndex, message[index] == 0x12 else { return nil }
        index += 1
        guard let inner = readVarint(message, at: &index), inner == message.endIndex - index else { return nil }
        if inner == 0 { return message[index...] }
        guard message[index] == 0x0A else { return nil }
        index += 1
        guard let count = readVarint(message, at: &index), count == message.endIndex - index else { return nil }
        return message[index...]
    }

    /// The size of a serialized envelope, read from its first bytes: an envelope's body is one
    /// length-delimited field (a `oneof` of messages), so its tag and length give the whole size.
    /// A hint for sizing a reassembly buffer: a sender that adds fields after the body (a newer
    /// peer's) makes it short, which costs only a reallocation.
    /// - Parameter prefix: at least the first few bytes of a serialized envelope.
    /// - Returns: the size, or `nil` when the prefix does not start with a length-delimited field.
    public static func serializedSize(fromPrefix prefix: Data) -> Int? {
        var index = prefix.startIndex
        guard let tag = readVarint(prefix, at: &index), tag & 0x07 == 2,
              let length = readVarint(prefix, at: &index) else { return nil }
        return index - prefix.startIndex + length
    }

    /// Reads a varint of at most 5 bytes (values below 2^35) at `index`, moving past it.
    private static func readVarint(_ bytes: Data, at index: inout Data.Index) -> Int? {
        var value = 0, shift = 0
        while index < bytes.endIndex, shift < 35 {
            let byte = bytes[index]
            index += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    private static func varintSize(_ value: Int) -> Int {
        var value = UInt64(value), size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }
}

extension Meshchat_V1_Hello {
    /// Decodes the payload of handshake message 1, refusing payloads over
    /// ``WireLimits/maxHelloSize`` bytes.
    /// - Parameter payload: the payload bytes.
    /// - Throws: ``WireError`` `malformedMessage`.
    public init(decoding payload: Data) throws(WireError) {
        guard payload.count <= WireLimits.maxHelloSize else {
            throw .malformedMessage("hello of \(payload.count) bytes (maximum \(WireLimits.maxHelloSize))", CancellationError())
        }
        do {
            self = try Meshchat_V1_Hello(serializedBytes: payload)
        } catch {
            throw .malformedMessage("hello", error)
        }
    }
}

extension Meshchat_V1_Hello {
    /// The serialized payload.
    public var encoded: Data { try! serializedData() }
}

extension Meshchat_V1_HandshakeIdentity {
    /// The serialized payload.
    public var encoded: Data { try! serializedData() }

    /// Decodes the payload of handshake message 2 or 3.
    /// - Parameter payload: the decrypted payload.
    /// - Throws: ``WireError`` `malformedMessage`.
    public init(decoding payload: Data) throws(WireError) {
        do {
            self = try Meshchat_V1_HandshakeIdentity(serializedBytes: payload)
        } catch {
            throw .malformedMessage("handshake identity", error)
        }
    }
}
