import MeshLink
import MeshTransport
import MeshWire
import NIOCore
import NIOEmbedded
import Testing

/// Decisions held until the test makes them: the requests seen and their promises.
final class HeldAdmissions {
    private(set) var requests: [AdmissionRequest] = []
    private(set) var promises: [EventLoopPromise<AdmissionDecision>] = []

    var decider: LinkAdmission {
        // EmbeddedEventLoop tests run on one thread.
        nonisolated(unsafe) let held = self
        return { request, loop in
            let promise = loop.makePromise(of: AdmissionDecision.self)
            held.requests.append(request)
            held.promises.append(promise)
            return promise.futureResult
        }
    }
}

/// Admission in the handshake (PROTOCOL.md §4.9) and the expected identity (§4.10), through
/// `LinkHandler`s on embedded channels.
@Suite("LinkHandler admission")
struct LinkAdmissionTests {
    /// Runs the handshake up to the responder's admission: message 1, 2 and 3 delivered.
    static func untilResponderDecides(_ held: HeldAdmissions, loop: EmbeddedEventLoop) throws -> (LinkSide, LinkSide) {
        let initiator = try LinkSide(.initiator, name: "a", loop: loop)
        let responder = try LinkSide(.responder, name: "b", loop: loop, admission: held.decider)
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        try initiator.deliver(try responder.takeOutbound())
        try responder.deliver(try initiator.takeOutbound())
        return (initiator, responder)
    }

    static func abortCode(_ buffers: [ByteBuffer]) throws -> CloseCode? {
        guard buffers.count == 1, var buffer = buffers.first, let frame = try FrameParser().parse(&buffer),
              frame.type == .abort else { return nil }
        return try frame.abortContents().code
    }

    @Test("the responder asks once, as responder, about the initiator; nothing goes out until it admits, then the key confirmation")
    func responderAdmits() throws {
        let loop = EmbeddedEventLoop()
        let held = HeldAdmissions()
        let (initiator, responder) = try Self.untilResponderDecides(held, loop: loop)
        #expect(held.requests.count == 1)
        #expect(held.requests.first?.peer.nodeID == initiator.identity.nodeID && held.requests.first?.role == .responder)
        #expect(try responder.takeOutbound().isEmpty && responder.collect().isEmpty)
        held.promises[0].succeed(.admit)
        try pump(initiator, responder)
        try initiator.collect()
        try responder.collect()
        #expect(responder.establishedInfo != nil && initiator.establishedInfo != nil)
    }

    @Test("a responder that refuses sends ABORT notAdmitted: neither side is ever established, the initiator reports the reason as the peer's")
    func responderRefuses() throws {
        let loop = EmbeddedEventLoop()
        let held = HeldAdmissions()
        let (initiator, responder) = try Self.untilResponderDecides(held, loop: loop)
        held.promises[0].succeed(.refuse(.notAdmitted, reason: "not you"))
        let out = try responder.takeOutbound()
        #expect(try Self.abortCode(out) == .notAdmitted)
        try initiator.deliver(out)
        try initiator.collect()
        try responder.collect()
        #expect(initiator.establishedInfo == nil && responder.establishedInfo == nil)
        #expect(initiator.closeReasons == [LinkCloseReason(.notAdmitted, "", isRemote: true)])
        #expect(initiator.closeReasons.first?.message == "not you")
        #expect(responder.closeReasons == [LinkCloseReason(.notAdmitted, "", isRemote: false)])
        #expect(!initiator.channel.isActive && !responder.channel.isActive)
    }

    @Test("an initiator that refuses sends ABORT instead of message 3; the responder never establishes")
    func initiatorRefuses() throws {
        let loop = EmbeddedEventLoop()
        let held = HeldAdmissions()
        let initiator = try LinkSide(.initiator, name: "a", loop: loop, admission: held.decider)
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        try initiator.deliver(try responder.takeOutbound())
        #expect(held.requests.first?.role == .initiator && held.requests.first?.peer.nodeID == responder.identity.nodeID)
        #expect(try initiator.takeOutbound().isEmpty && initiator.collect().isEmpty)
        held.promises[0].succeed(.refuse(.notAdmitted, reason: "no"))
        let out = try initiator.takeOutbound()
        #expect(try Self.abortCode(out) == .notAdmitted)
        try responder.deliver(out)
        try responder.collect()
        try initiator.collect()
        #expect(responder.establishedInfo == nil && responder.closeReasons == [LinkCloseReason(.notAdmitted, "", isRemote: true)])
        // No .connecting either: the initiator refused before message 3.
        #expect(initiator.events.allSatisfy { if case .closed = $0 { true } else { false } })
    }

    @Test("an initiator expecting another node id refuses with invalidIdentity, identity differs, before message 3")
    func expectedIdentity() throws {
        let loop = EmbeddedEventLoop()
        let initiator = try LinkSide(.initiator, name: "a", loop: loop, expectedPeer: NodeID.random())
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        try initiator.deliver(try responder.takeOutbound())
        let out = try initiator.takeOutbound()
        #expect(try Self.abortCode(out) == .invalidIdentity)
        try responder.deliver(out)
        try responder.collect()
        try initiator.collect()
        #expect(responder.establishedInfo == nil && responder.closeReasons == [LinkCloseReason(.invalidIdentity, "", isRemote: true)])
        #expect(initiator.closeReasons == [LinkCloseReason(.invalidIdentity, "", isRemote: false)])
        #expect(initiator.closeReasons.first?.message.contains("identity differs") == true)
        #expect(!initiator.events.contains { if case .connecting = $0 { true } else { false } })
    }

    @Test("an initiator expecting the responder's node id connects")
    func expectedIdentityMatches() throws {
        let loop = EmbeddedEventLoop()
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        let initiator = try LinkSide(.initiator, name: "a", loop: loop, expectedPeer: responder.identity.nodeID)
        try responder.connect()
        try initiator.connect()
        try pump(initiator, responder)
        try initiator.collect()
        #expect(initiator.establishedInfo?.peer.nodeID == responder.identity.nodeID)
    }

    @Test("a frame other than ABORT while deciding is a protocolViolation")
    func frameWhileDeciding() throws {
        let loop = EmbeddedEventLoop()
        let held = HeldAdmissions()
        let (_, responder) = try Self.untilResponderDecides(held, loop: loop)
        var junk = ByteBuffer()
        Frame(type: .handshake, body: ByteBuffer(bytes: [1, 2, 3])).encode(into: &junk)
        try responder.deliver([junk])
        #expect(try Self.abortCode(try responder.takeOutbound()) == .protocolViolation)
        try responder.collect()
        #expect(responder.closeReasons == [LinkCloseReason(.protocolViolation, "", isRemote: false)])
        held.promises[0].succeed(.admit)  // too late: nothing happens
        #expect(try responder.takeOutbound().isEmpty && responder.establishedInfo == nil)
    }

    @Test("a decision that never comes ends in handshakeTimeout at the handshake deadline, with an ABORT")
    func neverDecided() throws {
        let loop = EmbeddedEventLoop()
        let held = HeldAdmissions()
        let (_, responder) = try Self.untilResponderDecides(held, loop: loop)
        loop.advanceTime(by: .seconds(10))
        #expect(try Self.abortCode(try responder.takeOutbound()) == .handshakeTimeout)
        try responder.collect()
        #expect(responder.closeReasons == [LinkCloseReason(.handshakeTimeout, "", isRemote: false)])
        held.promises[0].succeed(.admit)
    }
}
