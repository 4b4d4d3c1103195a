import Crypto
import Foundation
@testable import MeshLink
import MeshWire
import Testing

/// The key rotation statement in the handshake identity (PROTOCOL.md §4.3, §20.2): carried as sent,
/// checked by the session (not here).
@Suite("Handshake key rotation")
struct KeyRotationHandshakeTests {
    @Test("the responder's newest statement reaches the initiator and the initiator's the responder; none when never rotated")
    func carried() throws {
        var statement = KeyRotationPayload()
        statement.oldKey = Data(repeating: 7, count: 32)
        statement.newKey = FixedParty.bob.identity.signingKey.publicKey.rawRepresentation
        statement.issuedMs = 1_800_000_000_000
        statement.oldSignature = Data(repeating: 1, count: 64)
        statement.newSignature = Data(repeating: 2, count: 64)
        var older = statement
        older.issuedMs = 1
        var responder = FixedParty.bob.configuration()
        responder.identity.rotations = [statement, older]
        var pump = try machinePump(FixedParty.alice.configuration(), responder)
        pump.run()
        #expect(try #require(pump.initiatorOutcome.link).peer.rotation == statement)
        #expect(try #require(pump.responderOutcome.link).peer.rotation == nil)
    }
}
