import Foundation
@testable import MeshRatchet
import Testing

/// The work estimate a node charges to a neighbour's budget before opening a packet (§13.11): it
/// must never be below what decrypting the packet then does.
@Suite("Ratchet work estimates")
struct RatchetWorkTests {
    @Test("a message in order derives one key; a gap derives the skipped ones too; a stored key none")
    func sameChain() throws {
        var pair = try RatchetPair()
        let first = try pair.aliceSends("one")
        // Bob has no receiving chain yet: Alice's first message turns his ratchet.
        #expect(pair.bob.openingWork(first.header) == RatchetWork(diffieHellman: true, derivedKeys: 1))
        _ = try pair.bobReads(first)
        let second = try pair.aliceSends("two")
        #expect(pair.bob.openingWork(second.header) == RatchetWork(diffieHellman: false, derivedKeys: 1))
        let third = try pair.aliceSends("three"), fourth = try pair.aliceSends("four")
        // Fourth before second and third: two skipped keys and its own.
        #expect(pair.bob.openingWork(fourth.header) == RatchetWork(diffieHellman: false, derivedKeys: 3))
        _ = try pair.bobReads(fourth)
        // Second and third now open with stored keys.
        #expect(pair.bob.openingWork(third.header) == RatchetWork(diffieHellman: false, derivedKeys: 0))
        _ = try pair.bobReads(second)
    }

    @Test("a new ratchet key costs Diffie-Hellman and the previous chain's gap; a gap over MAX_SKIP counts no more than MAX_SKIP")
    func newChain() throws {
        var limits = RatchetLimits()
        limits.maxSkip = 16
        var pair = try RatchetPair(limits: limits)
        _ = try pair.bobReads(try pair.aliceSends("hello"))
        _ = try pair.aliceSends("lost")  // Alice's message 1 never arrives
        _ = try pair.aliceReads(try pair.bobSends("reply"))
        let turned = try pair.aliceSends("after the turn")
        // New chain: message 0, and message 1 of the previous chain is skipped on the way.
        #expect(pair.bob.openingWork(turned.header) == RatchetWork(diffieHellman: true, derivedKeys: 2))
        let work = pair.bob.openingWork(RatchetHeader(ratchetKey: turned.header.ratchetKey, previousCount: 1_000, number: 1_000))
        #expect(work.diffieHellman && work.derivedKeys <= 2 * 16 + 1)
        var forged = turned
        forged.header.number = 5
        let before = pair.bob
        #expect(throws: RatchetError.self) { _ = try pair.bob.decrypt(forged, using: &pair.rng) }
        // The previous chain's gap (1) and message numbers 0–5 of the new one: what the failed decrypt derived.
        #expect(pair.bob.openingWork(forged.header) == RatchetWork(diffieHellman: true, derivedKeys: 7))
        pair.bob = before
        #expect(try pair.bobReads(turned) == "after the turn")
    }

    @Test("packets: a prekey message needs an agreement; a session not held, a short or unknown packet needs nothing")
    func packets() {
        let sessions = PairSessions()
        #expect(sessions.openingWork(of: Data([RatchetPacket.prekeyKind]) + Data(count: 200)).diffieHellman)
        #expect(sessions.openingWork(of: Data([RatchetPacket.sessionKind]) + Data(count: 200)) == .none)
        #expect(sessions.openingWork(of: Data([RatchetPacket.sessionKind, 1, 2])) == .none)
        #expect(sessions.openingWork(of: Data([9]) + Data(count: 200)) == .none)
        #expect(sessions.openingWork(of: Data()) == .none)
        #expect(RatchetWork.most(RatchetLimits()).diffieHellman)
    }
}
