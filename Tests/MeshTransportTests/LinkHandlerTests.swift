import struct Foundation.Data
import Glibc
import MeshLink
import MeshTransport
import MeshWire
import NIOCore
import NIOEmbedded
import Testing

@Suite("LinkHandler")
struct LinkHandlerTests {
    // MARK: 1. Handshake

    @Test("handshake: responder establishes first, initiator only after key confirmation")
    func handshakeThroughHandlers() throws {
        let loop = EmbeddedEventLoop()
        let initiator = try LinkSide(.initiator, name: "a", loop: loop)
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        try responder.connect()
        #expect(try responder.takeOutbound().isEmpty)
        try initiator.connect()

        let message1 = try initiator.takeOutbound()
        #expect(try frameTypes(message1) == [.handshake])
        try responder.deliver(message1)
        let message2 = try responder.takeOutbound()
        #expect(try frameTypes(message2) == [.handshake])
        #expect(try responder.collect().isEmpty)

        try initiator.deliver(message2)
        let message3 = try initiator.takeOutbound()
        #expect(try frameTypes(message3) == [.handshake])
        let afterMessage2 = try initiator.collect()
        #expect(afterMessage2.count == 1)
        guard case .connecting(let peer)? = afterMessage2.first else {
            Issue.record("expected .connecting, got \(afterMessage2)")
            return
        }
        #expect(peer.nodeID == responder.identity.nodeID)
        #expect(peer.displayName == "b")

        try responder.deliver(message3)
        let confirmation = try responder.takeOutbound()
        #expect(try frameTypes(confirmation) == [.transport])
        let responderEvents = try responder.collect()
        #expect(responderEvents.count == 1)
        guard case .established(let responderInfo)? = responderEvents.first else {
            Issue.record("expected .established, got \(responderEvents)")
            return
        }
        #expect(responderInfo.peer.nodeID == initiator.identity.nodeID)
        #expect(responderInfo.peer.displayName == "a")
        #expect(responderInfo.role == .responder)
        // The initiator is still waiting for the key confirmation.
        #expect(try initiator.collect().isEmpty)

        try initiator.deliver(confirmation)
        let initiatorEvents = try initiator.collect()
        #expect(initiatorEvents.count == 1)
        guard case .established(let initiatorInfo)? = initiatorEvents.first else {
            Issue.record("expected .established, got \(initiatorEvents)")
            return
        }
        #expect(initiatorInfo.peer.nodeID == responder.identity.nodeID)
        #expect(initiatorInfo.role == .initiator)
        // The confirmation was a ping(0): the initiator answers with a pong.
        #expect(try frameTypes(try initiator.takeOutbound()) == [.transport])
        #expect(responder.closeReasons.isEmpty && initiator.closeReasons.isEmpty)
    }

    // MARK: 2. Envelopes

    @Test("envelopes arrive in order in both directions, including a 200 KiB one")
    func envelopesInOrder() throws {
        let (a, b, _) = try establishedPair()
        let sent: [Envelope] = [
            .data(testBytes(10, seed: 1)),
            .chat(id: testBytes(16, seed: 2), text: "hello", sentAtMilliseconds: 1_700_000_000_000),
            .data(testBytes(200 * 1024, seed: 3)),
            .data(Data()),
            .data(testBytes(70_000, seed: 4)),
        ]
        for envelope in sent { try a.channel.writeOutbound(envelope) }
        let bytes = try a.takeOutbound()
        #expect(try frameTypes(bytes).count == 9)  // 1 + 1 + 4 (200 KiB) + 1 + 2 (70 000 B)
        try b.deliver(bytes)
        try b.collect()
        #expect(b.envelopes == sent)

        for envelope in sent.reversed() { try b.channel.writeOutbound(envelope) }
        try pump(a, b)
        #expect(a.envelopes == sent.reversed())
        #expect(a.closeReasons.isEmpty && b.closeReasons.isEmpty)
    }

    @Test("writes before a flush leave as one buffer; a Flush's promise completes once they are written, and a large message is not copied into the small ones' buffer")
    func burstLeavesAsOneBuffer() throws {
        let (a, b, loop) = try establishedPair()
        let small: [Envelope] = (0..<50).map { .data(testBytes(64, seed: UInt8($0))) }
        for envelope in small { a.channel.write(envelope, promise: nil) }
        #expect(try a.takeOutbound().isEmpty)  // nothing before the flush
        let flushed = loop.makePromise(of: Void.self)
        a.channel.triggerUserOutboundEvent(LinkHandler.Flush(), promise: flushed)
        let bytes = try a.takeOutbound()
        #expect(bytes.count == 1)
        #expect(try frameTypes(bytes).count == 50)
        #expect(throws: Never.self) { try flushed.futureResult.wait() }

        // A large message after small ones: the small ones go first as their own buffer.
        a.channel.write(small[0], promise: nil)
        a.channel.write(Envelope.data(testBytes(100_000, seed: 9)), promise: nil)
        a.channel.flush()
        let mixed = try a.takeOutbound()
        #expect(mixed.count == 2)
        #expect(try frameTypes(mixed).count == 1 + 2)

        try b.deliver(bytes + mixed)
        try b.collect()
        #expect(b.envelopes == small + [small[0], .data(testBytes(100_000, seed: 9))])
        #expect(a.closeReasons.isEmpty && b.closeReasons.isEmpty)
    }

    @Test("a write before the handshake completes fails")
    func writeBeforeEstablished() throws {
        let side = try LinkSide(.initiator, name: "a", loop: EmbeddedEventLoop())
        try side.connect()
        #expect(throws: (any Error).self) { try side.channel.writeOutbound(Envelope.data(Data([1]))) }
    }

    // MARK: 3. Handshake timeout

    @Test("a responder that hears nothing aborts with handshakeTimeout at 10 s, not before")
    func handshakeTimeoutSilent() throws {
        let loop = EmbeddedEventLoop()
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        try responder.connect()
        try expectHandshakeTimeout(responder, loop: loop)
    }

    @Test("a responder that received only message 1 aborts with handshakeTimeout at 10 s")
    func handshakeTimeoutAfterMessage1() throws {
        let loop = EmbeddedEventLoop()
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        let initiator = try LinkSide(.initiator, name: "a", loop: EmbeddedEventLoop())
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        #expect(try frameTypes(try responder.takeOutbound()) == [.handshake])  // message 2, lost
        try expectHandshakeTimeout(responder, loop: loop)
    }

    private func expectHandshakeTimeout(_ side: LinkSide, loop: EmbeddedEventLoop) throws {
        loop.advanceTime(by: .milliseconds(9_900))
        #expect(try side.collect().isEmpty)
        #expect(try side.takeOutbound().isEmpty)
        #expect(side.channel.isActive)

        loop.advanceTime(by: .milliseconds(100))
        let out = try side.takeOutbound()
        #expect(out.count == 1)
        #expect(out.first?.getInteger(at: out.first!.readerIndex + 4, as: UInt8.self) == 0x03)
        var abort = out.first ?? ByteBuffer()
        let frame = try FrameParser().parse(&abort)
        #expect(try frame?.abortContents().code == .handshakeTimeout)
        try side.collect()
        #expect(side.closeReasons == [LinkCloseReason(.handshakeTimeout, "", isRemote: false)])
        #expect(!side.channel.isActive)
    }

    @Test("an initiator whose key confirmation never arrives closes with handshakeTimeout")
    func confirmationTimeout() throws {
        let loop = EmbeddedEventLoop()
        let initiator = try LinkSide(.initiator, name: "a", loop: loop)
        let responder = try LinkSide(.responder, name: "b", loop: EmbeddedEventLoop())
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        try initiator.deliver(try responder.takeOutbound())
        _ = try initiator.takeOutbound()  // message 3 is lost: the responder never confirms
        try initiator.collect()
        loop.advanceTime(by: .seconds(30))
        try initiator.collect()
        #expect(initiator.establishedInfo == nil)
        #expect(initiator.closeReasons == [LinkCloseReason(.handshakeTimeout, "", isRemote: false)])
        #expect(!initiator.channel.isActive)
    }

    // MARK: 4. Keepalive

    @Test("an idle established link pings after 1 s")
    func pingAfterIdle() throws {
        let (a, b, loop) = try establishedPair()
        loop.advanceTime(by: .milliseconds(750))
        #expect(try a.takeOutbound().isEmpty)
        #expect(try b.takeOutbound().isEmpty)
        loop.advanceTime(by: .milliseconds(500))  // 1 s + one check interval
        #expect(try frameTypes(try a.takeOutbound()) == [.transport])
        #expect(try frameTypes(try b.takeOutbound()) == [.transport])
    }

    @Test("3 s of silence closes the link with keepaliveTimeout")
    func silenceIsDeath() throws {
        let (a, b, loop) = try establishedPair()
        loop.advanceTime(by: .milliseconds(2_750))
        try a.collect()
        try b.collect()
        #expect(a.closeReasons.isEmpty && b.closeReasons.isEmpty)
        loop.advanceTime(by: .milliseconds(500))
        try a.collect()
        try b.collect()
        #expect(a.closeReasons == [LinkCloseReason(.keepaliveTimeout, "", isRemote: false)])
        #expect(b.closeReasons == [LinkCloseReason(.keepaliveTimeout, "", isRemote: false)])
        #expect(!a.channel.isActive && !b.channel.isActive)
    }

    @Test("pings and pongs pumped every 0.25 s keep the link alive for 10 s")
    func pingsKeepAlive() throws {
        let (a, b, loop) = try establishedPair()
        var moved = 0
        for _ in 0..<40 {
            loop.advanceTime(by: .milliseconds(250))
            moved += try pump(a, b)
        }
        #expect(a.closeReasons.isEmpty && b.closeReasons.isEmpty)
        #expect(a.channel.isActive && b.channel.isActive)
        #expect(a.envelopes.isEmpty && b.envelopes.isEmpty)  // keepalives stay inside the handler
        #expect(moved >= 10)  // ~ one ping and one pong per second and side
    }

    @Test("silence does not count while reading is withheld (back-pressure)")
    func pausedReadingIsNotSilence() throws {
        let (a, b, loop) = try establishedPair()
        // b's application stops consuming: a read completed and no new read() is issued.
        b.channel.pipeline.fireChannelReadComplete()
        b.autoRead = false
        loop.advanceTime(by: .seconds(6))
        try b.collect()
        #expect(b.closeReasons.isEmpty)
        #expect(b.channel.isActive)
        // Reading resumes; silence counts again from now.
        b.channel.read()
        loop.advanceTime(by: .milliseconds(2_500))
        try b.collect()
        #expect(b.closeReasons.isEmpty)
        loop.advanceTime(by: .milliseconds(750))
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.keepaliveTimeout, "", isRemote: false)])
        _ = a
    }

    // MARK: 5. Hostile frames

    @Test("a TRANSPORT frame with a flipped byte closes with protocolViolation")
    func flippedByte() throws {
        let (a, b, _) = try establishedPair()
        try a.channel.writeOutbound(Envelope.data(testBytes(100, seed: 9)))
        var bytes = try a.takeOutbound()
        #expect(bytes.count == 1)
        let last = bytes[0].writerIndex - 1
        bytes[0].setInteger(bytes[0].getInteger(at: last, as: UInt8.self)! ^ 0x01, at: last)
        try b.deliver(bytes)
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.protocolViolation, "", isRemote: false)])
        #expect(b.envelopes.isEmpty)
        #expect(!b.channel.isActive)
        #expect(try frameTypes(try b.takeOutbound()) == [.transport])  // the goodbye
    }

    @Test("an ABORT frame after establishment is a protocolViolation")
    func abortAfterEstablished() throws {
        let (_, b, _) = try establishedPair()
        var buffer = ByteBuffer()
        Frame.abort(.normal, reason: "bye").encode(into: &buffer)
        try b.deliver([buffer])
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.protocolViolation, "", isRemote: false)])
        #expect(!b.channel.isActive)
    }

    @Test("an ABORT while the initiator awaits key confirmation ends the attempt with the peer's reason")
    func abortDuringConfirmation() throws {
        let loop = EmbeddedEventLoop()
        let initiator = try LinkSide(.initiator, name: "a", loop: loop)
        let responder = try LinkSide(.responder, name: "b", loop: loop)
        try responder.connect()
        try initiator.connect()
        try responder.deliver(try initiator.takeOutbound())
        try initiator.deliver(try responder.takeOutbound())
        _ = try initiator.takeOutbound()  // message 3, "refused" below
        var buffer = ByteBuffer()
        Frame.abort(.invalidIdentity, reason: "no thanks").encode(into: &buffer)
        try initiator.deliver([buffer])
        try initiator.collect()
        #expect(initiator.establishedInfo == nil)
        #expect(initiator.closeReasons == [LinkCloseReason(.invalidIdentity, "", isRemote: true)])
        #expect(initiator.closeReasons.first?.message == "no thanks")
        #expect(!initiator.channel.isActive)
    }

    @Test("an oversized length prefix closes with frameTooLarge")
    func oversizedFrame() throws {
        let (_, b, _) = try establishedPair()
        try b.deliver([ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF])])
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.frameTooLarge, "", isRemote: false)])
        #expect(!b.channel.isActive)
    }

    // MARK: 6. Retire

    @Test("a retired link sends a goodbye, refuses writes, keeps delivering, closes on the peer's goodbye")
    func retire() throws {
        let (a, b, _) = try establishedPair()
        try a.channel.triggerUserOutboundEvent(
            LinkHandler.Retire(code: .duplicateConnection, reason: "x")).wait()
        let goodbye = try a.takeOutbound()
        #expect(try frameTypes(goodbye) == [.transport])
        #expect(throws: (any Error).self) { try a.channel.writeOutbound(Envelope.data(Data([1]))) }
        #expect(try a.takeOutbound().isEmpty)

        // The peer wrote before it learned of the retirement; then it decides too (§4.7).
        let late: [Envelope] = [.data(testBytes(5, seed: 1)), .data(testBytes(100_000, seed: 2))]
        for envelope in late { try b.channel.writeOutbound(envelope) }
        try b.channel.triggerUserOutboundEvent(
            LinkHandler.Retire(code: .duplicateConnection, reason: "y")).wait()
        let fromB = try b.takeOutbound()

        // Deliver the envelopes but not yet the goodbye (the last buffer).
        try a.deliver(Array(fromB.dropLast()))
        try a.collect()
        #expect(a.envelopes == late)
        #expect(a.closeReasons.isEmpty)
        #expect(a.channel.isActive)

        try a.deliver([fromB.last!])
        try a.collect()
        #expect(a.closeReasons == [LinkCloseReason(.duplicateConnection, "", isRemote: false)])
        #expect(!a.channel.isActive)

        try b.deliver(goodbye)
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.duplicateConnection, "", isRemote: false)])
        #expect(!b.channel.isActive)
    }

    @Test("a retired link whose peer never answers closes by itself within the retire deadline")
    func retireTimesOut() throws {
        let (a, _, loop) = try establishedPair(sharedLoop: false)
        try a.channel.triggerUserOutboundEvent(
            LinkHandler.Retire(code: .duplicateConnection, reason: "x")).wait()
        _ = try a.takeOutbound()  // the goodbye is lost; the peer never answers anything again
        var closedAfter: Int?
        for step in 1...40 {
            loop.advanceTime(by: .milliseconds(250))
            _ = try a.takeOutbound()
            try a.collect()
            if closedAfter == nil, !a.closeReasons.isEmpty { closedAfter = step }
        }
        let steps = try #require(closedAfter, "the retired link never closed")
        #expect(steps * 250 <= 10_000)
        #expect(a.closeReasons.count == 1)
        #expect(!a.channel.isActive)
    }

    // MARK: 7. Peer goodbye

    @Test("a peer's goodbye closes the link with the peer's code and reason")
    func peerGoodbye() throws {
        let (a, b, _) = try establishedPair()
        try a.channel.triggerUserOutboundEvent(
            LinkHandler.Retire(code: .duplicateConnection, reason: "the other link wins")).wait()
        try b.deliver(try a.takeOutbound())
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.duplicateConnection, "", isRemote: true)])
        #expect(b.closeReasons.first?.message == "the other link wins")
        #expect(!b.channel.isActive)
    }

    @Test("a connection that ends without a goodbye (a peer killed with SIGKILL: end of stream) is connectionLost, this side's finding, never the peer's normal goodbye")
    func endOfStreamIsLost() throws {
        let (_, b, _) = try establishedPair()
        b.channel.pipeline.fireChannelInactive()
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.connectionLost, "", isRemote: false)])
        #expect(!"\(try #require(b.closeReasons.first))".contains("peer said"))
    }

    @Test("a connection reset is connectionLost with the socket's error, not the peer's normal goodbye")
    func resetIsLost() throws {
        let (_, b, _) = try establishedPair()
        b.channel.pipeline.fireErrorCaught(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"))
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.connectionLost, "", isRemote: false)])
        #expect(b.closeReasons.first?.message.contains("connection error") == true)
    }

    @Test("closing the channel sends a normal goodbye that the peer reports as remote")
    func closeSendsGoodbye() throws {
        let (a, b, _) = try establishedPair()
        try a.channel.close().wait()
        let out = try a.takeOutbound()
        #expect(try frameTypes(out) == [.transport])
        try b.deliver(out)
        try b.collect()
        #expect(b.closeReasons == [LinkCloseReason(.normal, "", isRemote: true)])
        #expect(b.closeReasons.first?.message == "the peer disconnected")
    }

    // MARK: 8. finish()

    @Test("finish after a completed handshake and a clean close leaves nothing behind")
    func finishIsClean() throws {
        let (a, b, _) = try establishedPair()
        try a.channel.writeOutbound(Envelope.data(testBytes(1_000, seed: 7)))
        try pump(a, b)
        #expect(b.envelopes.count == 1)

        try a.channel.close().wait()
        try b.deliver(try a.takeOutbound())
        try b.collect()
        #expect(b.closeReasons.map(\.code) == [.normal])
        #expect(try b.takeOutbound().isEmpty)  // no goodbye back to a closing peer
        #expect(try a.channel.finish(acceptAlreadyClosed: true).isClean)
        #expect(try b.channel.finish(acceptAlreadyClosed: true).isClean)
        #expect(a.closeReasons.isEmpty)  // the application closed it: no reason to report
    }

    @Test("finish on an open established link leaves exactly its goodbye frame")
    func finishOpenLink() throws {
        let (a, _, _) = try establishedPair(sharedLoop: false)
        guard case .leftOvers(let inbound, let outbound, let pending) = try a.channel.finish() else {
            Issue.record("expected the goodbye as a leftover")
            return
        }
        #expect(inbound.isEmpty && pending.isEmpty)
        #expect(outbound.count == 1)  // the goodbye written by close (NIOAny's accessors are internal)
    }
}
