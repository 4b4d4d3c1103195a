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
