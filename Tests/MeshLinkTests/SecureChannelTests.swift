import Crypto
import Foundation
@testable import MeshLink
import MeshNoise
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// Transport messages and records (PROTOCOL.md §5).
@Suite("SecureChannel")
struct SecureChannelTests {
    static let keyAB = SymmetricKey(data: pattern(from: 0x10))
    static let keyBA = SymmetricKey(data: pattern(from: 0x50))

    /// Two channels that talk to each other: `a` sends with key AB, `b` with key BA.
    static func pair() -> (a: SecureChannel, b: SecureChannel) {
        (SecureChannel(send: NoiseCipherState(key: keyAB), receive: NoiseCipherState(key: keyBA)),
         SecureChannel(send: NoiseCipherState(key: keyBA), receive: NoiseCipherState(key: keyAB)))
    }

    /// A TRANSPORT frame carrying `plaintext` as sealed by the cipher state `cipher` (for records
    /// the channel itself would never write).
    static func frame(sealing plaintext: [UInt8], with cipher: inout NoiseCipherState) throws -> Frame {
        Frame(type: .transport, body: ByteBuffer(bytes: try cipher.encrypt(plaintext)))
    }

    static func message(_ size: Int, seed: UInt64 = 1) -> Data {
        var rng = SplitMix64(seed: seed)
        return Data(rng.bytes(size))
    }

    @Test("messages round trip, split into the expected number of frames of the expected size", arguments: [
        (0, 1), (1, 1), (65_517, 1), (65_518, 1), (65_519, 2), (1_048_583, 17),
    ])
    func roundTrip(size: Int, frameCount: Int) throws {
        var (a, b) = Self.pair()
        let message = Self.message(size)
        var buffer = ByteBuffer()
        try a.seal(message, into: &buffer)
        #expect(buffer.readableBytes == SecureChannel.wireSize(ofMessage: size))
        let frames = try parseAll(buffer)
        #expect(frames.count == frameCount)
        #expect(frames.allSatisfy { $0.type == .transport })
        // Every frame but the last is full: 65,518 data bytes + flags + tag.
        #expect(frames.dropLast().allSatisfy { $0.body.readableBytes == WireLimits.maxNoiseMessage })
        for (index, frame) in frames.enumerated() {
            let result = try b.open(frame)
            if index < frames.count - 1 {
                #expect(result == nil)
                #expect(b.bufferedBytes == (index + 1) * WireLimits.maxRecordData)
            } else {
                #expect(result == message)
                #expect(b.bufferedBytes == 0)
            }
        }
    }

    @Test("an envelope seals to the same frames as its serialized bytes", arguments: [
        0, 1, 65_512, 65_513, 65_514, 65_518, 131_030, 1 << 20,
    ])
    func envelopeSealsLikeItsBytes(payloadCount: Int) throws {
        let envelopes = [Envelope.data(Self.message(payloadCount)), Envelope.chat(id: Data(count: 16), text: "hi", sentAtMilliseconds: 5)]
        for envelope in envelopes {
            var (a, _) = Self.pair()
            var (c, _) = Self.pair()
            var viaEnvelope = ByteBuffer()
            var viaBytes = ByteBuffer()
            try a.seal(envelope, into: &viaEnvelope)
            try c.seal(envelope.encoded, into: &viaBytes)
            #expect(viaEnvelope == viaBytes)
        }
    }

    @Test("wireSize counts a 5-byte header, a flags byte and a 16-byte tag per record")
    func wireSize() {
        #expect(SecureChannel.wireSize(ofMessage: 0) == 22)
        #expect(SecureChannel.wireSize(ofMessage: 65_518) == 65_518 + 22)
        #expect(SecureChannel.wireSize(ofMessage: 65_519) == 65_519 + 44)
        #expect(SecureChannel.wireSize(ofMessage: WireLimits.maxMessageSize) == WireLimits.maxMessageSize + 257 * 22)
    }

    @Test("consecutive messages use consecutive nonces and arrive in order")
    func consecutiveMessages() throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        let messages = (0..<5).map { Self.message($0 * 30_000, seed: UInt64($0)) }
        for message in messages { try a.seal(message, into: &buffer) }
        var received: [Data] = []
        for frame in try parseAll(buffer) {
            if let message = try b.open(frame) { received.append(message) }
        }
        #expect(received == messages)
    }

    @Test("tampering with any byte of any frame fails with protocolViolation \"failed to authenticate\"", arguments: [
        (0, 0), (0, 65_534), (1, 0), (1, 1000), (2, 0), (2, -1),
    ])
    func tampering(frameIndex: Int, byte: Int) throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        try a.seal(Self.message(2 * 65_518 + 10), into: &buffer)
        var frames = try parseAll(buffer)
        #expect(frames.count == 3)
        let length = frames[frameIndex].body.readableBytes
        frames[frameIndex] = flipping(frames[frameIndex], bodyByte: byte >= 0 ? byte : length + byte)
        for index in 0..<frameIndex { _ = try b.open(frames[index]) }
        let error = #expect(throws: LinkCloseReason.self) { try b.open(frames[frameIndex]) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message == "transport message failed to authenticate")
    }

    @Test("frames delivered out of order fail to authenticate")
    func reordering() throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        try a.seal(Self.message(10), into: &buffer)
        try a.seal(Self.message(20), into: &buffer)
        let frames = try parseAll(buffer)
        let error = #expect(throws: LinkCloseReason.self) { try b.open(frames[1]) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("failed to authenticate") == true)

        // A replayed frame fails too.
        var (_, fresh) = Self.pair()
        _ = try fresh.open(frames[0])
        #expect(throws: LinkCloseReason.self) { try fresh.open(frames[0]) }
    }

    @Test("a message over 16 MiB is refused at seal with messageTooLarge, writing nothing")
    func sealTooLarge() throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        let error = #expect(throws: LinkCloseReason.self) {
            try a.seal(Data(count: WireLimits.maxMessageSize + 1), into: &buffer)
        }
        #expect(error?.code == .messageTooLarge)
        #expect(error?.message.contains("16777217") == true)
        #expect(buffer.readableBytes == 0)
        // The channel is still usable: no nonce was consumed.
        try a.seal(Data("after".utf8), into: &buffer)
        #expect(try b.open(try parseAll(buffer)[0]) == Data("after".utf8))
    }

    @Test("exactly 16 MiB is accepted at seal and reassembled")
    func sealMaximum() throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        let message = Data(repeating: 0x5a, count: WireLimits.maxMessageSize)
        try a.seal(message, into: &buffer)
        var result: Data?
        for frame in try parseAll(buffer) { result = try b.open(frame) }
        #expect(result == message)
    }

    @Test("a received message passing 16 MiB without FIN is refused with messageTooLarge")
    func receiveTooLarge() throws {
        var (_, b) = Self.pair()
        var sender = NoiseCipherState(key: Self.keyAB)
        let fragment = [0x00] + [UInt8](repeating: 0x33, count: WireLimits.maxRecordData)  // no FIN
        let fullRecords = WireLimits.maxMessageSize / WireLimits.maxRecordData  // 256 records fit
        for _ in 0..<fullRecords {
            #expect(try b.open(try Self.frame(sealing: fragment, with: &sender)) == nil)
        }
        let error = #expect(throws: LinkCloseReason.self) { try b.open(try Self.frame(sealing: fragment, with: &sender)) }
        #expect(error?.code == .messageTooLarge)
    }

    @Test("a record with reserved flag bits is refused with protocolViolation", arguments: [UInt8(0x02), 0x03, 0x80, 0xff])
    func reservedFlags(flags: UInt8) throws {
        var (_, b) = Self.pair()
        var sender = NoiseCipherState(key: Self.keyAB)
        let error = #expect(throws: LinkCloseReason.self) { try b.open(try Self.frame(sealing: [flags, 0x61], with: &sender)) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("reserved") == true)
    }

    @Test("an empty record (no flags byte) is refused with protocolViolation")
    func emptyRecord() throws {
        var (_, b) = Self.pair()
        var sender = NoiseCipherState(key: Self.keyAB)
        let error = #expect(throws: LinkCloseReason.self) { try b.open(try Self.frame(sealing: [], with: &sender)) }
        #expect(error?.code == .protocolViolation)
    }

    @Test("records the channel did not write itself still reassemble: empty non-final records are allowed")
    func handMadeRecords() throws {
        var (_, b) = Self.pair()
        var sender = NoiseCipherState(key: Self.keyAB)
        #expect(try b.open(try Self.frame(sealing: [0x00, 0x61], with: &sender)) == nil)
        #expect(try b.open(try Self.frame(sealing: [0x00], with: &sender)) == nil)
        #expect(try b.open(try Self.frame(sealing: [0x01, 0x62], with: &sender)) == Data("ab".utf8))
    }

    @Test("a HANDSHAKE or ABORT frame after the handshake is refused with protocolViolation", arguments: [
        FrameType.handshake, .abort,
    ])
    func wrongFrameType(type: FrameType) throws {
        var (a, b) = Self.pair()
        var buffer = ByteBuffer()
        try a.seal(Data("x".utf8), into: &buffer)
        let sealed = try parseAll(buffer)[0]
        let error = #expect(throws: LinkCloseReason.self) { try b.open(Frame(type: type, body: sealed.body)) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("\(type) frame received after the handshake") == true)
    }
}
