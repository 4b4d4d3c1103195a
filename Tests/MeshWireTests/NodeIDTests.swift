import MeshTestSupport
import MeshWire
import Testing

/// Node ids (PROTOCOL.md §2.2, §4.7).
@Suite("NodeID")
struct NodeIDTests {
    @Test("hex round trip")
    func hexRoundTrip() throws {
        var rng = SplitMix64(seed: 16)
        for _ in 0..<50 {
            let bytes = rng.bytes(16)
            let id = try NodeID(bytes: bytes)
            #expect(id.hex == bytes.hexString)
            #expect(id.description == id.hex)
            #expect(id.shortHex == String(id.hex.prefix(8)))
            #expect(try NodeID(hex: id.hex) == id)
            #expect(try NodeID(hex: id.hex).bytes == bytes)
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
        let error = #expect(throws: WireError.self) { try NodeID(hex: hex) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.closeCode == .protocolViolation)
        #expect(error?.description.contains("\(hex.utf8.count) characters") == true)
    }

    @Test("non-hex characters are malformedNodeID", arguments: [
        "0011223344556677889aabbccddeeffg",
        "0x112233445566778899aabbccddeeff",
        " 0112233445566778899aabbccddeeff",
        "0011223344556677-899aabbccddeeff",
        "00112233445566778899aabbccddeeé",  // 30 digits + a 2-byte character
    ])
    func nonHex(hex: String) {
        let error = #expect(throws: WireError.self) { try NodeID(hex: hex) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.description.contains("hex digit") == true)
    }

    @Test("a byte count other than 16 is malformedNodeID", arguments: [0, 15, 17, 32])
    func wrongByteCount(count: Int) {
        let error = #expect(throws: WireError.self) { try NodeID(bytes: [UInt8](repeating: 1, count: count)) }
        #expect(error?.code == .malformedNodeID)
        #expect(error?.description.contains("\(count) bytes") == true)
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

        var rng = SplitMix64(seed: 47)
        let ids = try (0..<200).map { _ in try NodeID(bytes: rng.bytes(16)) }
        // Lowercase hex sorts like the bytes.
        #expect(ids.sorted().map(\.hex) == ids.map(\.hex).sorted())
        #expect(ids.sorted().map(\.bytes) == ids.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) })
    }
}
