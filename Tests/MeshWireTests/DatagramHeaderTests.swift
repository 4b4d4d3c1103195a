import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// The clear datagram header (PROTOCOL.md §8.2, §8.3).
@Suite("DatagramHeader")
struct DatagramHeaderTests {
    static let tag: UInt64 = 0x0102_0304_0506_0708
    static let counter: UInt64 = 0x1112_1314_1516_1718

    @Test("encodes type 0x01, tag and counter big-endian in 17 bytes")
    func encode() {
        let header = DatagramHeader(tag: Self.tag, counter: Self.counter)
        #expect(header.encoded.hexString == "01" + "0102030405060708" + "1112131415161718")
        var buffer = ByteBuffer(bytes: [0xee])
        header.encode(into: &buffer)
        #expect(buffer.readableArray == [0xee] + header.encoded)
    }

    @Test("decodes the header and leaves the box", arguments: [34, 100, 1_232])
    func decode(size: Int) throws {
        let box = [UInt8](repeating: 0xab, count: size - 17)
        var buffer = ByteBuffer(bytes: DatagramHeader(tag: Self.tag, counter: Self.counter).encoded + box)
        let header = try DatagramHeader(decoding: &buffer)
        #expect(header.tag == Self.tag)
        #expect(header.counter == Self.counter)
        #expect(buffer.readableArray == box)
    }

    @Test("counter 0 and the largest values round-trip", arguments: [(UInt64(0), UInt64(0)), (.max, .max), (1, .max - 1)])
    func extremes(tag: UInt64, counter: UInt64) throws {
        var buffer = ByteBuffer(bytes: DatagramHeader(tag: tag, counter: counter).encoded + [UInt8](repeating: 0, count: 17))
        #expect(try DatagramHeader(decoding: &buffer) == DatagramHeader(tag: tag, counter: counter))
    }

    @Test("a datagram shorter than 34 bytes (header + tag + kind) is malformed", arguments: [0, 1, 17, 33])
    func tooShort(size: Int) {
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x01, count: size))
        let error = #expect(throws: WireError.self) { try DatagramHeader(decoding: &buffer) }
        #expect(error?.code == .malformedDatagram)
        #expect(error?.description.contains("\(size) bytes") == true)
        #expect(error?.description.contains("34") == true, "\(error?.description ?? "")")
    }

    @Test("a datagram longer than 1,232 bytes is malformed", arguments: [1_233, 1_500, 65_507])
    func tooLong(size: Int) {
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x01, count: size))
        let error = #expect(throws: WireError.self) { try DatagramHeader(decoding: &buffer) }
        #expect(error?.code == .malformedDatagram)
        #expect(error?.description.contains("\(size)") == true)
        #expect(error?.description.contains("1232") == true)
    }

    @Test("a datagram type other than 0x01 is malformed", arguments: [UInt8(0x00), 0x02, 0x7f, 0xff])
    func unknownType(type: UInt8) {
        var buffer = ByteBuffer(bytes: [type] + [UInt8](repeating: 0, count: 40))
        let error = #expect(throws: WireError.self) { try DatagramHeader(decoding: &buffer) }
        #expect(error?.code == .malformedDatagram)
        #expect(error?.description.contains("type 0x\(String(type, radix: 16))") == true)
    }

    @Test("the payload limit is 1,198 bytes (§8.3)")
    func payloadLimit() {
        #expect(WireLimits.maxDatagramSize == 1_232)
        #expect(WireLimits.maxUnreliablePayload == 1_198)
        #expect(WireLimits.datagramHeaderSize + 1 + WireLimits.maxUnreliablePayload + WireLimits.authenticationTagSize == 1_232)
    }
}
