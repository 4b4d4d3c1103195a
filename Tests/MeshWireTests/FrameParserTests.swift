import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// A receiver as a link would run one: appends each TCP read to a buffer and parses every whole frame.
///
/// It records whether a `nil` ("need more") ever moved the reader index, which would mean a partial
/// frame had been consumed.
struct Receiver {
    var parser = FrameParser()
    var buffer = ByteBuffer()
    var frames: [Frame] = []
    var consumedPartialFrame = false
    var reads = 0

    mutating func receive(_ chunk: some Collection<UInt8>) throws(WireError) {
        reads += 1
        buffer.writeBytes(chunk)
        while true {
            let before = buffer.readerIndex
            guard let frame = try parser.parse(&buffer) else {
                if buffer.readerIndex != before { consumedPartialFrame = true }
                break
            }
            frames.append(frame)
        }
        if buffer.readerIndex > 1 << 16 { buffer.discardReadBytes() }
    }
}

/// Feeds `bytes` in chunks whose sizes come from `nextSize` (which may return 0: an empty read).
func receive(_ bytes: [UInt8], chunkSizes nextSize: () -> Int) throws(WireError) -> Receiver {
    var receiver = Receiver()
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + nextSize())
        try receiver.receive(bytes[start..<end])
        start = end
    }
    return receiver
}

/// 1,000 frames of random types and sizes, biased to small bodies, always including a
/// 65,535-byte body, plus their encoding.
func randomFrameStream(seed: UInt64, count: Int = 1_000) -> (frames: [Frame], bytes: [UInt8]) {
    var rng = SplitMix64(seed: seed)
    var frames: [Frame] = []
    for index in 0..<count {
        let type = [FrameType.handshake, .transport, .abort].randomElement(using: &rng)!
        let size: Int
        switch Int.random(in: 0..<100, using: &rng) {
        case _ where index == count / 2: size = WireLimits.maxNoiseMessage
        case 0..<2: size = Int.random(in: 4_097...WireLimits.maxNoiseMessage, using: &rng)
        case 2..<20: size = Int.random(in: 513...4_096, using: &rng)
        default: size = Int.random(in: 0...512, using: &rng)
        }
        let bodySize = type == .transport ? max(size, WireLimits.minTransportBody) : size
        frames.append(Frame(type: type, body: ByteBuffer(bytes: rng.bytes(bodySize))))
    }
    var out = ByteBuffer()
    for frame in frames { frame.encode(into: &out) }
    return (frames, out.readableArray)
}

/// Compares frame lists, reporting the first difference instead of dumping both lists.
func expectSameFrames(_ actual: [Frame], _ expected: [Frame], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.count == expected.count, "\(label): \(actual.count) frames, expected \(expected.count)", sourceLocation: sourceLocation)
    let mismatch = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    #expect(mismatch == nil, "\(label): first different frame at index \(mismatch ?? -1)", sourceLocation: sourceLocation)
}

/// FrameParser fed the way TCP delivers bytes (STYLE.md §5, PROTOCOL.md §3.3).
@Suite("FrameParser adversarial")
struct FrameParserTests {
    static let seed: UInt64 = 0x6d65_7368_6368_6174  // "meshchat"

    @Test("the stream vector gives the same frames byte by byte, in random chunks and all at once")
    func streamVectorChunkings() throws {
        for vector in try FrameVectors.load().stream {
            let bytes = try [UInt8](hex: vector.bytes)
            let all = try receive(bytes) { bytes.count }
            #expect(all.frames.count == vector.frames.count)
            let dripped = try receive(bytes) { 1 }
            expectSameFrames(dripped.frames, all.frames, "byte by byte")
            var rng = SplitMix64(seed: Self.seed)
            let chunked = try receive(bytes) { Int.random(in: 0...64, using: &rng) }
            expectSameFrames(chunked.frames, all.frames, "random chunks")
            for receiver in [all, dripped, chunked] {
                #expect(receiver.buffer.readableBytes == 0)
                #expect(!receiver.consumedPartialFrame)
            }
        }
    }

    @Test("1,000 random frames: byte by byte, random chunks of 0…4,096 bytes with empty reads, and all at once agree")
    func randomStreamChunkings() throws {
        let (expected, bytes) = randomFrameStream(seed: Self.seed)
        #expect(expected.contains { $0.body.readableBytes == WireLimits.maxNoiseMessage })

        let all = try receive(bytes) { bytes.count }
        expectSameFrames(all.frames, expected, "all at once (seed \(Self.seed))")
        #expect(all.reads == 1)

        let dripped = try receive(bytes) { 1 }
        expectSameFrames(dripped.frames, expected, "byte by byte (seed \(Self.seed))")

        var rng = SplitMix64(seed: Self.seed ^ 1)
        var emptyReads = 0
        let chunked = try receive(bytes) {
            // One read in eight is empty; the others are 0…4,096 bytes.
            if Int.random(in: 0..<8, using: &rng) == 0 { emptyReads += 1; return 0 }
            return Int.random(in: 0...4_096, using: &rng)
        }
        expectSameFrames(chunked.frames, expected, "random chunks (seed \(Self.seed ^ 1))")
        #expect(emptyReads > 10)

        for receiver in [all, dripped, chunked] {
            #expect(receiver.buffer.readableBytes == 0)
            #expect(!receiver.consumedPartialFrame)
        }
    }

    @Test("several seeds of random chunking give the frames that were encoded")
    func moreSeeds() throws {
        let (expected, bytes) = randomFrameStream(seed: 7, count: 200)
        for seed in UInt64(1)...8 {
            var rng = SplitMix64(seed: seed)
            let chunked = try receive(bytes) { Int.random(in: 0...4_096, using: &rng) }
            expectSameFrames(chunked.frames, expected, "seed \(seed)")
        }
    }

    @Test("every truncation of the stream vector returns the whole frames, then nil, without throwing or consuming a partial frame")
    func truncatedStream() throws {
        let vector = try #require(try FrameVectors.load().stream.first)
        let bytes = try [UInt8](hex: vector.bytes)
        // The end offset of each frame, from the length fields (§3.1).
        var ends: [Int] = []
        var offset = 0
        while offset < bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4 + length
            ends.append(offset)
        }
        #expect(ends.count == vector.frames.count)
        for cut in 0..<bytes.count {
            var buffer = ByteBuffer(bytes: bytes.prefix(cut))
            var parsed = 0
            while let _ = try FrameParser().parse(&buffer) { parsed += 1 }
            let complete = ends.filter { $0 <= cut }
            #expect(parsed == complete.count, "cut at \(cut)")
            #expect(buffer.readerIndex == (complete.last ?? 0), "cut at \(cut): partial frame consumed")
            #expect(buffer.readableBytes == cut - (complete.last ?? 0))
        }
    }

    @Test("an oversize length is refused after exactly its 4 bytes when bytes arrive one at a time",
          arguments: [[0x00, 0x01, 0x00, 0x01] as [UInt8], [0xff, 0xff, 0xff, 0xff], [0x7f, 0x00, 0x00, 0x00]])
    func oversizeDripFed(header: [UInt8]) throws {
        var receiver = Receiver()
        for byte in header.dropLast() {
            try receiver.receive([byte])
        }
        #expect(receiver.frames.isEmpty)
        #expect(receiver.buffer.readableBytes == 3)
        let error = #expect(throws: WireError.self) { try receiver.receive([header[3]]) }
        #expect(error?.code == .frameTooLarge)
    }

    @Test("a frame after a valid one in the same read is refused at its oversize length")
    func oversizeAfterValidFrame() throws {
        var receiver = Receiver()
        let error = #expect(throws: WireError.self) {
            try receiver.receive([0, 0, 0, 2, 0x01, 0xaa] + [0x00, 0x01, 0x00, 0x01])
        }
        #expect(error?.code == .frameTooLarge)
        #expect(receiver.frames.count == 1)
        #expect(receiver.frames.first?.body.readableArray == [0xaa])
    }

    @Test("frame bodies are independent of the bytes read after them")
    func bodiesAreStable() throws {
        var receiver = Receiver()
        try receiver.receive([0, 0, 0, 3, 0x01, 0x10, 0x20, 0, 0, 0])
        let first = try #require(receiver.frames.first)
        // Two more large frames, so that the receiver discards read bytes and reuses its buffer.
        var more = ByteBuffer(bytes: [2, 0x01, 0x30])
        for _ in 0..<2 {
            Frame(type: .handshake, body: ByteBuffer(repeating: 0xee, count: 60_000)).encode(into: &more)
        }
        try receiver.receive(more.readableArray)
        #expect(receiver.buffer.readerIndex < 1 << 16)
        #expect(first.body.readableArray == [0x10, 0x20])
        #expect(receiver.frames.count == 4)
        #expect(receiver.frames[1].body.readableArray == [0x30])
    }
}
