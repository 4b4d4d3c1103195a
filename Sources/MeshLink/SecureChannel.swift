import struct Foundation.Data
import MeshNoise
import MeshWire
import NIOCore

/// Encrypts messages into TRANSPORT frames and decrypts frames back into messages
/// (PROTOCOL.md §5).
///
/// A pure value owning the two Noise cipher states of an established link. ``seal(_:into:)`` splits a
/// serialized ``Envelope`` into records of at most ``WireLimits/maxRecordData`` bytes, encrypts each
/// and appends the frames to a buffer; ``open(_:)`` decrypts one frame and returns a message when the
/// frame completes one.
public struct SecureChannel: Sendable {
    private var sender: NoiseCipherState
    private var receiver: NoiseCipherState
    private var reassembler = MessageReassembler()

    /// The highest nonce a cipher state may use before the link must close (§5.4).
    static let nonceLimit = UInt64.max - 1

    /// Creates a channel from the cipher states of a completed handshake.
    /// - Parameters:
    ///   - send: the cipher state for this side's messages.
    ///   - receive: the cipher state for the peer's messages.
    public init(send: NoiseCipherState, receive: NoiseCipherState) {
        self.sender = send
        self.receiver = receive
    }

    /// The number of bytes one message of `size` bytes occupies on the wire as frames.
    /// - Parameter size: the serialized message size.
    /// - Returns: the total frame bytes.
    public static func wireSize(ofMessage size: Int) -> Int {
        let records = max(1, (size + WireLimits.maxRecordData - 1) / WireLimits.maxRecordData)
        return size + records * (WireLimits.frameHeaderSize + 1 + WireLimits.authenticationTagSize)
    }

    /// Encrypts one message and appends its TRANSPORT frames to `buffer`.
    /// - Parameters:
    ///   - message: a serialized envelope, at most ``WireLimits/maxMessageSize`` bytes.
    ///   - buffer: the output buffer.
    /// - Throws: ``LinkCloseReason`` when the message is too large or a nonce would run out.
    public mutating func seal(_ message: Data, into buffer: inout ByteBuffer) throws(LinkCloseReason) {
        try seal(header: [], body: message, into: &buffer)
    }

    /// Encrypts an envelope; see ``seal(_:into:)``.
    ///
    /// A plain data or direct envelope is not serialized first: its records are cut straight from
    /// the payload behind the envelope header (the bytes on the wire are the same).
    /// - Parameters:
    ///   - envelope: the envelope.
    ///   - buffer: the output buffer.
    /// - Throws: ``LinkCloseReason`` as ``seal(_:into:)``.
    public mutating func seal(_ envelope: Envelope, into buffer: inout ByteBuffer) throws(LinkCloseReason) {
        if let payload = envelope.plainDataPayload {
            try seal(header: Envelope.dataHeader(payloadCount: payload.count), body: payload, into: &buffer)
        } else if let direct = envelope.plainDirect {
            let header = Envelope.directHeader(channel: direct.channel, sentAtMilliseconds: direct.sentAtMilliseconds,
                                               payloadCount: direct.payload.count)
            try seal(header: header, body: direct.payload, into: &buffer)
        } else {
            try seal(header: [], body: envelope.encoded, into: &buffer)
        }
    }

    /// Encrypts the message `header ‖ body`: each record's plaintext (flags, fragment) is built in
    /// one scratch buffer reused for all the message's records, then sealed and framed.
    private mutating func seal(header: [UInt8], body: Data, into buffer: inout ByteBuffer) throws(LinkCloseReason) {
        let total = header.count + body.count
        guard total <= WireLimits.maxMessageSize else {
            throw LinkCloseReason(.messageTooLarge,
                "message of \(total) bytes exceeds the maximum \(WireLimits.maxMessageSize)")
        }
        buffer.reserveCapacity(minimumWritableBytes: Self.wireSize(ofMessage: total))
        var record = Data(capacity: 1 + min(total, WireLimits.maxRecordData))
        var offset = 0  // into header ‖ body
        repeat {
            guard sender.nonce < Self.nonceLimit else {
                throw LinkCloseReason(.normal, "the sending nonce is exhausted; the link must be re-established")
            }
            let end = min(total, offset + WireLimits.maxRecordData)
            record.removeAll(keepingCapacity: true)
            record.append(end == total ? Record.finFlag : 0)
            if offset < header.count {
                record.append(contentsOf: header[offset..<min(end, header.count)])
            }
            if end > header.count {
                let from = body.startIndex + max(offset - header.count, 0)
                record.append(body[from..<(body.startIndex + end - header.count)])
            }
            let ciphertext: Data
            do {
                ciphertext = try sender.encrypt(record)
            } catch {
                throw LinkCloseReason(.protocolViolation, "could not encrypt a record: \(error)")
            }
            Frame.writeHeader(type: .transport, bodyLength: ciphertext.count, into: &buffer)
            buffer.writeBytes(ciphertext)
            offset = end
        } while offset < total
    }

    /// Decrypts one TRANSPORT frame.
    /// - Parameter frame: a frame received after the handshake.
    /// - Returns: a complete message when this frame ends one, otherwise `nil`.
    /// - Throws: ``LinkCloseReason`` for a wrong frame type, a failed authentication, a malformed
    ///   record or an oversized message; the link must close.
    public mutating func open(_ frame: Frame) throws(LinkCloseReason) -> Data? {
        guard frame.type == .transport else {
            throw LinkCloseReason(.protocolViolation, "\(frame.type) frame received after the handshake")
        }
        guard receiver.nonce < Self.nonceLimit else {
            throw LinkCloseReason(.protocolViolation, "the receiving nonce is exhausted")
        }
        let plaintext: Data
        do {
            // Straight from the frame's bytes: no intermediate copy of the ciphertext.
            plaintext = try frame.body.withUnsafeReadableBytes { bytes in
                Result { () throws(NoiseError) -> Data in try receiver.decrypt(bytes) }
            }.get()
        } catch {
            throw LinkCloseReason(.protocolViolation, "transport message failed to authenticate")
        }
        do {
            return try reassembler.append(Record(decoding: plaintext))
        } catch {
            throw LinkCloseReason(error)
        }
    }

    /// The bytes of a partly received message held so far.
    public var bufferedBytes: Int { reassembler.bufferedBytes }
}
