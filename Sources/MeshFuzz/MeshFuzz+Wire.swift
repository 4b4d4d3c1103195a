import struct Foundation.Data
import MeshLink
import MeshWire
import NIOCore
import SwiftProtobuf

extension MeshFuzz {
    /// Frames from a TCP stream (PROTOCOL.md §4): the parser reads every whole frame, each re-encodes
    /// to the bytes it came from, and an ABORT body decodes or is refused.
    @Sendable static func fuzzFrame(_ bytes: [UInt8]) {
        var buffer = ByteBuffer(bytes: bytes)
        let parser = FrameParser()
        while true {
            let start = buffer.readerIndex
            let frame: Frame?
            do { frame = try parser.parse(&buffer) } catch { return }
            guard let frame else { return }
            var encoded = ByteBuffer()
            frame.encode(into: &encoded)
            precondition(encoded.readableBytesView.elementsEqual(bytes[start..<buffer.readerIndex]), "a frame re-encodes to other bytes")
            if frame.type == .abort { _ = try? frame.abortContents() }
        }
    }

    /// Records (§5): each decoded record re-encodes to its bytes; the reassembler takes them in order
    /// (at most 64 KiB per message here), and a message fragmented and reassembled is itself.
    @Sendable static func fuzzRecord(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var reassembler = MessageReassembler(maxMessageSize: 65_536)
        while !input.isAtEnd {
            let plaintext = Data(input.chunk())
            guard let record = try? Record(decoding: plaintext) else { continue }
            precondition(record.encoded == plaintext, "a record re-encodes to other bytes")
            do { _ = try reassembler.append(record) } catch { reassembler = MessageReassembler(maxMessageSize: 65_536) }
        }
        let message = Data(bytes)
        guard message.count <= 65_536 else { return }
        var whole = MessageReassembler(maxMessageSize: 65_536)
        var out: Data?
        for record in MessageFragmenter.records(for: message, maxFragment: 1 + Int(bytes.first ?? 0)) {
            precondition(out == nil, "a message reassembled before its last record")
            out = try? whole.append(record)
        }
        precondition(out == message, "a fragmented message reassembles to other bytes")
    }

    /// The envelope (§6): a decoded envelope re-encodes and decodes to itself; the fast paths for
    /// plain data and direct envelopes agree with the protobuf decoder.
    @Sendable static func fuzzEnvelope(_ bytes: [UInt8]) {
        let message = Data(bytes)
        _ = Envelope.serializedSize(fromPrefix: message)
        if let envelope = try? Envelope(decoding: message) {
            let again = try? Envelope(decoding: envelope.encoded)
            precondition(again == envelope, "an envelope does not survive a round trip")
        }
        if let payload = Envelope.plainDataPayload(in: message) {
            precondition((try? Envelope(serializedBytes: message)) == Envelope.data(Data(payload)), "the data fast path disagrees with the protobuf decoder")
        }
        let framed = Data(Envelope.dataHeader(payloadCount: message.count)) + message
        precondition((try? Envelope(decoding: framed)) == Envelope.data(message), "dataHeader + payload is not that data envelope")
        // The direct fast path (§6.3) agrees with the protobuf decoder, and its header frames any payload.
        if let direct = Envelope.plainDirect(in: message) {
            let expected = Envelope.direct(channel: direct.channel, payload: Data(direct.payload), sentAtMilliseconds: direct.sentAtMilliseconds)
            precondition((try? Envelope(serializedBytes: message)) == expected, "the direct fast path disagrees with the protobuf decoder")
        }
        let channel = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let time = Int64(bitPattern: bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let direct = Data(Envelope.directHeader(channel: channel, sentAtMilliseconds: time, payloadCount: message.count)) + message
        precondition((try? Envelope(decoding: direct)) == Envelope.direct(channel: channel, payload: message, sentAtMilliseconds: time),
                     "directHeader + payload is not that direct envelope")
    }

    /// UDP datagrams (§8): a decoded header re-encodes to the bytes it came from; the replay window
    /// never accepts a counter twice.
    @Sendable static func fuzzDatagram(_ bytes: [UInt8]) {
        var buffer = ByteBuffer(bytes: bytes)
        if let header = try? DatagramHeader(decoding: &buffer) {
            precondition(header.encoded.elementsEqual(bytes.prefix(WireLimits.datagramHeaderSize)), "a datagram header re-encodes to other bytes")
        }
        var input = FuzzInput(bytes)
        var window = ReplayWindow(size: WireLimits.replayWindowSize)
        while !input.isAtEnd {
            let counter = input.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if window.record(counter) {
                precondition(!window.wouldAccept(counter), "the replay window accepts a counter twice")
            }
        }
    }

    /// Handshake payloads (§3): the clear Hello, the encrypted identity payload, and message 1 as a
    /// responder receives it.
    @Sendable static func fuzzHandshake(_ bytes: [UInt8]) {
        let payload = Data(bytes)
        if let hello = try? Meshchat_V1_Hello(decoding: payload) {
            precondition((try? Meshchat_V1_Hello(decoding: hello.encoded)) == hello, "a hello does not survive a round trip")
        }
        _ = try? Meshchat_V1_HandshakeIdentity(decoding: payload)
        guard bytes.count <= WireLimits.maxNoiseMessage,
              var responder = try? HandshakeStateMachine(role: .responder, configuration: FuzzKeys.handshake) else { return }
        _ = responder.receivedFrame(Frame(type: .handshake, body: ByteBuffer(bytes: bytes)))
    }
}
