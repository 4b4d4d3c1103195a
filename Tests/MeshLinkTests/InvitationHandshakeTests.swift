import Foundation
@testable import MeshLink
import MeshWire
import Testing

/// The invitation carried in handshake message 3 (PROTOCOL.md §4.8).
@Suite("Handshake invitations")
struct InvitationHandshakeTests {
    static func pumped(_ invitation: InvitationRequest?) throws -> Pump<HandshakeStateMachine, HandshakeStateMachine> {
        var initiator = FixedParty.alice.configuration()
        initiator.invitation = invitation
        var pump = try machinePump(initiator, FixedParty.bob.configuration())
        pump.run()
        return pump
    }

    @Test("the responder receives the initiator's invitation with its context and timeout; the initiator sees none")
    func carried() throws {
        let request = InvitationRequest(context: Data("join me".utf8), timeoutMilliseconds: 30_000)
        let pump = try Self.pumped(request)
        #expect(try #require(pump.responderOutcome.link).invitation == request)
        #expect(try #require(pump.initiatorOutcome.link).invitation == nil)
    }

    @Test("a plain link carries no invitation")
    func plain() throws {
        let pump = try Self.pumped(nil)
        #expect(try #require(pump.responderOutcome.link).invitation == nil)
    }

    @Test("the largest context (4,096 bytes) and the timeout bounds are accepted",
          arguments: [(4096, UInt32(1_000)), (0, UInt32(300_000))])
    func bounds(_ size: Int, _ timeout: UInt32) throws {
        let pump = try Self.pumped(InvitationRequest(context: Data(count: size), timeoutMilliseconds: timeout))
        #expect(try #require(pump.responderOutcome.link).invitation?.context.count == size)
    }

    @Test("an oversized context or a timeout out of range is refused by the responder with a reason",
          arguments: [(4097, UInt32(10_000), "exceeds the maximum 4096"), (0, UInt32(999), "outside 1000–300000"),
                      (0, UInt32(300_001), "outside 1000–300000"), (0, UInt32(0), "outside")])
    func refused(_ size: Int, _ timeout: UInt32, _ fragment: String) throws {
        let pump = try Self.pumped(InvitationRequest(context: Data(count: size), timeoutMilliseconds: timeout))
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .protocolViolation)
        #expect(reason.message.contains(fragment), "\(reason.message)")
    }
}
