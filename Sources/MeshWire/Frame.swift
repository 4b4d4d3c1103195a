import NIOCore

/// The type byte of a TCP frame (PROTOCOL.md §3.2).
public enum FrameType: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A Noise handshake message; only during the handshake.
    case handshake = 0x01
    /// A Noise transport message carrying one record; only after the handshake.
    case transport = 0x02
    /// A clear-text close code and reason; only before the handshake completes.
    case abort = 0x03
    /// A responder's clear-text "write message 1 again with this cipher suite" (§4.11); body: the
    /// suite id, one byte. Only from the responder, once, in answer to message 1 (version 4).
    case retry = 0x04

    /// The frame type's name, e.g. `HANDSHAKE`.
    public var description: String {
        switch self {
        case .handshake: "HANDSHAKE"
        case .transport: "TRANSPORT"
        case .abort: "ABORT"
        case .retry: "RETRY"
        }
    }
}

/// One TCP frame: a type and a body (PROTOCOL.md §3.1).
///
/// A frame is a value; ``FrameParser`` reads frames from a byte stream and ``encode(into:)`` writes
/// one. Constructors check the body size against the protocol's limits.
public struct Frame: Hashable, Sendable {
    /// The frame type.
    public var type: FrameType
    /// The body: a Noise message, or a close code and reason for ``FrameType/abort``.
    public var body: ByteBuffer

    /// Creates a frame.
    /// - Parameters:
    ///   - type: the frame type.
    ///   - body: the body; at most ``WireLimits/maxNoiseMessage`` bytes.
    /// - Precondition: the body is within the limit (a programming error otherwise).
    public init(type: FrameType, body: ByteBuffer) {
        precondition(body.readableBytes <= WireLimits.maxNoiseMessage, "frame body of \(body.readableBytes) bytes")
        self.type = type
        self.body = body
    }

    /// Creates an ABORT frame (§3.2) with a close code and a reason, truncating the reason to
    /// ``WireLimits/maxAbortReasonBytes`` bytes at a character boundary.
    /// - Parameters:
    ///   - code: why the handshake is aborted.
    ///   - reason: a human-readable explanation.
    /// - Returns: the frame.
    public static func abort(_ code: CloseCode, reason: String) -> Frame {
        var buffer = ByteBuffer()
        buffer.writeInteger(code.rawValue)
        buffer.writeBytes(Self.truncatedUTF8(reason, maxBytes: WireLimits.maxAbortReasonBytes))
        return Frame(type: .abort, body: buffer)
    }

    /// Reads the close code and reason of an ABORT frame.
    /// - Returns: the close code (unknown codes read as ``CloseCode/protocolViolation``) and the
    ///   reason, with invalid UTF-8 repaired and anything past the limit ignored.
    /// - Throws: ``WireError`` `malformedFrame` when this is not an ABORT frame or its body is empty.
    public func abortContents() throws(WireError) -> (code: CloseCode, reason: String) {
        guard type == .abort else { throw .malformedFrame("expected an ABORT frame, got \(type)") }
        var body = self.body
        guard let raw: UInt8 = body.readInteger() else { throw .malformedFrame("ABORT frame without a close code") }
        let bytes = body.readBytes(length: min(body.readableBytes, WireLimits.maxAbortReasonBytes)) ?? []
        return (CloseCode(wireValue: UInt32(raw)), String(decoding: bytes, as: UTF8.self))
    }

    /// Creates a RETRY frame (§4.11) naming the cipher suite message 1 must be written with.
    /// - Parameter suite: the suite id.
    /// - Returns: the frame.
    public static func retry(suite: UInt8) -> Frame {
        Frame(type: .retry, body: ByteBuffer(bytes: [suite]))
    }

    /// Reads the suite id of a RETRY frame.
    /// - Returns: the suite id, unchecked (the caller decides whether it knows it).
    /// - Throws: ``WireError`` `malformedFrame` when this is not a RETRY frame or its body is not one byte.
    public func retrySuite() throws(WireError) -> UInt8 {
        guard type == .retry else { throw .malformedFrame("expected a RETRY frame, got \(type)") }
        guard body.readableBytes == 1, let suite: UInt8 = body.getInteger(at: body.readerIndex) else {
            throw .malformedFrame("RETRY frame body of \(body.readableBytes) bytes; expected 1")
        }
        return suite
    }

    /// Writes the frame, header and body, to the end of `buffer` (§3.1).
    /// - Parameter buffer: the buffer to append to.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(1 + body.readableBytes))
        buffer.writeInteger(type.rawValue)
        buffer.writeImmutableBuffer(body)
    }

    /// Writes a frame header for a body of `bodyLength` bytes; the caller writes the body after it.
    /// Used on the hot path to encrypt straight into the output buffer.
    /// - Parameters:
    ///   - type: the frame type.
    ///   - bodyLength: the number of body bytes that will follow.
    ///   - buffer: the buffer to append to.
    public static func writeHeader(type: FrameType, bodyLength: Int, into buffer: inout ByteBuffer) {
        precondition(bodyLength <= WireLimits.maxNoiseMessage)
        buffer.writeInteger(UInt32(1 + bodyLength))
        buffer.writeInteger(type.rawValue)
    }

    static func truncatedUTF8(_ text: String, maxBytes: Int) -> Substring.UTF8View {
        var end = text.startIndex
        var count = 0
        for index in text.indices {
            let next = text.index(after: index)
            let width = text.utf8.distance(from: index, to: next)
            if count + width > maxBytes { break }
            count += width
            end = next
        }
        return text[..<end].utf8
    }
}
