import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// Successful handshakes, two machines pumped against each other (PROTOCOL.md §4, §5, §8.1).
@Suite("Handshake")
struct HandshakeTests {
    @Test("a pumped handshake establishes both sides with the other's node id, name, UDP port and capabilities")
    func establishesBothSides() throws {
        let (alice, bob) = (FixedParty.alice, FixedParty.bob)
        var pump = try machinePump(alice.configuration(), bob.configuration())
        pump.run()
        let initiator = try #require(pump.initiatorOutcome.link)
        let responder = try #require(pump.responderOutcome.link)

        #expect(initiator.role == .initiator)
        #expect(initiator.peer.nodeID == bob.identity.nodeID)
        #expect(initiator.peer.displayName == "bob")
        #expect(initiator.peer.udpPort == 40002)
        #expect(initiator.peer.capabilities == ["udp"])
        #expect(initiator.peer.protocolVersion == 8)
        #expect(initiator.peer.signedPrekey == FixedParty.bob.signedPrekey)
        #expect(initiator.peer.identityKey == bob.signingKey.publicKey.rawRepresentation)
        #expect(initiator.peer.staticKey == bob.staticKey.publicKey.rawRepresentation)

        #expect(responder.role == .responder)
        #expect(responder.peer.nodeID == alice.identity.nodeID)
        #expect(responder.peer.displayName == "alice")
        #expect(responder.peer.udpPort == 40001)
        #expect(responder.peer.capabilities == ["udp"])
        #expect(responder.peer.identityKey == alice.signingKey.publicKey.rawRepresentation)
        #expect(responder.peer.staticKey == alice.staticKey.publicKey.rawRepresentation)

        #expect(initiator.handshakeHash.count == 32)
        #expect(initiator.handshakeHash == responder.handshakeHash)
        // Exactly the three messages of XX, alternating, and nothing else.
        #expect(pump.transcript.map(\.from) == [.initiator, .responder, .initiator])
        #expect(pump.frames(.handshake).count == 3)
    }

    @Test("the initiator's established action carries message 3; the responder's carries no frame")
    func establishedActions() throws {
        var initiator = try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i"))
        var responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
        #expect(responder.start().isNone, "a responder waits for message 1")
        let message1 = try #require(initiator.start().sentFrame)
        #expect(message1.type == .handshake)
        #expect(initiator.start().isNone, "start twice writes nothing more")
        let message2 = try #require(responder.receivedFrame(message1).sentFrame)
        #expect(message2.type == .handshake)

        guard case .established(_, let message3?) = initiator.receivedFrame(message2) else {
            Issue.record("the initiator did not establish with message 3 to send")
            return
        }
        #expect(message3.type == .handshake)
        guard case .established(_, nil) = responder.receivedFrame(message3) else {
            Issue.record("the responder did not establish without a frame")
            return
        }
        // Finished machines ignore anything else.
        #expect(initiator.receivedFrame(message2).isNone)
        #expect(responder.receivedFrame(message3).isNone)
        #expect(responder.receivedFrame(Frame.abort(.normal, reason: "late")).isNone)
    }

    @Test("message sizes: 32-byte e plus clear hello; e, encrypted s and payload; encrypted s and payload")
    func messageSizes() throws {
        let (alice, bob) = (FixedParty.alice, FixedParty.bob)
        var pump = try machinePump(alice.configuration(), bob.configuration())
        pump.run()
        let bodies = pump.frames(.handshake).map { $0.count - WireLimits.frameHeaderSize }
        let hello = helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: "meshchat").count
        let identity = { (party: FixedParty) in
            identityPayload(party.identity, displayName: party.name, udpPort: UInt32(party.udpPort), prekey: party.signedPrekey).count
        }
        #expect(bodies == [32 + hello, 32 + 48 + identity(bob) + 16, 48 + identity(alice) + 16])
    }

    @Test("the keys agree: each side opens what the other seals, in both directions, in order")
    func keyAgreement() throws {
        var pump = try machinePump(try randomConfiguration("i"), try randomConfiguration("r"))
        pump.run()
        var initiator = try #require(pump.initiatorOutcome.link)
        var responder = try #require(pump.responderOutcome.link)
        for round in 0..<3 {
            let toResponder = Envelope.chat(id: Data(pattern(from: UInt8(round), count: 16)), text: "hi \(round)", sentAtMilliseconds: 7)
            var buffer = ByteBuffer()
            try initiator.channel.seal(toResponder, into: &buffer)
            let frames = try parseAll(buffer)
            #expect(frames.count == 1)
            #expect(try responder.channel.open(frames[0]) == toResponder.encoded)

            let toInitiator = Envelope.pong(nonce: UInt64(round))
            buffer.clear()
            try responder.channel.seal(toInitiator, into: &buffer)
            #expect(try initiator.channel.open(try parseAll(buffer)[0]) == toInitiator.encoded)
        }
        // A side cannot open its own frames: the two directions use different keys.
        var buffer = ByteBuffer()
        try initiator.channel.seal(Envelope.ping(nonce: 1), into: &buffer)
        let own = try parseAll(buffer)[0]
        #expect(throws: LinkCloseReason.self) { try initiator.channel.open(own) }
    }

    @Test("datagram keys mirror: the initiator's send key and tag are the responder's receive key and tag")
    func datagramKeysMirror() throws {
        var pump = try machinePump(try randomConfiguration("i"), try randomConfiguration("r"))
        pump.run()
        let initiator = try #require(pump.initiatorOutcome.link).datagramKeys
        let responder = try #require(pump.responderOutcome.link).datagramKeys
        #expect(bytes(of: initiator.sendKey) == bytes(of: responder.receiveKey))
        #expect(bytes(of: initiator.receiveKey) == bytes(of: responder.sendKey))
        #expect(initiator.sendTag == responder.receiveTag)
        #expect(initiator.receiveTag == responder.sendTag)
        // The two directions are distinct.
        #expect(bytes(of: initiator.sendKey) != bytes(of: initiator.receiveKey))
        #expect(initiator.sendTag != initiator.receiveTag)

        // And they work: a datagram each way opens on the other side.
        var toResponder = DatagramSealer(keys: initiator)
        var atResponder = DatagramOpener(keys: responder)
        var toInitiator = DatagramSealer(keys: responder)
        var atInitiator = DatagramOpener(keys: initiator)
        var datagram = ByteBuffer()
        try toResponder.seal(Data("to r".utf8), into: &datagram)
        var header = try DatagramHeader(decoding: &datagram)
        #expect(header.tag == atResponder.tag)
        #expect(try atResponder.open(header: header, box: datagram) == Data("to r".utf8))
        datagram.clear()
        try toInitiator.seal(Data("to i".utf8), into: &datagram)
        header = try DatagramHeader(decoding: &datagram)
        #expect(header.tag == atInitiator.tag)
        #expect(try atInitiator.open(header: header, box: datagram) == Data("to i".utf8))
    }

    @Test("fresh ephemeral keys: two handshakes between the same identities derive different keys")
    func freshKeysPerHandshake() throws {
        let (alice, bob) = (FixedParty.alice, FixedParty.bob)
        var first = try machinePump(alice.configuration(), bob.configuration())
        var second = try machinePump(alice.configuration(), bob.configuration())
        first.run()
        second.run()
        let a = try #require(first.initiatorOutcome.link)
        let b = try #require(second.initiatorOutcome.link)
        #expect(a.handshakeHash != b.handshakeHash)
        #expect(bytes(of: a.datagramKeys.sendKey) != bytes(of: b.datagramKeys.sendKey))
    }

    @Test("the prologue is \"meshchat\" ‖ 0 ‖ version 8 ‖ 0 ‖ service type (§4.2)")
    func prologue() {
        #expect(HandshakeStateMachine.prologue(serviceType: "meshchat").hexString == "6d657368636861740008006d65736863686174")
        #expect(HandshakeStateMachine.prologue(serviceType: "").hexString == "6d65736863686174000800")
        // §4.11: a handshake after a RETRY from AESGCM (2) to ChaChaPoly (1) appends 0 ‖ "retry" ‖ 2 ‖ 1.
        #expect(HandshakeStateMachine.prologue(serviceType: "meshchat", retry: (.aesGCM, .chaChaPoly)).hexString
            == "6d657368636861740008006d657368636861740072657472790201")
        #expect(HandshakeStateMachine.noiseProtocol == "Noise_XX_25519_ChaChaPoly_SHA256")
    }
}
