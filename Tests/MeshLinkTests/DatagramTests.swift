import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// Sealing and opening UDP datagrams (PROTOCOL.md §8.2–§8.4).
@Suite("Datagrams")
struct DatagramTests {
    static let keyAB = SymmetricKey(data: pattern(from: 0x30))
    static let keyBA = SymmetricKey(data: pattern(from: 0x70))
    static let keys = DatagramKeys(sendKey: keyAB, receiveKey: keyBA, sendTag: 0x1111_2222_3333_4444, receiveTag: 0x5555_6666_7777_8888)
    static let peerKeys = DatagramKeys(sendKey: keyBA, receiveKey: keyAB, sendTag: 0x5555_6666_7777_8888, receiveTag: 0x1111_2222_3333_4444)

    /// A datagram's bytes.
    static func seal(_ payload: [UInt8], with sealer: inout DatagramSealer) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try sealer.seal(payload, into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// Decodes a datagram's header and opens it.
    static func open(_ datagram: [UInt8], with opener: inout DatagramOpener) throws -> Data {
        var buffer = ByteBuffer(bytes: datagram)
        let header = try DatagramHeader(decoding: &buffer)
        return try opener.open(header: header, box: buffer)
    }

    @Test("a sealed datagram opens on the other side; the counter starts at 0 and counts up")
    func roundTrip() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var opener = DatagramOpener(keys: Self.peerKeys)
        #expect(opener.tag == 0x1111_2222_3333_4444)
        for (index, text) in ["", "hello", String(repeating: "z", count: 1198)].enumerated() {
            #expect(sealer.counter == UInt64(index))
            let datagram = try Self.seal(Array(text.utf8), with: &sealer)
            #expect(datagram.count == 17 + 16 + 1 + text.utf8.count)
            var buffer = ByteBuffer(bytes: datagram)
            let header = try DatagramHeader(decoding: &buffer)
            #expect(header == DatagramHeader(tag: 0x1111_2222_3333_4444, counter: UInt64(index)))
            #expect(try opener.open(header: header, box: buffer) == Data(text.utf8))
        }
    }

    @Test("a replayed datagram is dropped as replayed")
    func replay() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var opener = DatagramOpener(keys: Self.peerKeys)
        let first = try Self.seal([1], with: &sealer)
        let second = try Self.seal([2], with: &sealer)
        #expect(try Self.open(second, with: &opener) == Data([2]))
        #expect(try Self.open(first, with: &opener) == Data([1]), "reordering within the window is fine")
        for datagram in [first, second] {
            let error = #expect(throws: DatagramOpener.Drop.self) { try Self.open(datagram, with: &opener) }
            #expect(error == .replayed)
        }
    }

    @Test("a datagram older than the window is dropped as replayed")
    func tooOld() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var opener = DatagramOpener(keys: Self.peerKeys)
        let old = try Self.seal([0], with: &sealer)
        var last: [UInt8] = []
        for _ in 0..<1024 { last = try Self.seal([1], with: &sealer) }
        #expect(try Self.open(last, with: &opener) == Data([1]))  // counter 1024
        let error = #expect(throws: DatagramOpener.Drop.self) { try Self.open(old, with: &opener) }
        #expect(error == .replayed)
    }

    @Test("a tampered header byte fails to authenticate (the header is associated data)", arguments: [
        1, 8,  // receiver tag bytes
        9, 16,  // counter bytes
    ])
    func tamperedHeader(offset: Int) throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var opener = DatagramOpener(keys: Self.peerKeys)
        let datagram = try Self.seal(Array("hello".utf8), with: &sealer)
        var tampered = datagram
        tampered[offset] ^= 0x01
        let error = #expect(throws: DatagramOpener.Drop.self) { try Self.open(tampered, with: &opener) }
        #expect(error == .unauthenticated)
        // The forged counter did not move the window: the genuine datagram still opens.
        #expect(try Self.open(datagram, with: &opener) == Data("hello".utf8))
    }

    @Test("a datagram of another type is refused when its header is decoded")
    func otherType() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var datagram = try Self.seal([1], with: &sealer)
        datagram[0] = 0x02
        var buffer = ByteBuffer(bytes: datagram)
        #expect(throws: WireError.self) { try DatagramHeader(decoding: &buffer) }
    }

    @Test("a tampered box fails to authenticate and does not move the window")
    func tamperedBox() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var opener = DatagramOpener(keys: Self.peerKeys)
        let datagrams = try (0..<4).map { try Self.seal([UInt8($0)], with: &sealer) }
        #expect(try Self.open(datagrams[0], with: &opener) == Data([0]))
        for offset in [17, 18, datagrams[3].count - 1] {
            var tampered = datagrams[3]
            tampered[offset] ^= 0x80
            let error = #expect(throws: DatagramOpener.Drop.self) { try Self.open(tampered, with: &opener) }
            #expect(error == .unauthenticated)
        }
        // Counter 3 was never recorded: the genuine datagram opens, then 1 and 2 behind it.
        #expect(try Self.open(datagrams[3], with: &opener) == Data([3]))
        #expect(try Self.open(datagrams[1], with: &opener) == Data([1]))
        #expect(try Self.open(datagrams[2], with: &opener) == Data([2]))
    }

    @Test("a datagram sealed with another key is unauthenticated")
    func wrongKey() throws {
        var sealer = DatagramSealer(keys: Self.peerKeys)  // seals with key BA
        var opener = DatagramOpener(keys: Self.peerKeys)  // opens with key AB
        let error = #expect(throws: DatagramOpener.Drop.self) { try Self.open(try Self.seal([1], with: &sealer), with: &opener) }
        #expect(error == .unauthenticated)
    }

    @Test("an authentic box with an unknown kind byte is dropped as unknownKind")
    func unknownKind() throws {
        var opener = DatagramOpener(keys: Self.peerKeys)
        let header = DatagramHeader(tag: 0x1111_2222_3333_4444, counter: 9)
        let box = try SpecChaChaPoly.seal([0x02, 0x61], key: Self.keyAB, counter: 9, ad: header.encoded)
        let error = #expect(throws: DatagramOpener.Drop.self) { try opener.open(header: header, box: ByteBuffer(bytes: box)) }
        #expect(error == .unknownKind)
    }

    @Test("a payload of 1,198 bytes makes a datagram of exactly 1,232 bytes; 1,199 bytes is refused")
    func sizeLimit() throws {
        var sealer = DatagramSealer(keys: Self.keys)
        var buffer = ByteBuffer()
        try sealer.seal([UInt8](repeating: 7, count: 1198), into: &buffer)
        #expect(buffer.readableBytes == 1232)
        #expect(buffer.readableBytes == WireLimits.maxDatagramSize)

        buffer.clear()
        let error = #expect(throws: LinkCloseReason.self) { try sealer.seal([UInt8](repeating: 7, count: 1199), into: &buffer) }
        #expect(error?.code == .messageTooLarge)
        #expect(error?.message.contains("1199") == true)
        #expect(buffer.readableBytes == 0)
        #expect(sealer.counter == 1, "a refused payload does not use a counter")
    }
}

/// ChaChaPoly as §8.2 specifies it, written out with swift-crypto (independent of MeshNoise).
enum SpecChaChaPoly {
    /// `ChaChaPoly(key, nonce = 0x00000000 ‖ counter u64 little-endian, ad, plaintext)`, returning
    /// ciphertext ‖ tag.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, counter: UInt64, ad: [UInt8]) throws -> [UInt8] {
        let nonce = try ChaChaPoly.Nonce(data: [0, 0, 0, 0] + withUnsafeBytes(of: counter.littleEndian, Array.init))
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: ad)
        return Array(box.ciphertext) + Array(box.tag)
    }
}
