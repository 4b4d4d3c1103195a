import MeshTestSupport
import MeshWire
import NIOCore
import Testing

// `EmbeddedChannel` lives in NIOEmbedded, which MeshWireTests does not depend on (Package.swift gives it
// MeshWire and MeshTestSupport only). These tests drive `FrameDecoder` through NIOCore's
// `NIOSingleStepByteToMessageProcessor`, the same decode/decodeLast loop without a channel.

@Suite("FrameDecoder")
struct FrameDecoderTests {
    @Test("frames come out of the decoder for a stream fed in pieces, and finishing is clean")
    func framesComeOut() throws {
        let vector = try #require(try FrameVectors.load().stream.first)
        let bytes = try [UInt8](hex: vector.bytes)
        let processor = NIOSingleStepByteToMessageProcessor(FrameDecoder())
        var frames: [Frame] = []
        var rng = SplitMix64(seed: 3)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 0...50, using: &rng))
            try processor.process(buffer: ByteBuffer(bytes: bytes[start..<end])) { frames.append($0) }
            start = end
        }
        try processor.finishProcessing(seenEOF: true) { frames.append($0) }
        #expect(frames.map(\.type.description) == vector.frames.map(\.type))
        #expect(frames.map(\.body.readableArray.hexString) == vector.frames.map(\.body))
        #expect(processor.unprocessedBytes == 0)
    }

    @Test("an oversize length raises frameTooLarge out of the decoder")
    func oversizeThrows() throws {
        let processor = NIOSingleStepByteToMessageProcessor(FrameDecoder())
        var frames: [Frame] = []
        try processor.process(buffer: ByteBuffer(bytes: [0, 0, 0, 2, 0x01, 0x00, 0x00, 0x01])) { frames.append($0) }
        #expect(frames.count == 1)
        let error = #expect(throws: WireError.self) {
            try processor.process(buffer: ByteBuffer(bytes: [0x00, 0x01])) { frames.append($0) }
        }
        #expect(error?.code == .frameTooLarge)
        #expect(error?.description.contains("65537") == true)
    }

    @Test("the decoder's custom maximum is enforced")
    func customMaximum() throws {
        let processor = NIOSingleStepByteToMessageProcessor(FrameDecoder(maxFrameLength: 10))
        let error = #expect(throws: WireError.self) {
            try processor.process(buffer: ByteBuffer(bytes: [0, 0, 0, 11])) { _ in }
        }
        #expect(error?.code == .frameTooLarge)
    }

    @Test("a partial frame at end of stream yields no frame and is left over")
    func partialAtEOF() throws {
        let processor = NIOSingleStepByteToMessageProcessor(FrameDecoder())
        var frames: [Frame] = []
        try processor.process(buffer: ByteBuffer(bytes: [0, 0, 0, 2, 0x01, 0x41, 0, 0, 0, 5, 0x01, 0x42])) { frames.append($0) }
        try processor.finishProcessing(seenEOF: true) { frames.append($0) }
        #expect(frames.count == 1)
        #expect(processor.unprocessedBytes == 6)
    }
}
