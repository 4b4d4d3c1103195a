import Crypto
import Foundation
import MeshLink
@testable import MeshSession
import Testing

/// Safety numbers through the public API (PROTOCOL.md §20.1), on two real sessions.
@Suite("safety numbers between sessions")
struct SafetyNumberSessionTests {
    @Test("both ends show the same safety number, made from the keys each really holds")
    func sameOnBothSides() async throws {
        let pair = try await ConnectedPair()
        defer { Task { await pair.b.stop(); await pair.a.stop() } }
        let aKey = pair.a.session.peer.identity.signingKey.publicKey
        let bKey = pair.b.session.peer.identity.signingKey.publicKey
        #expect(pair.a.session.identityKey(of: pair.bSeenByA) == bKey.rawRepresentation)
        #expect(pair.b.session.identityKey(of: pair.aSeenByB) == aKey.rawRepresentation)
        let fromA = try #require(pair.a.session.safetyNumber(with: pair.bSeenByA))
        let fromB = try #require(pair.b.session.safetyNumber(with: pair.aSeenByB))
        #expect(fromA == fromB)
        #expect(fromA == SafetyNumber(aKey, bKey))
        #expect(fromA.digits.count == 60)
        // A node nobody has heard of has no number.
        let stranger = try PeerID(id: NodeID.random(), displayName: "stranger")
        #expect(pair.a.session.safetyNumber(with: stranger) == nil)
    }
}
