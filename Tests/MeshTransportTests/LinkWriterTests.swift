import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

/// ``LinkWriter``'s room for senders that never wait (PROTOCOL.md §10): ``LinkWriter/hasRoom`` and
/// ``LinkWriter/whenRoom(_:)``.
@Suite("LinkWriter room")
struct LinkWriterTests {
    /// Holds every write's promise until the test completes it, as a socket that has not taken
    /// the bytes yet.
    final class HeldWrites: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = Envelope
        var promises: [EventLoopPromise<Void>?] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            promises.append(promise)
        }

        func complete(_ index: Int) { promises[index]?.succeed() }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            // What the socket never took fails, as a closing channel's pending writes do.
            for pending in promises { pending?.fail(ChannelError.ioOnClosedChannel) }
            promises = []
            context.close(mode: mode, promise: promise)
        }
    }

    @Test("a refused sender is called back once writes bring the buffer down to the low-water mark, or at once")
    func room() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handler: held)
        let writer = LinkWriter(channel: channel, highWaterMark: 100, lowWaterMark: 40)
        let calls = NIOLockedValueBox(0)
        #expect(writer.hasRoom)
        #expect(writer.offer(.ping(nonce: 1), size: 60))
        #expect(writer.offer(.ping(nonce: 2), size: 60), "60 in flight is within the high-water mark")
        #expect(!writer.hasRoom)
        #expect(!writer.offer(.ping(nonce: 3), size: 60))
        writer.whenRoom { calls.withLockedValue { $0 += 1 } }
        held.complete(0)
        #expect(calls.withLockedValue { $0 } == 0, "60 in flight is above the low-water mark")
        held.complete(1)
        #expect(calls.withLockedValue { $0 } == 1)
        #expect(writer.offer(.ping(nonce: 4), size: 10))
        held.complete(2)
        #expect(calls.withLockedValue { $0 } == 1, "called once")
        #expect(writer.hasRoom)
        writer.whenRoom { calls.withLockedValue { $0 += 10 } }
        #expect(calls.withLockedValue { $0 } == 11, "with room already, at once")
        _ = try channel.finish()
    }

    /// Records the envelopes written and when a flush came, holding every promise.
    final class RecordedWrites: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = Envelope
        var written: [Envelope] = []
        var promises: [EventLoopPromise<Void>?] = []
        var flushes: [Int] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            written.append(unwrapOutboundIn(data))
            promises.append(promise)
        }

        func flush(context: ChannelHandlerContext) { flushes.append(written.count) }
    }

    @Test("offers kept for flushOffers(): counted in flight at once, written in order with one flush, counted out by the last write's completion")
    func keptOffers() throws {
        let recorded = RecordedWrites()
        let channel = EmbeddedChannel(handler: recorded)
        let writer = LinkWriter(channel: channel, highWaterMark: 100, lowWaterMark: 40)
        #expect(writer.offer(.ping(nonce: 1), size: 60, flush: false))
        #expect(writer.offer(.ping(nonce: 2), size: 30, flush: false))
        #expect(recorded.written.isEmpty, "nothing is written before the flush")
        #expect(writer.bytesInFlight == 90)
        #expect(writer.offer(.ping(nonce: 3), size: 20, flush: false), "90 in flight is within the high-water mark")
        #expect(!writer.offer(.ping(nonce: 4), size: 1, flush: false), "110 in flight is above it")
        writer.flushOffers()
        channel.embeddedEventLoop.run()
        #expect(recorded.written == [.ping(nonce: 1), .ping(nonce: 2), .ping(nonce: 3)])
        #expect(recorded.flushes == [3], "one flush, after the three")
        #expect(recorded.promises.count == 3 && recorded.promises[0] == nil && recorded.promises[1] == nil)
        writer.flushOffers()
        channel.embeddedEventLoop.run()
        #expect(recorded.written.count == 3, "a second flush writes nothing")
        recorded.promises[2]?.succeed()
        #expect(writer.bytesInFlight == 0)
        _ = try channel.finish()
    }

    @Test("a waiting callback is called when the link closes")
    func closed() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handler: held)
        let writer = LinkWriter(channel: channel, highWaterMark: 10, lowWaterMark: 5)
        let called = NIOLockedValueBox(false)
        #expect(writer.offer(.ping(nonce: 1), size: 50))
        writer.whenRoom { called.withLockedValue { $0 = true } }
        #expect(!called.withLockedValue { $0 })
        _ = try channel.finish()
        #expect(called.withLockedValue { $0 })
        #expect(!writer.hasRoom)
        #expect(!writer.offer(.ping(nonce: 2), size: 1))
    }

    @Test("each input's relayed bytes count against its own share of the link: a full input waits for its own bytes, another input goes at once, nothing is refused for congestion (§13.11)")
    func relayShare() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handler: held)
        let writer = LinkWriter(channel: channel, highWaterMark: 100, lowWaterMark: 40)
        let bulk = try NodeID(bytes: [UInt8](repeating: 1, count: 16)), honest = try NodeID(bytes: [UInt8](repeating: 2, count: 16))
        let share = LinkWriter.relayShare
        let resumed = NIOLockedValueBox(0)
        #expect(writer.relayAdmission(for: bulk) { resumed.withLockedValue { $0 += 100 } } == .now)
        #expect(writer.relay(.ping(nonce: 1), size: share / 2, from: bulk))
        #expect(writer.relay(.ping(nonce: 2), size: share / 2, from: bulk))
        #expect(!writer.hasRoom, "far above the link's high-water mark")
        #expect(writer.relayAdmission(for: bulk) { resumed.withLockedValue { $0 += 1 } } == .wait, "the bulk input is at its share")
        #expect(writer.relayAdmission(for: honest) { resumed.withLockedValue { $0 += 100 } } == .now, "another input still goes")
        #expect(writer.relay(.ping(nonce: 3), size: 64, from: honest))
        #expect(writer.relayedInFlight(from: honest) == 64 && writer.relayedInFlight(from: bulk) == share)
        held.complete(2)
        #expect(resumed.withLockedValue { $0 } == 0, "the honest input's write does not resume the bulk one")
        held.complete(0)
        #expect(resumed.withLockedValue { $0 } == 1, "half its share drained: the bulk input goes on, once")
        #expect(writer.relayAdmission(for: bulk) { resumed.withLockedValue { $0 += 100 } } == .now)
        #expect(writer.bytesInFlight == share / 2)
        held.complete(1)
        #expect(writer.bytesInFlight == 0 && writer.relayedInFlight(from: bulk) == 0)
        #expect(resumed.withLockedValue { $0 } == 1)
        _ = try channel.finish()
    }

    @Test("an input held past the hold limit drops its relayed packets for the link, without a callback, until its bytes there drained to half its share; another input is untouched (§13.11)")
    func relayHoldExpiry() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handler: held)
        let writer = LinkWriter(channel: channel, highWaterMark: 100, lowWaterMark: 40)
        let slow = try NodeID(bytes: [UInt8](repeating: 1, count: 16)), other = try NodeID(bytes: [UInt8](repeating: 2, count: 16))
        let share = LinkWriter.relayShare
        let resumed = NIOLockedValueBox(0)
        #expect(!writer.relayHoldExpired(for: slow), "nothing in flight: there is room, nothing changes")
        #expect(writer.relay(.ping(nonce: 1), size: share / 2, from: slow))
        #expect(writer.relay(.ping(nonce: 2), size: share / 2, from: slow))
        #expect(writer.relayAdmission(for: slow) { resumed.withLockedValue { $0 += 1 } } == .wait)
        #expect(writer.relayHoldExpired(for: slow))
        #expect(writer.relayAdmission(for: slow) { resumed.withLockedValue { $0 += 100 } } == .drop)
        #expect(writer.relayAdmission(for: slow) { resumed.withLockedValue { $0 += 100 } } == .drop)
        #expect(writer.relayDropped == 2)
        #expect(writer.relayAdmission(for: other) { resumed.withLockedValue { $0 += 100 } } == .now, "another input still goes")
        held.complete(0)
        #expect(resumed.withLockedValue { $0 } == 0, "the expired hold's callback was dropped: the timer resumed that link")
        #expect(writer.relayAdmission(for: slow) { resumed.withLockedValue { $0 += 100 } } == .now, "half drained: it relays again")
        #expect(writer.relay(.ping(nonce: 3), size: share / 2 + 1, from: slow))
        #expect(writer.relayAdmission(for: slow) { resumed.withLockedValue { $0 += 1 } } == .wait, "and is held again, not dropped")
        _ = try channel.finish()
        #expect(resumed.withLockedValue { $0 } == 1, "closing calls the waiting callback")
    }

    @Test("callbacks of one input that waits do not pile up (links of a neighbour that reconnects fast): past the cap the oldest is called early")
    func relayCallbacksBounded() throws {
        let held = HeldWrites()
        let channel = EmbeddedChannel(handler: held)
        let writer = LinkWriter(channel: channel, highWaterMark: 100, lowWaterMark: 40)
        let source = try NodeID(bytes: [UInt8](repeating: 1, count: 16))
        #expect(writer.relay(.ping(nonce: 1), size: LinkWriter.relayShare, from: source))
        let called = NIOLockedValueBox<[Int]>([])
        for index in 0..<(LinkWriter.maxRelayCallbacks + 2) {
            #expect(writer.relayAdmission(for: source) { called.withLockedValue { $0.append(index) } } == .wait)
        }
        #expect(called.withLockedValue { $0 } == [0, 1], "the two oldest were called early")
        held.complete(0)
        #expect(called.withLockedValue { $0 }.sorted() == Array(0..<(LinkWriter.maxRelayCallbacks + 2)), "the rest when it drained")
        _ = try channel.finish()
    }
}
