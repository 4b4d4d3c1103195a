import Foundation
import MeshRatchet
import MeshRouting
@testable import MeshSession
import MeshWire
import SwiftProtobuf
import Testing

/// A relay passes a packet on as it came, changing only its hop fields (PROTOCOL.md §13.1,
/// §13.2.2), and makes a neighbour's link wait when its relayed session messages are over budget
/// (§13.11). Node values on a line A—B—C, explicit time.
@Suite("Relays re-frame packets")
struct RelayReframeTests {
    typealias Line = MeshNodeStateMachineTests.Line

    /// A field number no version of `Routed` uses, as a newer peer's field would come.
    static let newerField: [UInt8] = [0xF8, 0x07, 0x2A]  // field 127, varint 42

    @Test("a sealed packet in transit goes on as it came: only hop_limit and hops change, a newer peer's field stays")
    func sealedKeepsItsBytes() throws {
        var line = Line.settled()
        var packet = MeshNodeStateMachineTests.transit(from: line.ids[0], to: line.ids[2], random: &line.random)
        packet.sealed = Data([RatchetPacket.sessionKind]) + Data((0..<199).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let received = try RoutedPayload(decoding: packet.serialized + Data(Self.newerField), what: "routed")
        let step = line.nodes[1].received(received, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds,
                                          random: &line.random)
        #expect(step.violation == nil)
        let sent = try #require(step.sends.first { $0.0 == line.ids[2] }?.1)
        var expected = received
        expected.hopLimit = 6
        expected.hops = 1
        #expect(sent == expected)
        #expect(sent.serialized == expected.serialized)
        #expect(sent.unknownFields.data == Data(Self.newerField))
        #expect(sent.sealed == packet.sealed)
    }

    @Test("a relayed broadcast's signed part goes on byte for byte, and still verifies at the next node")
    func broadcastKeepsItsBytes() throws {
        var line = Line.settled()
        let step = line.nodes[0].broadcast(.data(MeshNodeStateMachineTests.data("to all")), sentAt: line.nowMilliseconds,
                                           now: line.now, random: &line.random)
        let packet = try #require(step.sends.first { $0.0 == line.ids[1] }?.1)
        let received = try RoutedPayload(decoding: packet.serialized + Data(Self.newerField), what: "routed")
        let relayed = line.nodes[1].received(received, from: line.ids[0], now: line.now, nowMilliseconds: line.nowMilliseconds,
                                             random: &line.random)
        let sent = try #require(relayed.sends.first { $0.0 == line.ids[2] }?.1)
        #expect(sent.broadcast.serialized == received.broadcast.serialized)
        #expect(sent.hopLimit == received.hopLimit - 1 && sent.hops == received.hops + 1)
        #expect(sent.unknownFields.data == Data(Self.newerField))
        let at = line.nodes[2].received(sent, from: line.ids[1], now: line.now, nowMilliseconds: line.nowMilliseconds,
                                        random: &line.random)
        #expect(at.events.contains { if case .received = $0 { true } else { false } })
    }

    @Test("a relay's own packets and what it answers are encoded, not re-framed from the packet that came")
    func ownPacketsAreEncoded() {
        let line = Line.settled()
        var random = line.random
        let packet = MeshNodeStateMachineTests.transit(from: line.ids[0], to: line.ids[2], random: &random)
        var other = RoutedPacket(origin: line.ids[1], packetID: PacketID(high: 1, low: 2), hopLimit: 7,
                                 kind: .unicast(destination: line.ids[2]), payload: Data([1, 2, 3]))
        #expect(MeshNodeStateMachine.reframe(packet, as: other) == nil)
        other.origin = line.ids[0]
        #expect(MeshNodeStateMachine.reframe(packet, as: other) == nil, "another packet id")
    }

    @Test("relayed session messages over budget make the reader wait; prekey messages and packets for this node do not (§13.11)")
    func sessionRelayingWaits() {
        var line = Line.settled()
        let (origin, destination) = (line.ids[0], line.ids[2])
        var random = line.random
        func chunk(kind: UInt8, to node: NodeID) -> RoutedPayload {
            var packet = MeshNodeStateMachineTests.transit(from: origin, to: node, random: &random)
            packet.sealed = Data([kind]) + Data(count: 59_999)
            return packet
        }
        // The other neighbour relays a session message the other way: the work-conserving
        // session-relaying budget binds (§13.11).
        var back = MeshNodeStateMachineTests.transit(from: destination, to: origin, random: &random)
        back.sealed = Data([RatchetPacket.sessionKind]) + Data(count: 99)
        _ = line.nodes[1].received(back, from: destination, now: line.now, nowMilliseconds: line.nowMilliseconds, random: &random)
        let burst = NeighborWork.sessionRelaying.budget
        var relayed = 0
        while line.nodes[1].budgetWait(chunk(kind: RatchetPacket.sessionKind, to: destination), from: origin, now: line.now) == nil {
            let step = line.nodes[1].received(chunk(kind: RatchetPacket.sessionKind, to: destination), from: origin, now: line.now,
                                              nowMilliseconds: line.nowMilliseconds, random: &random)
            relayed += step.sends.count
            guard relayed <= burst.burst else { break }
        }
        // A 60,000-byte chunk costs 5 units: the reader waits before the burst is overdrawn.
        #expect(relayed == burst.burst / 5)
        #expect(line.nodes[1].router.budgets.dropped[.sessionRelaying] == nil, "nothing was dropped")
        let wait = line.nodes[1].budgetWait(chunk(kind: RatchetPacket.sessionKind, to: destination), from: origin, now: line.now)
        #expect(wait.map { $0 > .zero && $0 <= .milliseconds(1) } == true, "5 units at 8,192 a second")
        #expect(line.nodes[1].budgetWait(chunk(kind: RatchetPacket.prekeyKind, to: destination), from: origin, now: line.now) == nil)
        #expect(line.nodes[1].budgetWait(chunk(kind: RatchetPacket.sessionKind, to: line.ids[1]), from: origin, now: line.now) == nil)
        line.now = line.now + wait!
        #expect(line.nodes[1].budgetWait(chunk(kind: RatchetPacket.sessionKind, to: destination), from: origin, now: line.now) == nil)
    }
}
