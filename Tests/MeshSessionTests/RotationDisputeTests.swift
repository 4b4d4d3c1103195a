import Crypto
import Foundation
import MeshLink
import MeshRouting
@testable import MeshSession
import MeshTestSupport
import MeshTrust
import MeshWire
import Testing

/// Two valid key rotation statements from one retired key naming different successors (PROTOCOL.md
/// §20.2): the retired key leaked. The first verified statement keeps what it carried; the later one
/// carries nothing and is reported as a dispute.
@Suite("Disputed key rotations")
struct RotationDisputeTests {
    typealias Wire = KeyRotationWireTests

    /// A line of three nodes whose ends (0 and 2) both carry a statement retiring `old` for their own key.
    static func twoClaimants(of old: Curve25519.Signing.PrivateKey) throws -> MeshNodeStateMachineTests.Line {
        var line = MeshNodeStateMachineTests.Line()
        for index in [0, 2] {
            var identity = line.nodes[index].identity
            identity.rotations = [Wire.statement(old, identity.signingKey)]
            let peer = try LocalPeer(displayName: MeshNodeStateMachineTests.Line.names[index], identity: identity)
            line.nodes[index] = MeshNodeStateMachine(peer: peer, configuration: RoutingConfiguration(), initialSequence: 1, now: .zero,
                                                     logger: Wire.logger)
        }
        return line
    }

    @Test("the first statement is a rotation; a second naming another key is a dispute naming the first; repeats report nothing")
    func book() {
        var book = RotationBook()
        let old = Wire.key(40), first = Wire.key(41), second = Wire.key(42)
        let rotated = book.learn([Wire.statement(old, first)], identityKey: first.publicKey.rawRepresentation, logger: Wire.logger)
        #expect(rotated == [RotationBook.Step(old: Wire.node(old), new: Wire.node(first))])
        let disputed = book.learn([Wire.statement(old, second)], identityKey: second.publicKey.rawRepresentation, logger: Wire.logger)
        #expect(disputed == [RotationBook.Step(old: Wire.node(old), new: Wire.node(second), disputes: Wire.node(first))])
        // Adverts repeat their statements every refresh: each is reported once.
        #expect(book.learn([Wire.statement(old, second)], identityKey: second.publicKey.rawRepresentation, logger: Wire.logger).isEmpty)
        #expect(book.learn([Wire.statement(old, first)], identityKey: first.publicKey.rawRepresentation, logger: Wire.logger).isEmpty)
        // A later statement of the first successor's own (a chain) is no dispute.
        let third = Wire.key(43)
        let chained = book.learn([Wire.statement(first, third), Wire.statement(old, first)], identityKey: third.publicKey.rawRepresentation,
                                 logger: Wire.logger)
        #expect(chained == [RotationBook.Step(old: Wire.node(first), new: Wire.node(third))])
    }

    @Test("a node hears two nodes claim one retired key: one keyRotated for the first, one keyRotationDisputed naming it for the second")
    func acrossTheMesh() throws {
        let old = Wire.key(40)
        var line = try Self.twoClaimants(of: old)
        line.link(0, 1)
        for _ in 0..<3 { line.advance(.seconds(1)) }
        line.link(1, 2)
        for _ in 0..<5 { line.advance(.seconds(1)) }
        let rotations = line.events[1].compactMap { event -> (NodeID, NodeID)? in
            if case .keyRotated(let peer, let previous) = event { return (peer.id, previous) }
            return nil
        }
        let disputes = line.events[1].compactMap { event -> (NodeID, NodeID, NodeID)? in
            if case .keyRotationDisputed(let peer, let previous, let successor) = event { return (peer.id, previous, successor) }
            return nil
        }
        #expect(rotations.count == 1 && rotations.first?.0 == line.ids[0] && rotations.first?.1 == Wire.node(old))
        #expect(disputes.count == 1)
        #expect(disputes.first?.0 == line.ids[2] && disputes.first?.1 == Wire.node(old) && disputes.first?.2 == line.ids[0])
    }

    @Test("a node whose own retired key is claimed by another node hears a dispute naming itself as the successor")
    func ownRetiredKeyClaimed() throws {
        let old = Wire.key(40)
        var line = try Self.twoClaimants(of: old)
        line.link(0, 1)
        line.link(1, 2)
        for _ in 0..<6 { line.advance(.seconds(1)) }
        let disputes = line.events[0].compactMap { event -> (NodeID, NodeID, NodeID)? in
            if case .keyRotationDisputed(let peer, let previous, let successor) = event { return (peer.id, previous, successor) }
            return nil
        }
        #expect(disputes.count == 1, "node 0 retired the key that node 2 claims: \(line.events[0])")
        #expect(disputes.first?.0 == line.ids[2] && disputes.first?.1 == Wire.node(old) && disputes.first?.2 == line.ids[0])
        #expect(!line.events[0].contains { if case .keyRotated = $0 { true } else { false } }, "the claimant is no successor of this node's key")
    }
}
