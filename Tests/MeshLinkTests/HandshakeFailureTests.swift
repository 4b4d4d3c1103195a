import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import NIOCore
import Testing

/// Handshakes that must fail, each refused with a reason on both sides (PROTOCOL.md §4.4, §4.5,
/// §4.7, §9): the side that detects the problem aborts with an ABORT frame, and the other side
/// reports the same code and message as the peer's.
@Suite("Handshake failures")
struct HandshakeFailureTests {
    // MARK: Helpers

    /// A fake responder whose Noise static key is `noiseStatic` and whose identity payload is
    /// built from `claimed` (valid unless `alter` changes it).
    static func fakeResponder(
        serviceType: String = "meshchat", prologue: [UInt8]? = nil,
        noiseStatic: Curve25519.KeyAgreement.PrivateKey = .init(), claimed: LocalIdentity? = nil,
        displayName: String = "mallory", alter: (inout IdentityPayload) -> Void = { _ in }
    ) throws -> FakeNoisePeer {
        let identity = try claimed ?? LocalIdentity(signingKey: .init(), staticKey: noiseStatic)
        return try FakeNoisePeer(
            initiator: false, serviceType: serviceType, prologue: prologue, staticKey: noiseStatic,
            identity: identityPayload(identity, displayName: displayName, alter: alter))
    }

    /// A fake initiator; see ``fakeResponder(serviceType:prologue:noiseStatic:claimed:displayName:alter:)``.
    static func fakeInitiator(
        serviceType: String = "meshchat", prologue: [UInt8]? = nil, hello: Data? = nil,
        noiseStatic: Curve25519.KeyAgreement.PrivateKey = .init(), claimed: LocalIdentity? = nil,
        displayName: String = "mallory", alter: (inout IdentityPayload) -> Void = { _ in }
    ) throws -> FakeNoisePeer {
        let identity = try claimed ?? LocalIdentity(signingKey: .init(), staticKey: noiseStatic)
        return try FakeNoisePeer(
            initiator: true, serviceType: serviceType, prologue: prologue, staticKey: noiseStatic, hello: hello,
            identity: identityPayload(identity, displayName: displayName, alter: alter))
    }

    /// A real initiator against `fake`.
    static func run(initiatorAgainst fake: FakeNoisePeer, serviceType: String = "meshchat") throws
        -> Pump<HandshakeStateMachine, FakeNoisePeer>
    {
        var pump = Pump(
            try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i", serviceType: serviceType)),
            fake)
        pump.run()
        return pump
    }

    /// `fake` against a real responder.
    static func run(responderAgainst fake: FakeNoisePeer) throws -> Pump<FakeNoisePeer, HandshakeStateMachine> {
        var pump = Pump(fake, try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r")))
        pump.run()
        return pump
    }

    /// Feeds an ABORT detected by an initiator to a real responder waiting for message 3.
    static func expectResponderReports(
        _ abort: Frame?, code: CloseCode, message: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var responder = try machinesAfterMessage1().responder
        expectReportedByPeer(abort, to: &responder, code: code, message: message ?? "", sourceLocation: sourceLocation)
    }

    /// Feeds an ABORT detected by a responder to a real initiator waiting for message 2.
    static func expectInitiatorReports(
        _ abort: Frame?, code: CloseCode, message: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var initiator = try machinesAfterMessage1().initiator
        expectReportedByPeer(abort, to: &initiator, code: code, message: message ?? "", sourceLocation: sourceLocation)
    }

    // MARK: (a), (b) tampering

    @Test("a tampered message 2 is refused by the initiator with handshakeFailed", arguments: [
        0,  // the responder's ephemeral key
        40,  // inside the encrypted static key
        90,  // inside the encrypted identity payload
        -1,  // the last byte of the payload's tag
    ])
    func tamperedMessage2(offset: Int) throws {
        var pump = try machinePump(try randomConfiguration("i"), try randomConfiguration("r"))
        pump.tamper = { index, frame in
            if index == 1 { frame[offset >= 0 ? WireLimits.frameHeaderSize + offset : frame.count + offset] ^= 0x40 }
        }
        pump.run()
        expectRefusal(
            detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .handshakeFailed,
            mentions: ["handshake message 2 failed to authenticate", "altered"])
        #expect(pump.transcript.map(\.from) == [.initiator, .responder, .initiator])
        #expect(pump.frames(.abort).count == 1)
    }

    @Test("a tampered message 3 is refused by the responder with handshakeFailed", arguments: [0, 47, 60, -1])
    func tamperedMessage3(offset: Int) throws {
        var pump = try machinePump(try randomConfiguration("i"), try randomConfiguration("r"))
        pump.tamper = { index, frame in
            if index == 2 { frame[offset >= 0 ? WireLimits.frameHeaderSize + offset : frame.count + offset] ^= 0x40 }
        }
        pump.run()
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .handshakeFailed)
        #expect(!reason.isRemote)
        #expect(reason.message.contains("handshake message 3 failed to authenticate"))
        // The initiator had finished when it wrote message 3, so its machine ignores the ABORT; the
        // shell reads it while waiting for the responder's first transport frame (key confirmation).
        #expect(pump.initiatorOutcome.link != nil)
        let abort = try #require(pump.lastAbort)
        #expect(pump.transcript.last?.from == .responder)
        let contents = try abort.abortContents()
        #expect(contents.code == .handshakeFailed)
        #expect(contents.reason == reason.message)
    }

    // MARK: (c) service type and prologue

    @Test("a different service type is refused at message 1 with serviceMismatch naming both types")
    func serviceMismatch() throws {
        var pump = try machinePump(
            try randomConfiguration("i", serviceType: "meshchat-lab"), try randomConfiguration("r", serviceType: "meshchat"))
        pump.run()
        expectRefusal(
            detector: pump.responderOutcome, peer: pump.initiatorOutcome, code: .serviceMismatch,
            mentions: ["\"meshchat-lab\"", "\"meshchat\""])
        #expect(pump.frames(.handshake).count == 1, "the responder must not answer with message 2")
    }

    @Test("a prologue for another service fails message 2 even when the hello claims the right service")
    func wrongPrologueFailsMessage2() throws {
        // A fake responder that skips the hello check and uses the prologue of "meshchat".
        var pump = try Self.run(initiatorAgainst: try Self.fakeResponder(serviceType: "meshchat"), serviceType: "meshchat-lab")
        expectRefusal(
            detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .handshakeFailed,
            mentions: ["handshake message 2 failed to authenticate", "service type"])
        try Self.expectResponderReports(pump.lastAbort, code: .handshakeFailed, message: pump.initiatorOutcome.reason?.message)

        // Control: the same fake with the matching prologue completes.
        pump = try Self.run(initiatorAgainst: try Self.fakeResponder(serviceType: "meshchat-lab"), serviceType: "meshchat-lab")
        #expect(pump.initiatorOutcome.link?.peer.displayName == "mallory")
    }

    @Test("a hello that lies about the service passes message 1, but the initiator cannot read message 2")
    func lyingHello() throws {
        // The fake's prologue is for "meshchat-lab", its hello claims "meshchat".
        let fake = try Self.fakeInitiator(
            prologue: HandshakeStateMachine.prologue(serviceType: "meshchat-lab"),
            hello: helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: "meshchat"))
        var pump = try Self.run(responderAgainst: fake)
        #expect(pump.frames(.handshake).count == 2, "the responder answered message 1")
        #expect(pump.initiatorOutcome.reason?.code == .handshakeFailed, "message 2 is bound to the responder's prologue")
        #expect(pump.responderOutcome.reason == nil)
        let timeout = try #require(pump.responder.timedOut().abort)
        #expect(timeout.reason.code == .handshakeTimeout)

        // Control: with the matching prologue the fake reads message 2 and the responder finishes.
        pump = try Self.run(responderAgainst: try Self.fakeInitiator(hello: helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: "meshchat")))
        #expect(pump.responderOutcome.link?.peer.displayName == "mallory")
    }

    // MARK: (d) version

    @Test("a hello with another protocol version is refused with unsupportedVersion naming both versions", arguments: [
        UInt32(0), 1, 2, 3, 4, 5, 6, 7, 255,
    ])
    func unsupportedVersion(version: UInt32) throws {
        let pump = try Self.run(responderAgainst: try Self.fakeInitiator(hello: helloPayload(version: version, serviceType: "meshchat")))
        expectRefusal(
            detector: pump.responderOutcome, peer: pump.initiatorOutcome, code: .unsupportedVersion,
            mentions: ["version \(version)", "speaks 8"])
        try Self.expectInitiatorReports(pump.lastAbort, code: .unsupportedVersion, message: pump.responderOutcome.reason?.message)
    }

    // MARK: (e), (f), (g) identity

    @Test("an identity signature over another static key is refused with invalidIdentity, in message 2 and in message 3")
    func signatureForAnotherStaticKey() throws {
        let signingKey = Curve25519.Signing.PrivateKey()
        // Signs some other static key, while Noise authenticates a fresh one.
        let forged = try LocalIdentity(signingKey: signingKey, staticKey: .init())

        let viaMessage2 = try Self.run(initiatorAgainst: try Self.fakeResponder(claimed: forged))
        expectRefusal(
            detector: viaMessage2.initiatorOutcome, peer: viaMessage2.responderOutcome, code: .invalidIdentity,
            mentions: ["signature does not match its Noise static key"])
        try Self.expectResponderReports(viaMessage2.lastAbort, code: .invalidIdentity, message: viaMessage2.initiatorOutcome.reason?.message)

        let viaMessage3 = try Self.run(responderAgainst: try Self.fakeInitiator(claimed: forged))
        expectRefusal(
            detector: viaMessage3.responderOutcome, peer: viaMessage3.initiatorOutcome, code: .invalidIdentity,
            mentions: ["signature does not match its Noise static key"])

        // Control: the same fakes with their own identity are accepted.
        #expect(try Self.run(initiatorAgainst: try Self.fakeResponder()).initiatorOutcome.link != nil)
        #expect(try Self.run(responderAgainst: try Self.fakeInitiator()).responderOutcome.link != nil)
    }

    @Test("a signature by another identity key, or a missing signature, is refused with invalidIdentity")
    func signatureByAnotherIdentity() throws {
        let other = Curve25519.Signing.PrivateKey()
        let noiseStatic = Curve25519.KeyAgreement.PrivateKey()
        // Validly signed for the authenticated static key, but by a key other than the claimed one.
        let signedByOther = try LocalIdentity(signingKey: other, staticKey: noiseStatic).staticSignature
        for alter in [{ (p: inout IdentityPayload) in p.staticSignature = signedByOther }, { $0.staticSignature = Data() }] {
            let pump = try Self.run(initiatorAgainst: try Self.fakeResponder(noiseStatic: noiseStatic, alter: alter))
            expectRefusal(
                detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .invalidIdentity,
                mentions: ["identity signature"])
        }
    }

    @Test("an identity key that is not 32 bytes is refused with invalidIdentity", arguments: [0, 31, 33, 64])
    func identityKeyLength(length: Int) throws {
        let key = Data(pattern(from: 0x11, count: length))
        let viaMessage2 = try Self.run(initiatorAgainst: try Self.fakeResponder(alter: { $0.identityKey = key }))
        expectRefusal(
            detector: viaMessage2.initiatorOutcome, peer: viaMessage2.responderOutcome, code: .invalidIdentity,
            mentions: ["identity key is \(length) bytes", "32"])
        try Self.expectResponderReports(viaMessage2.lastAbort, code: .invalidIdentity, message: viaMessage2.initiatorOutcome.reason?.message)

        let viaMessage3 = try Self.run(responderAgainst: try Self.fakeInitiator(alter: { $0.identityKey = key }))
        expectRefusal(
            detector: viaMessage3.responderOutcome, peer: viaMessage3.initiatorOutcome, code: .invalidIdentity,
            mentions: ["identity key is \(length) bytes"])
    }

    @Test("an identity naming another protocol version than the hello is refused with unsupportedVersion, in message 2 and in message 3",
          arguments: [UInt32(0), 1, 2, 4, 5, 7, .max])
    func identityVersion(version: UInt32) throws {
        let second = try Self.run(initiatorAgainst: try Self.fakeResponder(alter: { $0.protocolVersion = version }))
        expectRefusal(detector: second.initiatorOutcome, peer: second.responderOutcome, code: .unsupportedVersion,
                      mentions: ["protocol version \(version)", "speaks 8"])
        let third = try Self.run(responderAgainst: try Self.fakeInitiator(alter: { $0.protocolVersion = version }))
        expectRefusal(detector: third.responderOutcome, peer: third.initiatorOutcome, code: .unsupportedVersion,
                      mentions: ["protocol version \(version)", "speaks 8"])
    }

    @Test("an empty display name is refused with invalidIdentity by the initiator (message 2)")
    func emptyDisplayName() throws {
        var pump = try machinePump(try randomConfiguration("alice"), try randomConfiguration(""))
        pump.run()
        expectRefusal(
            detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .invalidIdentity,
            mentions: ["display name is empty", "1 to 63 bytes"])
    }

    @Test("a 64-byte display name is refused with invalidIdentity by the responder (message 3)")
    func longDisplayName() throws {
        let name = String(repeating: "é", count: 32)  // 64 bytes of UTF-8, 32 characters
        var pump = try machinePump(try randomConfiguration(name), try randomConfiguration("bob"))
        pump.run()
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .invalidIdentity)
        #expect(reason.message.contains("64 bytes"))
        #expect(reason.message.contains("63"))
        #expect(pump.lastAbort.flatMap { try? $0.abortContents() }?.reason == reason.message)
    }

    @Test("a 63-byte display name with multi-byte characters is accepted")
    func maximalDisplayName() throws {
        let name = String(repeating: "é", count: 31) + "a"  // 63 bytes
        var pump = try machinePump(try randomConfiguration(name), try randomConfiguration("日本語"))
        pump.run()
        #expect(pump.responderOutcome.link?.peer.displayName == name)
        #expect(pump.initiatorOutcome.link?.peer.displayName == "日本語")
    }

    @Test("the display name is checked before the identity key and the signature (§4.4 order)")
    func checkOrder() throws {
        let pump = try Self.run(initiatorAgainst: try Self.fakeResponder(displayName: "", alter: { $0.identityKey = Data([1]) }))
        #expect(pump.initiatorOutcome.reason?.message.contains("display name") == true)
    }

    // MARK: (h) malformed messages

    @Test("random bytes as message 1 are refused with protocolViolation", arguments: [0, 20, 31])
    func randomMessage1(count: Int) throws {
        var rng = SplitMix64(seed: UInt64(count))
        var responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
        let abort = try #require(responder.receivedFrame(Frame(type: .handshake, body: ByteBuffer(bytes: rng.bytes(count)))).abort)
        #expect(abort.reason.code == .protocolViolation)
        #expect(abort.reason.message.contains("handshake message 1 is malformed"))
        try Self.expectInitiatorReports(abort.frame, code: .protocolViolation, message: abort.reason.message)
    }

    @Test("an unparsable or oversized hello is refused with protocolViolation", arguments: [
        Data([0xff, 0xff, 0xff]),  // not protobuf
        helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: String(repeating: "x", count: 1100)),  // over 1,024 bytes
    ])
    func badHello(hello: Data) throws {
        let pump = try Self.run(responderAgainst: try Self.fakeInitiator(hello: hello))
        expectRefusal(
            detector: pump.responderOutcome, peer: pump.initiatorOutcome, code: .protocolViolation,
            mentions: ["handshake message 1", "hello"])
    }

    @Test("an unparsable identity payload or an impossible UDP port is refused with protocolViolation")
    func badIdentityPayload() throws {
        var fake = try Self.fakeResponder()
        fake.identity = Data([0xff, 0xff, 0xff])
        var pump = try Self.run(initiatorAgainst: fake)
        expectRefusal(
            detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .protocolViolation,
            mentions: ["handshake message 2", "handshake identity"])

        pump = try Self.run(initiatorAgainst: try Self.fakeResponder(alter: { $0.udpPort = 70_000 }))
        expectRefusal(
            detector: pump.initiatorOutcome, peer: pump.responderOutcome, code: .protocolViolation,
            mentions: ["UDP port 70000"])
    }

    // MARK: (i) wrong frame type

    enum WaitingState: String, CaseIterable, CustomTestStringConvertible {
        case initiatorAwaitingMessage2, responderAwaitingMessage1, responderAwaitingMessage3
        var testDescription: String { rawValue }
    }

    @Test("a TRANSPORT frame during the handshake is refused with protocolViolation", arguments: WaitingState.allCases)
    func transportDuringHandshake(state: WaitingState) throws {
        let transport = Frame(type: .transport, body: ByteBuffer(bytes: pattern(from: 0, count: 17)))
        var (initiator, responder) = try machinesAfterMessage1()
        var detecting: HandshakeStateMachine
        var other: HandshakeStateMachine
        switch state {
        case .initiatorAwaitingMessage2: (detecting, other) = (initiator, responder)
        case .responderAwaitingMessage3: (detecting, other) = (responder, initiator)
        case .responderAwaitingMessage1:
            detecting = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
            other = initiator
        }
        let abort = try #require(detecting.receivedFrame(transport).abort)
        #expect(abort.reason.code == .protocolViolation)
        #expect(abort.reason.message.contains("TRANSPORT frame received before the handshake completed"))
        expectReportedByPeer(abort.frame, to: &other, code: .protocolViolation, message: abort.reason.message)
        (initiator, responder) = (detecting, other)
        #expect(initiator.receivedFrame(transport).isNone, "a failed handshake ignores further frames")
    }

    @Test("a HANDSHAKE frame before the initiator started is refused with protocolViolation")
    func handshakeBeforeStart() throws {
        var initiator = try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i"))
        let abort = try #require(initiator.receivedFrame(Frame(type: .handshake, body: ByteBuffer(bytes: [1]))).abort)
        #expect(abort.reason.code == .protocolViolation)
        #expect(abort.frame?.type == .abort)
        #expect(initiator.start().isNone, "a failed initiator does not start")
    }

    // MARK: (j) self

    @Test("connecting to yourself is refused with selfConnection on both sides")
    func selfConnection() throws {
        let configuration = FixedParty.alice.configuration()
        var pump = try machinePump(configuration, configuration)
        pump.run()
        for outcome in [pump.initiatorOutcome, pump.responderOutcome] {
            let reason = try #require(outcome.reason)
            #expect(reason.code == .selfConnection)
            #expect(!reason.isRemote, "each side detects it itself")
            #expect(reason.message.contains("connected to itself"))
            #expect(reason.message.contains(configuration.identity.nodeID.shortHex))
        }
        // The initiator still writes message 3 so that the responder learns it too.
        #expect(pump.frames(.handshake).count == 3)
        #expect(pump.frames(.abort).isEmpty)
    }

    // MARK: (k) timeout

    @Test("timedOut() aborts an unfinished handshake with handshakeTimeout and an ABORT frame")
    func timeout() throws {
        var (initiator, responder) = try machinesAfterMessage1()
        let abort = try #require(initiator.timedOut().abort)
        #expect(abort.reason.code == .handshakeTimeout)
        #expect(abort.reason.message.contains("10 s"))
        expectReportedByPeer(abort.frame, to: &responder, code: .handshakeTimeout, message: abort.reason.message)
        #expect(initiator.timedOut().isNone, "a failed handshake does not time out again")

        var waiting = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
        #expect(waiting.timedOut().abort?.reason.code == .handshakeTimeout)
    }

    @Test("timedOut() after the handshake completed does nothing")
    func timeoutAfterCompletion() throws {
        var pump = try machinePump(try randomConfiguration("i"), try randomConfiguration("r"))
        pump.run()
        #expect(pump.initiatorOutcome.link != nil && pump.responderOutcome.link != nil)
        #expect(pump.initiator.timedOut().isNone)
        #expect(pump.responder.timedOut().isNone)
    }

    // MARK: (l) ABORT from the peer

    @Test("an ABORT from the peer mid-handshake ends it with the peer's code and reason")
    func abortFromPeer() throws {
        var (initiator, responder) = try machinesAfterMessage1()
        let abort = try #require(initiator.receivedFrame(Frame.abort(.normal, reason: "user cancelled")).abort)
        #expect(abort.reason.isRemote)
        #expect(abort.reason.code == .normal)
        #expect(abort.reason.message == "user cancelled")
        #expect(abort.frame == nil)
        #expect("\(abort.reason)".contains("peer said"))
        // Finished: anything later is ignored.
        #expect(initiator.receivedFrame(Frame(type: .handshake, body: ByteBuffer(bytes: [1]))).isNone)
        #expect(initiator.timedOut().isNone)

        // An empty reason gets a default text; an unknown code reads as protocolViolation.
        let empty = try #require(responder.receivedFrame(Frame.abort(.tooManyHandshakes, reason: "")).abort)
        #expect(empty.reason.code == .tooManyHandshakes)
        #expect(empty.reason.message == "peer aborted the handshake")
        var fresh = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
        let unknown = try #require(fresh.receivedFrame(Frame(type: .abort, body: ByteBuffer(bytes: [0xee, 0x68, 0x69]))).abort)
        #expect(unknown.reason.code == .protocolViolation)
        #expect(unknown.reason.isRemote)
        #expect(unknown.reason.message == "hi")
    }
}
