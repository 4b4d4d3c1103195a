import NIOCore

/// The clear header of a UDP datagram (PROTOCOL.md §8.2): type, receiver tag and counter.
///
/// The header is also the associated data of the datagram's AEAD box, so none of it can be
/// altered in transit.
public struct DatagramHeader: Hashable, Sendable {
    /// The only datagram type of version 1: an encrypted data datagram.
    public static let dataType: UInt8 = 0x01
    /// The plaintext kind byte for application data inside the box.
    public static let applicationDataKind: UInt8 = 0x01

    /// The receiver tag: which link the datagram belongs to (§8.1).
    public var tag: UInt64
    /// The per-direction counter, also the AEAD nonce.
    public var counter: UInt64

    /// Creates a header.
    /// - Parameters:
    ///   - tag: the receiver tag.
    ///   - counter: the datagram counter.
    public init(tag: UInt64, counter: UInt64) {
        self.tag = tag
        self.counter = counter
    }

    /// Appends the 17 header bytes to `buffer`.
    /// - Parameter buffer: the buffer to append to.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(Self.dataType)
        buffer.writeInteger(tag)
        buffer.writeInteger(counter)
    }

    /// The 17 header bytes.
    public var encoded: [UInt8] {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return buffer.readBytes(length: buffer.readableBytes)!
    }

    /// Reads a header from the front of a received datagram.
    /// - Parameter buffer: the datagram; the header is consumed, the box remains.
    /// - Throws: ``WireError`` `malformedDatagram` for a datagram that is too short or too long,
    ///   or of an unknown type.
    public init(decoding buffer: inout ByteBuffer) throws(WireError) {
        let size = buffer.readableBytes
        guard size <= WireLimits.maxDatagramSize else {
            throw .malformedDatagram("datagram of \(size) bytes exceeds the maximum \(WireLimits.maxDatagramSize)")
        }
        let minimum = WireLimits.datagramHeaderSize + WireLimits.authenticationTagSize + 1
        guard size >= minimum else {
            throw .malformedDatagram("datagram of \(size) bytes is shorter than the minimum \(minimum)")
        }
        let type: UInt8 = buffer.readInteger()!
        guard type == Self.dataType else {
            throw .malformedDatagram("unknown datagram type 0x\(String(type, radix: 16))")
        }
        self.tag = buffer.readInteger()!
        self.counter = buffer.readInteger()!
    }
}
