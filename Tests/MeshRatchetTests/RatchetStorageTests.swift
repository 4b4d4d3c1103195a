import Foundation
@testable import MeshRatchet
import MeshTestSupport
import Testing

@Suite("double ratchet storage")
struct RatchetStorageTests {
    @Test("a stored and restored session goes on exactly where it was, skipped keys included")
    func roundTrip() throws {
        var pair = try RatchetPair(seed: 21)
        let early = try pair.aliceSends("early")
        _ = try pair.bobReads(pair.aliceSends("later"))
        _ = try pair.aliceReads(pair.bobSends("reply"))
        pair.bob = try DoubleRatchet(serialized: pair.bob.serialized)
        pair.alice = try DoubleRatchet(serialized: pair.alice.serialized)
        #expect(try pair.bobReads(early) == "early")
        #expect(try pair.bobReads(pair.aliceSends("after restart")) == "after restart")
        #expect(try pair.aliceReads(pair.bobSends("and back")) == "and back")
        #expect(try DoubleRatchet(serialized: pair.bob.serialized).serialized == pair.bob.serialized)
    }

    @Test("damaged stored states are refused, never trapped on: every truncation, flipped flags, trailing bytes")
    func damaged() throws {
        var pair = try RatchetPair(seed: 22)
        _ = try pair.aliceSends("skipped")
        _ = try pair.bobReads(pair.aliceSends("read"))
        let stored = pair.bob.serialized
        for length in 0..<stored.count {
            #expect(throws: RatchetError.self) { try DoubleRatchet(serialized: stored.prefix(length)) }
        }
        #expect(throws: RatchetError.self) { try DoubleRatchet(serialized: stored + Data([0])) }
        // Limits raised in the file (maxSkip at 200,000, then the stored bound at 4 billion) are refused.
        var limitsStart = 1 + 32 + 32 + 1 + 32 + 1 + 32 + 1 + 12  // version, root, ratchet key, DHr, CKs, CKr (absent), counters
        if pair.bob.serialized[1 + 32 + 32 + 1 + 32 + 1 + 32] == 1 { limitsStart += 32 }
        #expect(stored[limitsStart ..< limitsStart + 8] == Data([0, 0, 0x03, 0xE8, 0, 0, 0x07, 0xD0]))  // 1,000 and 2,000
        var raised = stored
        raised.replaceSubrange(limitsStart ..< limitsStart + 4, with: [0x00, 0x03, 0x0D, 0x40])
        #expect(throws: RatchetError(.malformed, "")) { try DoubleRatchet(serialized: raised) }
        raised = stored
        raised.replaceSubrange(limitsStart + 4 ..< limitsStart + 8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: RatchetError(.malformed, "")) { try DoubleRatchet(serialized: raised) }
        var version = stored
        version[0] = 9
        #expect(throws: RatchetError.self) { try DoubleRatchet(serialized: version) }
        var rng = SplitMix64(seed: 5)
        for _ in 0..<2_000 {
            var noisy = stored
            let position = Int.random(in: 0..<noisy.count, using: &rng)
            noisy[position] = UInt8.random(in: 0...255, using: &rng)
            _ = try? DoubleRatchet(serialized: noisy)  // must not trap
        }
    }

    @Test("message and header encodings round-trip; short or malformed ones are refused")
    func encodings() throws {
        var pair = try RatchetPair(seed: 23)
        let message = try pair.aliceSends("wire")
        let decoded = try RatchetMessage(decoding: message.encoded)
        #expect(decoded == message)
        #expect(try pair.bobReads(decoded) == "wire")
        #expect(throws: RatchetError(.malformed, "")) { try RatchetMessage(decoding: message.encoded.prefix(55)) }
        #expect(throws: RatchetError(.malformed, "")) { try RatchetHeader(decoding: Data(count: 39)) }
        #expect(try RatchetMessage(decoding: message.encoded.dropFirst(0)).header.encoded.count == 40)
    }
}
