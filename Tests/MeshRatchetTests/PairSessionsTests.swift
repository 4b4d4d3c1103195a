import Crypto
import Foundation
@testable import MeshRatchet
import MeshTestSupport
import Testing

/// Two nodes' sessions with each other, as the mesh keeps them (PROTOCOL.md §19.6–§19.7).
private struct Nodes {
    var rng = SplitMix64(seed: 42)
    let aliceStatic = Curve25519.KeyAgreement.PrivateKey()
    let bobStatic = Curve25519.KeyAgreement.PrivateKey()
    var aliceRing: PrekeyRing
    var bobRing: PrekeyRing
    var alice = PairSessions()  // alice's sessions with bob
    var bob = PairSessions()    // bob's sessions with alice
    let context = Data("routed header".utf8)
    var limits = RatchetLimits()

    init() {
        var rng = SplitMix64(seed: 7)
        aliceRing = PrekeyRing(now: 0, using: &rng)
        bobRing = PrekeyRing(now: 0, using: &rng)
    }

    var bobKeys: PairSessions.PeerKeys {
        .init(staticKey: bobStatic.publicKey, prekeyID: bobRing.currentID, prekey: bobRing.current.publicKey)
    }
    var aliceKeys: PairSessions.PeerKeys {
        .init(staticKey: aliceStatic.publicKey, prekeyID: aliceRing.currentID, prekey: aliceRing.current.publicKey)
    }

    mutating func aliceSends(_ text: String, fresh: Bool = false) throws -> PairSessions.Sealed {
        try alice.seal(Data(text.utf8), context: context, to: bobKeys, localStaticKey: aliceStatic, fresh: fresh, limits: limits, using: &rng)
    }
    mutating func bobSends(_ text: String, fresh: Bool = false) throws -> PairSessions.Sealed {
        try bob.seal(Data(text.utf8), context: context, to: aliceKeys, localStaticKey: bobStatic, fresh: fresh, limits: limits, using: &rng)
    }
    mutating func bobReads(_ sealed: PairSessions.Sealed, context: Data? = nil) throws -> (String, PairSessions.Opened) {
        let ring = bobRing
        let (opened, next) = try bob.opening(try RatchetPacket(decoding: sealed.packet), context: context ?? self.context,
                                             localStaticKey: bobStatic, prekey: { ring.privateKey(id: $0) }, limits: limits, using: &rng)
        bob = next
        return (String(decoding: opened.plaintext, as: UTF8.self), opened)
    }
    mutating func aliceReads(_ sealed: PairSessions.Sealed) throws -> (String, PairSessions.Opened) {
        let ring = aliceRing
        let (opened, next) = try alice.opening(try RatchetPacket(decoding: sealed.packet), context: context,
                                               localStaticKey: aliceStatic, prekey: { ring.privateKey(id: $0) }, limits: limits, using: &rng)
        alice = next
        return (String(decoding: opened.plaintext, as: UTF8.self), opened)
    }
}

private func kind(_ sealed: PairSessions.Sealed) throws -> UInt8 { try #require(sealed.packet.first) }

@Suite struct PairSessionsTests {
    @Test func firstMessagesCarryThePrekeyHeaderUntilAReplyArrives() throws {
        var nodes = Nodes()
        let first = try nodes.aliceSends("one")
        let second = try nodes.aliceSends("two")
        #expect(try kind(first) == RatchetPacket.prekeyKind && first.mustStore)
        #expect(try kind(second) == RatchetPacket.prekeyKind && !second.mustStore)
        // Lost first message: the second still starts the session.
        let (two, opened) = try nodes.bobReads(second)
        #expect(two == "two" && opened.newSessionStaticKey == nodes.aliceStatic.publicKey.rawRepresentation)
        #expect(try nodes.bobReads(first).0 == "one")
        let reply = try nodes.bobSends("hi")
        #expect(try kind(reply) == RatchetPacket.sessionKind && reply.mustStore)
        #expect(try nodes.aliceReads(reply).0 == "hi")
        let third = try nodes.aliceSends("three")
        #expect(try kind(third) == RatchetPacket.sessionKind)
        #expect(try nodes.bobReads(third).0 == "three")
        #expect(nodes.alice.count == 1 && nodes.bob.count == 1)
    }

    @Test func sessionsBegunAtOnceByBothEndsConverge() throws {
        var nodes = Nodes()
        let fromAlice = try nodes.aliceSends("a1")
        let fromBob = try nodes.bobSends("b1")
        #expect(try nodes.bobReads(fromAlice).0 == "a1")
        #expect(try nodes.aliceReads(fromBob).0 == "b1")
        for round in 0..<5 {
            #expect(try nodes.bobReads(try nodes.aliceSends("a\(round)")).0 == "a\(round)")
            #expect(try nodes.aliceReads(try nodes.bobSends("b\(round)")).0 == "b\(round)")
        }
        #expect(nodes.alice.count == 2 && nodes.bob.count == 2)
    }

    @Test func aRestoredStateNeverReusesAMessageKey() throws {
        var nodes = Nodes()
        #expect(try nodes.bobReads(try nodes.aliceSends("hello")).0 == "hello")
        #expect(try nodes.aliceReads(try nodes.bobSends("reply")).0 == "reply")
        let first = try nodes.aliceSends("stored now")
        #expect(first.mustStore)  // a new sending chain after the reply
        let stored = nodes.alice.serialized
        // Sent after the state was stored, then the process died: bob has read them.
        for index in 0..<10 { #expect(try nodes.bobReads(try nodes.aliceSends("lost \(index)")).0 == "lost \(index)") }
        #expect(try nodes.bobReads(first).0 == "stored now")
        nodes.alice = try PairSessions(serialized: stored)
        let after = try nodes.aliceSends("after restart")
        #expect(after.mustStore)
        let packet = try RatchetPacket(decoding: after.packet)
        #expect(packet.message.header.number == PairSessions.reservation)  // 0–255 may have been used
        #expect(try nodes.bobReads(after).0 == "after restart")
    }

    @Test func theGapARestartLeavesOpensUnderTheSealedPacketLimits() throws {
        var nodes = Nodes()
        nodes.limits.maxSkip = 128  // what the mesh uses for sealed packets (§19.4)
        nodes.limits.maxStoredSkipped = 512
        #expect(PairSessions.reservation < nodes.limits.maxSkip)
        #expect(try nodes.bobReads(try nodes.aliceSends("hello")).0 == "hello")
        #expect(try nodes.aliceReads(try nodes.bobSends("reply")).0 == "reply")
        let stored = try nodes.aliceSends("stored now")
        #expect(stored.mustStore)
        let state = nodes.alice.serialized
        // The process dies before anything after the stored state reaches bob.
        for index in 0..<5 { _ = try nodes.aliceSends("never arrived \(index)") }
        nodes.alice = try PairSessions(serialized: state)
        #expect(try nodes.bobReads(try nodes.aliceSends("after restart")).0 == "after restart")
        #expect(try nodes.bobReads(stored).0 == "stored now")
    }

    @Test func aLostSessionIsRepairedWithAFreshOne() throws {
        var nodes = Nodes()
        #expect(try nodes.bobReads(try nodes.aliceSends("hello")).0 == "hello")
        #expect(try nodes.aliceReads(try nodes.bobSends("reply")).0 == "reply")
        let lostID = try #require(nodes.bob.sessionIDs.first)
        nodes.bob = PairSessions()  // bob lost his state
        let orphan = try nodes.aliceSends("into the void")
        #expect(throws: RatchetError(.unknownSession, "")) { try nodes.bobReads(orphan) }
        // Bob's repair begins a fresh session; alice demotes the lost one and prefers bob's.
        let repair = try nodes.bobSends("repair", fresh: true)
        #expect(try kind(repair) == RatchetPacket.prekeyKind)
        #expect(try nodes.aliceReads(repair).0 == "repair")
        nodes.alice.demote(lostID)
        let next = try nodes.aliceSends("works again")
        #expect(try kind(next) == RatchetPacket.sessionKind)
        #expect(try nodes.bobReads(next).0 == "works again")
        #expect(nodes.alice.sessionIDs.last == lostID)
    }

    @Test func aPacketMovedToAnotherHeaderOrTamperedChangesNothing() throws {
        var nodes = Nodes()
        let sealed = try nodes.aliceSends("hello")
        #expect(throws: RatchetError(.authenticationFailed, "")) { try nodes.bobReads(sealed, context: Data("other".utf8)) }
        #expect(nodes.bob.isEmpty)
        var tampered = sealed
        tampered.packet[tampered.packet.count - 1] ^= 1
        #expect(throws: RatchetError(.authenticationFailed, "")) { try nodes.bobReads(tampered) }
        #expect(nodes.bob.isEmpty)
        #expect(try nodes.bobReads(sealed).0 == "hello")
        // A replay of the same packet does not open twice.
        #expect(throws: RatchetError(.authenticationFailed, "")) { try nodes.bobReads(sealed) }
    }

    @Test func anUnknownPrekeyIsAnUnknownSession() throws {
        var nodes = Nodes()
        let sealed = try nodes.aliceSends("hello")
        var rng = SplitMix64(seed: 9)
        nodes.bobRing = PrekeyRing(now: 0, using: &rng)  // bob lost the prekey alice used
        #expect(throws: RatchetError(.unknownSession, "")) { try nodes.bobReads(sealed) }
    }

    @Test func atMostThreeSessionsAreKept() throws {
        var nodes = Nodes()
        for index in 0..<5 {
            #expect(try nodes.bobReads(try nodes.aliceSends("fresh \(index)", fresh: true)).0 == "fresh \(index)")
        }
        #expect(nodes.alice.count == PairSessions.maxSessions && nodes.bob.count == PairSessions.maxSessions)
    }

    @Test func storedSessionsAreChecked() throws {
        var nodes = Nodes()
        _ = try nodes.bobReads(try nodes.aliceSends("hello"))
        let stored = nodes.bob.serialized
        #expect(try PairSessions(serialized: stored).sessionIDs == nodes.bob.sessionIDs)
        for cut in [0, 1, 2, 20, stored.count - 1] {
            #expect(throws: RatchetError.self) { try PairSessions(serialized: stored.prefix(cut)) }
        }
        var many = stored
        many[1] = 200
        #expect(throws: RatchetError(.malformed, "")) { try PairSessions(serialized: many) }
        #expect(throws: RatchetError(.malformed, "")) { try PairSessions(serialized: Data(count: PairSessions.maxStoredBytes + 1)) }
        // A reservation far past the sending position (which would make a restore derive that many
        // keys) is refused: alice's pending session stores its prekey header, then the reservation.
        var aliceStored = nodes.alice.serialized
        let through = 2 + 8 + 32 + 1 + 68 + 32
        #expect(aliceStored[42] == 3)  // flags: prekey header and reservation
        aliceStored.replaceSubrange(through ..< through + 4, with: [0, 0, 0x13, 0x88])  // 5,000: within what a restore may derive at all, far past 64
        #expect(throws: RatchetError(.malformed, "")) { try PairSessions(serialized: aliceStored) }
        // A file may not raise the limits its sessions were made with.
        var small = RatchetLimits()
        small.maxSkip = 128
        #expect(throws: RatchetError(.malformed, "")) { try PairSessions(serialized: stored, limits: small) }
    }

    @Test func packetsAreDecodedDefensively() {
        for bytes in [Data(), Data([1]), Data([2] + [UInt8](repeating: 0, count: 63)), Data([3] + [UInt8](repeating: 0, count: 200)),
                      Data([1] + [UInt8](repeating: 0, count: 123))] {
            #expect(throws: RatchetError(.malformed, "")) { try RatchetPacket(decoding: bytes) }
        }
    }

    @Test func prekeysRotateWeeklyAndAreKeptForThirtyDays() throws {
        var rng = SplitMix64(seed: 3)
        var ring = PrekeyRing(now: 0, using: &rng)
        let first = ring.currentID
        #expect(!ring.rotateIfDue(now: PrekeyRing.rotationInterval - 1, using: &rng))
        #expect(ring.rotateIfDue(now: PrekeyRing.rotationInterval, using: &rng))
        #expect(ring.currentID != first && ring.privateKey(id: first) != nil)
        // The first stopped being current at one week; it goes 30 days later.
        _ = ring.rotateIfDue(now: PrekeyRing.rotationInterval + PrekeyRing.retention - 1, using: &rng)
        #expect(ring.privateKey(id: first) != nil)
        _ = ring.rotateIfDue(now: PrekeyRing.rotationInterval + PrekeyRing.retention, using: &rng)
        #expect(ring.privateKey(id: first) == nil)
        // A clock set back by an hour keeps the current key; set back by more than a week (or a key
        // dated far ahead), it is replaced.
        let current = ring.currentID
        #expect(!ring.rotateIfDue(now: PrekeyRing.rotationInterval + PrekeyRing.retention - 3_600_000, using: &rng) && ring.currentID == current)
        #expect(ring.rotateIfDue(now: -5, using: &rng) && ring.currentID != current)
        let restored = try PrekeyRing(serialized: ring.serialized)
        #expect(restored.ids == ring.ids)
        #expect(throws: RatchetError(.malformed, "")) { try PrekeyRing(serialized: Data([1, 0])) }
    }
}
