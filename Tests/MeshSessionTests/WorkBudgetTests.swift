import Crypto
import Foundation
import MeshRatchet
import MeshRouting
@testable import MeshSession
import MeshWire
import Testing

/// Sealed packets are charged to the neighbour they came from by the work they ask for (§13.11):
/// Diffie-Hellman to the opening budget, key derivation and bytes to the derivation budget, a
/// relayed session message by its size. Node values on a line, explicit time.
@Suite("Work-based budgets for sealed packets")
struct WorkBudgetTests {
    typealias Line = MeshNodeStateMachineTests.Line

    /// A line whose first two nodes hold a ratchet session on which node 0's next message is a
    /// chain step at node 1 (node 1 began it, node 0 answered and node 1 read the answer).
    static func established() throws -> Line {
        var line = Line.settled()
        for (from, to) in [(1, 0), (0, 1), (1, 0)] {
            let step = try #require(try line.nodes[from].sendSealed(.data(MeshNodeStateMachineTests.data("hi")), to: line.ids[to],
                                                                    now: line.now, nowMilliseconds: line.nowMilliseconds,
                                                                    random: &line.random))
            line.take(step, at: from)
        }
        #expect(line.received(at: 1).count == 1 && line.received(at: 0).count == 2)
        return line
    }

    static func sealed(_ line: inout Line, _ text: String, from: Int, to: Int) throws -> RoutedPayload {
        let step = try #require(try line.nodes[from].sendSealed(.data(MeshNodeStateMachineTests.data(text)), to: line.ids[to],
                                                                now: line.now, nowMilliseconds: line.nowMilliseconds,
                                                                random: &line.random))
        return try #require(step.sends.first?.1)
    }

    @Test("chain-step session messages are not held to the opening budget: 3,000 at once all open")
    func chainStepsPass() throws {
        var line = try Self.established()
        let count = 3 * NeighborWork.opening.budget.burst
        var opened = 0
        for index in 0..<count {
            let packet = try Self.sealed(&line, "line \(index)", from: 0, to: 1)
            #expect(packet.sealed.first == RatchetPacket.sessionKind)
            let step = line.nodes[1].received(packet, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
            opened += step.events.filter { if case .received = $0 { true } else { false } }.count
        }
        #expect(opened == count)
        #expect(line.nodes[1].router.budgets.dropped.isEmpty)
    }

    @Test("forged session messages that would turn the ratchet take the opening budget; chain steps still open")
    func forgedTurnsAreCharged() throws {
        var line = try Self.established()
        // Node 0's next message turns node 1's ratchet (node 0 read node 1's new key): deliver it, so
        // that the one after is a chain step. Node 1 has done two turns now.
        let turn = try Self.sealed(&line, "turn", from: 0, to: 1)
        let turned = line.nodes[1].received(turn, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
        #expect(turned.events.contains { if case .received = $0 { true } else { false } })
        let genuine = try Self.sealed(&line, "genuine", from: 0, to: 1)
        let burst = NeighborWork.opening.budget.burst
        for _ in 0..<(burst + 50) {
            var forged = try Self.sealed(&line, "x", from: 0, to: 1)
            var bytes = [UInt8](forged.sealed)
            let other = Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation
            // The message header (§19.6): a ratchet key nobody sent, message number 0 of its chain.
            bytes.replaceSubrange(9..<41, with: other)
            bytes.replaceSubrange(45..<49, with: [0, 0, 0, 0])
            forged.sealed = Data(bytes)
            #expect(line.nodes[1].endToEnd.openingWork(of: forged.sealed, from: line.ids[0]).diffieHellman)
            _ = line.nodes[1].received(forged, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
        }
        let dropped = line.nodes[1].router.budgets.dropped
        #expect(dropped[.opening] == 52, "the burst less the two turns before")
        #expect(dropped[.derivation] == nil, "a turn to message 0 derives one key (and the previous chain's gap)")
        let before = line.nodes[1].router.budgets.dropped
        let step = line.nodes[1].received(genuine, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds, random: &line.random)
        #expect(line.nodes[1].router.budgets.dropped == before)
        #expect(step.events.contains { if case .received = $0 { true } else { false } }, "a chain step opens with the opening budget spent")
    }

    @Test("a relay charges session messages by size to their own budget, prekey messages one each to the relaying budget")
    func relayedBySize() {
        var line = Line.settled()
        let (origin, destination) = (line.ids[0], line.ids[2])
        var random = line.random
        var relay = line.nodes[1]
        func relayed(kind: UInt8, bytes: Int, count: Int) -> Int {
            var total = 0
            for _ in 0..<count {
                var packet = MeshNodeStateMachineTests.transit(from: origin, to: destination, random: &random)
                packet.sealed = Data([kind]) + Data(count: bytes - 1)
                total += relay.received(packet, from: origin, now: line.now, nowMilliseconds: line.nowMilliseconds, random: &random).sends.count
            }
            return total
        }
        // The other neighbour relays a session message the other way: the work-conserving
        // session-relaying budget binds each of them (§13.11).
        var back = MeshNodeStateMachineTests.transit(from: destination, to: origin, random: &random)
        back.sealed = Data([RatchetPacket.sessionKind]) + Data(count: 99)
        let backSends = relay.received(back, from: destination, now: line.now, nowMilliseconds: line.nowMilliseconds, random: &random).sends
        #expect(backSends.count == 1)
        let session = NeighborWork.sessionRelaying.budget.burst
        // A 60,000-byte chunk costs 1 + 4 units (per packet, per started 16 KiB).
        let chunks = relayed(kind: RatchetPacket.sessionKind, bytes: 60_000, count: session / 5 + 20)
        #expect(chunks == session / 5)
        let prekey = NeighborWork.relaying.budget.burst
        let prekeys = relayed(kind: RatchetPacket.prekeyKind, bytes: 200, count: prekey + 20)
        #expect(prekeys == prekey, "the relaying budget is separate")
        #expect(relay.router.budgets.dropped[.sessionRelaying] == 20)
        #expect(relay.router.budgets.dropped[.relaying] == 20)
    }

    @Test("a lone neighbour's relayed session messages are not capped by the session-relaying budget on an idle relay; its prekey messages are (§13.11)")
    func loneNeighbourRelaysPastTheBudget() {
        var line = Line.settled()
        let (origin, destination) = (line.ids[0], line.ids[2])
        var random = line.random
        var relay = line.nodes[1]
        let chunks = NeighborWork.sessionRelaying.budget.burst / 5 + 200
        var relayed = 0
        for _ in 0..<chunks {
            var packet = MeshNodeStateMachineTests.transit(from: origin, to: destination, random: &random)
            packet.sealed = Data([RatchetPacket.sessionKind]) + Data(count: 59_999)
            #expect(relay.budgetWait(packet, from: origin, now: line.now) == nil)
            relayed += relay.received(packet, from: origin, now: line.now, nowMilliseconds: line.nowMilliseconds, random: &random).sends.count
        }
        #expect(relayed == chunks, "all relayed, none waited for")
        #expect(relay.router.budgets.dropped[.sessionRelaying] == nil && relay.router.budgets.borrowed[.sessionRelaying] == 200)
    }
}
