import NIOCore

/// Reads frames from a TCP byte stream (PROTOCOL.md §3).
///
/// A pure value: feed it the bytes received so far and it returns each complete frame. It checks
/// the length field as soon as the 4 header bytes are there, so an oversized length is refused
/// before any of its body is buffered. Frames split at any byte boundary, and several frames in one
/// buffer, are handled.
public struct FrameParser: Sendable {
    /// The largest accepted `length` field.
    public let maxFrameLength: Int

    /// Creates a parser.
    /// - Parameter maxFrameLength: the largest accepted length field; defaults to the protocol's,
    ///   which is also the most it can be (a larger value is clamped, so no peer can send a frame
    ///   body larger than one Noise message).
    public init(maxFrameLength: Int = WireLimits.maxFrameLength) {
        self.maxFrameLength = min(maxFrameLength, WireLimits.maxFrameLength)
    }

    /// Reads one frame from the front of `buffer`, if a whole one is there.
    /// - Parameter buffer: received bytes; a complete frame is consumed from its reader index.
    /// - Returns: the frame, or `nil` when more bytes are needed (nothing is consumed then).
    /// - Throws: ``WireError`` for an empty or oversized length or an unknown frame type.
    public func parse(_ buffer: inout ByteBuffer) throws(WireError) -> Frame? {
        guard let length: UInt32 = buffer.getInteger(at: buffer.readerIndex) else { return nil }
        guard length > 0 else { throw .emptyFrame() }
        guard length <= maxFrameLength else { throw .frameTooLarge(length, maximum: maxFrameLength) }
        guard let rawType: UInt8 = buffer.getInteger(at: buffer.readerIndex + 4) else { return nil }
        guard let type = FrameType(rawValue: rawType) else { throw .unknownFrameType(rawType) }
        let bodyLength = Int(length) - 1
        guard buffer.readableBytes >= 5 + bodyLength else { return nil }
        buffer.moveReaderIndex(forwardBy: 5)
        let body = buffer.readSlice(length: bodyLength)!
        if type == .transport && bodyLength < WireLimits.minTransportBody {
            throw .malformedFrame("TRANSPORT body of \(bodyLength) bytes is shorter than the minimum \(WireLimits.minTransportBody)")
        }
        return Frame(type: type, body: body)
    }
}

/// A SwiftNIO decoder that turns inbound bytes into ``Frame``s with a ``FrameParser``.
///
/// - Important: event-loop only, like every channel handler.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    /// Decoded frames.
    public typealias InboundOut = Frame

    private let parser: FrameParser

    /// Creates a decoder.
    /// - Parameter maxFrameLength: the largest accepted length field.
    public init(maxFrameLength: Int = WireLimits.maxFrameLength) {
        self.parser = FrameParser(maxFrameLength: maxFrameLength)
    }

    /// Decodes one frame if a whole one is buffered.
    public mutating func decode(buffer: inout ByteBuffer) throws -> Frame? {
        try parser.parse(&buffer)
    }

    /// Decodes at end of stream; leftover bytes of a partial frame are dropped.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> Frame? {
        try parser.parse(&buffer)
    }
}
