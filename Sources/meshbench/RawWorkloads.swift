import Crypto
import Foundation

/// The same sink and source over plain blocking sockets: meshchat's framing without encryption,
/// or (`sealed`) with each frame's body sealed with ChaChaPoly and nothing else (``RawSealing``).
/// A message is split into frames of at most 65,518 data bytes with a flags byte, as records are
/// (PROTOCOL.md §5.2), and all of one message's frames are written with one `write`.
enum RawWorkloads {
    static let maxFragment = 65_518

    static func writeMessage(_ fd: Int32, _ message: [UInt8], scratch: inout [UInt8], sealing: inout RawSealing?) throws {
        scratch.removeAll(keepingCapacity: true)
        var start = 0
        repeat {
            let end = min(message.count, start + maxFragment)
            let flags: UInt8 = end == message.count ? 0x01 : 0x00
            let bodyLength = 1 + end - start + (sealing == nil ? 0 : RawSealing.tagLength)
            let length = UInt32(1 + bodyLength)
            scratch.append(UInt8(length >> 24)); scratch.append(UInt8(length >> 16 & 0xff))
            scratch.append(UInt8(length >> 8 & 0xff)); scratch.append(UInt8(length & 0xff))
            scratch.append(0x02)
            if sealing != nil {
                // The record's plaintext is the flags byte and the data, as a meshchat record's is.
                try sealing!.seal(flags: flags, data: message[start..<end], appendingTo: &scratch)
            } else {
                scratch.append(flags)
                scratch.append(contentsOf: message[start..<end])
            }
            start = end
        } while start < message.count
        try RawSocket.writeAll(fd, scratch)
    }

    /// Reads one message; calls `fragment` for each piece of its data. `nil` at end of stream.
    static func readMessage(_ fd: Int32, header: inout [UInt8], body: inout [UInt8], opening: inout RawSealing?,
                            fragment: (UnsafeRawBufferPointer) -> Void) throws -> UInt8? {
        var kind: UInt8?
        while true {
            guard let (type, length) = try RawSocket.readFrame(fd, header: &header, body: &body) else { return nil }
            guard type == 0x02, length >= 1 else { throw RawSocket.Failure(description: "bad raw frame") }
            let last: Bool
            if opening != nil {
                let plaintext = try body.withUnsafeBytes { try opening!.open(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
                guard let flags = plaintext.first else { throw RawSocket.Failure(description: "empty sealed record") }
                last = flags & 0x01 != 0
                plaintext.withUnsafeBytes { raw in
                    let data = UnsafeRawBufferPointer(rebasing: raw[1...])
                    if kind == nil { kind = data.first }
                    fragment(data)
                }
            } else {
                last = body[0] & 0x01 != 0
                body.withUnsafeBytes { raw in
                    let data = UnsafeRawBufferPointer(rebasing: raw[1..<length])
                    if kind == nil { kind = data.first }
                    fragment(data)
                }
            }
            if last { return kind ?? 0 }
        }
    }

    static func sink(port: Int, verify: Bool, sealed: RawSealing.Cipher?) throws {
        let (listener, bound) = try RawSocket.listen(port: port)
        printJSON(["port": bound])
        var header = [UInt8](repeating: 0, count: 5)
        var body = [UInt8](repeating: 0, count: 65_536)
        var scratch: [UInt8] = []
        while true {
            let fd = try RawSocket.accept(listener)
            var result = SinkResult()
            var hasher = SHA256()
            var message: [UInt8] = []
            var sending = sealed.map(RawSealing.init)
            var receiving = sealed.map(RawSealing.init)
            while true {
                message.removeAll(keepingCapacity: true)
                var size = 0
                var isData: Bool?
                guard let kind = try readMessage(fd, header: &header, body: &body, opening: &receiving, fragment: { piece in
                    size += piece.count
                    // Only data messages are hashed, as the source hashes only what it sends as data.
                    if isData == nil { isData = piece.first == Kind.data.rawValue }
                    if verify, isData == true { hasher.update(bufferPointer: piece) }
                    if message.count < 64 { message.append(contentsOf: piece.prefix(64)) }
                }) else { break }
                switch Kind(rawValue: kind) {
                case .data?:
                    result.bytes += size
                    result.messages += 1
                case .ping?:
                    try writeMessage(fd, message, scratch: &scratch, sealing: &sending)
                case .end?:
                    result.sha256 = verify ? hex(hasher.finalize()) : ""
                    try writeMessage(fd, [Kind.result.rawValue] + Array(try JSONEncoder().encode(result)), scratch: &scratch, sealing: &sending)
                    result = SinkResult()
                    hasher = SHA256()
                default:
                    break
                }
            }
            close(fd)
        }
    }

    static func source(port: Int, workload: Workload, count: Int, size: Int, verify: Bool, sealed: RawSealing.Cipher?) throws -> SourceResult {
        let fd = try RawSocket.connect(port: port)
        defer { close(fd) }
        let maker = PayloadMaker(size: size)
        var scratch: [UInt8] = []
        var header = [UInt8](repeating: 0, count: 5)
        var body = [UInt8](repeating: 0, count: 65_536)
        var sending = sealed.map(RawSealing.init)
        var receiving = sealed.map(RawSealing.init)
        let transport = sealed.map { "raw-tcp-\($0.rawValue)" } ?? "raw-tcp"
        switch workload {
        case .bulk, .rate:
            var hasher = SHA256()
            let start = monotonicSeconds()
            for i in 0..<count {
                let payload = maker.payload(i)
                if verify { hasher.update(data: payload) }
                try writeMessage(fd, payload, scratch: &scratch, sealing: &sending)
            }
            try writeMessage(fd, [Kind.end.rawValue], scratch: &scratch, sealing: &sending)
            var reply: [UInt8] = []
            guard let kind = try readMessage(fd, header: &header, body: &body, opening: &receiving, fragment: { reply.append(contentsOf: $0) }),
                  kind == Kind.result.rawValue
            else { throw RawSocket.Failure(description: "no result from the raw sink") }
            let seconds = monotonicSeconds() - start
            let sinkResult = try JSONDecoder().decode(SinkResult.self, from: Data(reply.dropFirst()))
            return SourceResult(
                workload: workload.rawValue, transport: transport, messages: count, bytesPerMessage: size,
                seconds: seconds, messagesPerSecond: Double(count) / seconds,
                gbitPerSecond: Double(sinkResult.bytes) * 8 / seconds / 1e9,
                sha256Sent: verify ? hex(hasher.finalize()) : nil,
                sha256Received: verify ? sinkResult.sha256 : nil)
        case .latency:
            let ping = maker.payload(0, kind: .ping)
            var samples: [Double] = []
            samples.reserveCapacity(count)
            let start = monotonicSeconds()
            for _ in 0..<count {
                let t0 = monotonicSeconds()
                try writeMessage(fd, ping, scratch: &scratch, sealing: &sending)
                guard try readMessage(fd, header: &header, body: &body, opening: &receiving, fragment: { _ in }) != nil else {
                    throw RawSocket.Failure(description: "raw sink closed")
                }
                samples.append((monotonicSeconds() - t0) * 1e6)
            }
            let seconds = monotonicSeconds() - start
            samples.sort()
            return SourceResult(
                workload: workload.rawValue, transport: transport, messages: count, bytesPerMessage: size,
                seconds: seconds, messagesPerSecond: Double(count) / seconds, gbitPerSecond: 0,
                p50Microseconds: percentile(samples, 0.5), p99Microseconds: percentile(samples, 0.99))
        }
    }
}
