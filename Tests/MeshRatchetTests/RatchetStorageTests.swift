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

    @Test("a state protocol version 5 stored (version byte 1: HMAC chain keys) is refused, alone and in a pair's sessions, never opened with the new derivations")
    func protocolFiveStateRefused() throws {
        var pair = try RatchetPair(seed: 24)
        _ = try pair.bobReads(pair.aliceSends("before the upgrade"))
        // Version 5 wrote this very layout with version byte 1; only its chain keys meant other keys.
        var old = pair.bob.serialized
        #expect(old[old.startIndex] == 2)
        old[old.startIndex] = 1
        #expect(throws: RatchetError.self) { try DoubleRatchet(serialized: old) }
        do {
            _ = try DoubleRatchet(serialized: old)
        } catch {
            #expect(error.code == .malformed)
            #expect("\(error)".contains("protocol version 5"), "\(error)")
        }
        // A pair's stored sessions holding such a state are refused whole: the store drops the file
        // and begins new sessions (§19.7), as for a damaged one.
        // PairSessions' own layout (§19.7, version 1, unchanged): count 1, id, peer static key, no flags, the state.
        var stored = Data([1, 1]) + Data(count: 8) + Data(repeating: 9, count: 32) + Data([0])
        withUnsafeBytes(of: UInt32(old.count).bigEndian) { stored.append(contentsOf: $0) }
        stored.append(old)
        var current = stored
        current[current.count - old.count] = 2
        #expect(try PairSessions(serialized: current).count == 1)
        #expect(throws: RatchetError(.malformed, "")) { try PairSessions(serialized: stored) }
        // The same bytes with the current version byte restore and go on.
        old[old.startIndex] = 2
        pair.bob = try DoubleRatchet(serialized: old)
        #expect(try pair.bobReads(pair.aliceSends("after the upgrade")) == "after the upgrade")
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
