import MeshCore
import Testing

/// Node ids (PROTOCOL.md §2.2, §4.7).
@Suite("NodeID")
struct NodeIDTests {
    /// 256 ids that between them put every byte value in every position.
    static let everyByte: [[UInt8]] = (0..<256).map { k in (0..<16).map { i in UInt8((k + 17 * i) % 256) } }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test("hex round trip covers every byte value in every position")
    func hexRoundTrip() throws {
        for position in 0..<16 { #expect(Set(Self.everyByte.map { $0[position] }).count == 256) }
        for bytes in Self.everyByte {
            let id = try NodeID(bytes: bytes)
            #expect(id.bytes == bytes)
            #expect(id.hex == Self.hex(bytes))
            #expect(id.description == id.hex)
            #expect(id.shortHex == String(id.hex.prefix(8)))
            #expect(try NodeID(hex: id.hex) == id)
            #expect(try NodeID(hex: id.hex).bytes == bytes)
            #expect(try NodeID(hex: id.hex.uppercased()) == id)
        }
    }

    @Test("uppercase hex is accepted and printed lowercase")
    func uppercase() throws {
        let id = try NodeID(hex: "00112233445566778899AABBCCDDEEFF")
        #expect(id.hex == "00112233445566778899aabbccddeeff")
        #expect(id == (try NodeID(hex: "00112233445566778899aabbccddeeff")))
        #expect(try NodeID(hex: "AbCdEf0123456789aBcDeF0123456789").hex == "abcdef0123456789abcdef0123456789")
    }

    @Test("wrong length is malformedNodeID", arguments: ["", "0", String(repeating: "a", count: 31), String(repeating: "a", count: 33), String(repeating: "0", count: 64)])
    func wrongLength(hex: String) {
        let error = #expect(throws: CoreError.self) { try NodeID(hex: hex) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.description.contains("\(hex.utf8.count) characters") == true)
    }

    @Test("non-hex characters are malformedNodeID", arguments: [
        "0011223344556677889aabbccddeeffg",
        "0x112233445566778899aabbccddeeff",
        " 0112233445566778899aabbccddeeff",
        "0011223344556677-899aabbccddeeff",
        "00112233445566778899aabbccddeeé",  // 30 digits + a 2-byte character
        "00112233445566778899aabbccddee٠١",  // Arabic-Indic digits: not hex
    ])
    func nonHex(hex: String) {
        let error = #expect(throws: CoreError.self) { try NodeID(hex: hex) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.description.contains("hex digit") == true)
    }

    @Test("a byte count other than 16 is malformedNodeID", arguments: [0, 1, 15, 17, 32, 10_000])
    func wrongByteCount(count: Int) {
        let error = #expect(throws: CoreError.self) { try NodeID(bytes: [UInt8](repeating: 1, count: count)) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.description.contains("\(count) bytes") == true)
    }

    @Test("a very long text is refused, and the message quotes only its start")
    func longText() {
        let hex = String(repeating: "ab", count: 5_000)
        let error = #expect(throws: CoreError.self) { try NodeID(hex: hex) }
        #expect(error?.code == .malformedNodeID)
        #expect((error?.description.utf8.count ?? .max) < 200)
    }

    @Test("equal and hashed by the bytes")
    func equality() throws {
        let a = try NodeID(hex: "00112233445566778899aabbccddeeff")
        let b = try NodeID(bytes: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        let c = try NodeID(hex: "00112233445566778899aabbccddeefe")
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        #expect(a.hashValue == b.hashValue)
    }

    @Test("random ids are 16 bytes and differ")
    func random() {
        let ids = (0..<100).map { _ in NodeID.random() }
        #expect(ids.allSatisfy { $0.bytes.count == NodeID.byteCount })
        #expect(Set(ids).count == ids.count)
    }

    @Test("ordering is bytewise (unsigned, first byte most significant)")
    func ordering() throws {
        let a = try NodeID(hex: "00ffffffffffffffffffffffffffffff")
        let b = try NodeID(hex: "01000000000000000000000000000000")
        let c = try NodeID(hex: "7fffffffffffffffffffffffffffffff")
        let d = try NodeID(hex: "80000000000000000000000000000000")  // not negative
        let e = try NodeID(hex: "80000000000000000000000000000001")
        #expect(a < b && b < c && c < d && d < e)
        #expect(!(d < c))
        #expect(!(a < a))

        let ids = try Self.everyByte.map { try NodeID(bytes: $0) } + [a, b, c, d, e]
        // Lowercase hex sorts like the bytes.
        #expect(ids.sorted().map(\.hex) == ids.map(\.hex).sorted())
        #expect(ids.sorted().map(\.bytes) == ids.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) })
    }
}
