import struct Foundation.Data
import MeshSession

extension MeshFuzz {
    /// A stream packet (§18) as the streams shell decodes it: a decoded packet re-encodes and decodes
    /// to itself, and goes, twice, into an opener and a reader that have moved some bytes, then
    /// their timers.
    @Sendable static func fuzzStreams(_ bytes: [UInt8]) {
        if StreamWire.plainData(in: Data(bytes)) != nil {
            // The hand-read data packet is the protobuf decoder's (StreamWire.decode reads it by hand).
            let byDecoder = try? StreamWire.decodeWithProtobuf(Data(bytes))
            precondition(byDecoder == (try? StreamWire.decode(Data(bytes))), "the data packet fast path disagrees with the decoder")
        }
        guard let packet = try? StreamWire.decode(Data(bytes)) else { return }
        precondition((try? StreamWire.decode(StreamWire.encode(packet))) == packet, "a stream packet does not survive a round trip")
        precondition(StreamWire.encode(packet) == StreamWire.encodeWithProtobuf(packet), "the hand-built data packet is not the protobuf encoder's")
        var limits = StreamLimits()
        limits.window = 4_096
        limits.chunkSize = 1_024
        let now = ContinuousClock.now
        var sender = StreamSendStateMachine(id: packet.id, name: "fuzz", limits: limits, now: now)
        _ = sender.start(now: now)
        _ = sender.receivedAck(offset: 0, window: 2_048, fin: false, now: now)
        _ = sender.write(Data(count: 3_000), now: now)
        var reader = StreamReceiveStateMachine(id: packet.id, limits: limits, now: now)
        _ = reader.start()
        _ = reader.receivedData(offset: 0, bytes: Data(count: 1_024), fin: false, now: now)
        _ = reader.consumed(512, now: now)
        for _ in 0..<2 {
            switch packet {
            case .open:
                _ = reader.receivedOpen(now: now)
            case .data(_, let offset, let data, let fin):
                _ = reader.receivedData(offset: offset, bytes: data, fin: fin, now: now)
            case .ack(_, let offset, let window, let fin):
                _ = sender.receivedAck(offset: offset, window: window, fin: fin, now: now)
            case .close(_, let code, let reason, let fromReader):
                if fromReader { _ = sender.receivedClose(code: code, reason: reason) } else { _ = reader.receivedClose(code: code, reason: reason) }
            }
        }
        precondition(reader.heldBytes <= limits.window, "the reader holds more than its window")
        precondition(sender.heldBytes <= UInt64(limits.window), "the opener holds more than its window")
        _ = sender.timerFired(now: now + .seconds(3_600))
        _ = reader.timerFired(now: now + .seconds(3_600))
    }
}
