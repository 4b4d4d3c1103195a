import Foundation
@testable import MeshSession
import MeshWire
import Testing

/// What a stream's and a resource's sender do when the first hop's link refuses a packet
/// (PROTOCOL.md §16, §18: held back, sent again when the link has room, not lost to a
/// retransmission timeout). The machines alone.
@Suite("Link congestion")
struct LinkCongestionTests {
    static let start = ContinuousClock.now

    /// A stream opener of 1,024-byte chunks whose reader accepted and granted its whole window.
    static func openedSender(window: Int, now: ContinuousClock.Instant) -> StreamSendStateMachine {
        var limits = StreamLimits()
        limits.window = window
        limits.chunkSize = 1_024
        var sender = StreamSendStateMachine(id: 9, name: "", limits: limits, now: now)
        _ = sender.start(now: now)
        _ = sender.receivedAck(offset: 0, window: UInt64(window), fin: false, now: now)
        return sender
    }

    static func data(_ actions: [StreamSendStateMachine.Action]) -> [UInt64] {
        actions.compactMap { if case .send(.data(_, let offset, let bytes, _)) = $0, !bytes.isEmpty { offset } else { nil } }
    }

    @Test("a stream chunk the link refused, and those after it, go out again in order once the link has room")
    func streamHoldsBack() {
        let t = Self.start
        var sender = Self.openedSender(window: 8_192, now: t)
        let (_, actions) = sender.write(Data(repeating: 3, count: 4_096), now: t)
        #expect(Self.data(actions) == [0, 1_024, 2_048, 3_072])
        // The link took the first chunk and refused the second: the shell says so for each refused one.
        sender.notSent(offset: 1_024)
        sender.notSent(offset: 2_048)
        sender.notSent(offset: 3_072)
        #expect(sender.nextDeadline.map { $0 <= t + .seconds(1) } == true, "the first chunk's timer still runs")
        // No retransmission timeout is needed: room on the link sends the held chunks, in order.
        #expect(Self.data(sender.linkHasRoom(now: t)) == [1_024, 2_048, 3_072])
        #expect(Self.data(sender.linkHasRoom(now: t)).isEmpty, "nothing is sent twice")
        // The reader acknowledges everything: the chunks count as sent once (a round-trip sample).
        let acked = sender.receivedAck(offset: 4_096, window: 8_192, fin: false, now: t + .milliseconds(10))
        #expect(acked.contains(.writable))
        #expect(sender.heldBytes == 0)
    }

    @Test("a refused retransmission or an unknown offset changes nothing")
    func streamIgnores() {
        let t = Self.start
        var sender = Self.openedSender(window: 4_096, now: t)
        _ = sender.write(Data(repeating: 4, count: 2_048), now: t)
        let later = t + .seconds(2)
        #expect(Self.data(sender.timerFired(now: later)) == [0, 1_024], "the timeout resends both")
        sender.notSent(offset: 0)
        sender.notSent(offset: 77)
        #expect(Self.data(sender.linkHasRoom(now: later)).isEmpty, "a retransmission is left to its timer")
    }

    @Test("a resource chunk the link refused is sent again when the link has room, counted once")
    func resourceHoldsBack() {
        let offer = ResourceOffer(name: "a", size: 8 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var sender = ResourceSendStateMachine(id: .random(), offer: offer)
        let now = ContinuousClock.now
        _ = sender.start(now: now)
        let first = sender.receivedAck(ResourceAckPayload(), now: now)
        let chunks = first.compactMap { if case .sendChunk(let index) = $0 { index } else { nil } }
        #expect(chunks == Array(0..<8))
        #expect(sender.chunksSent == 8)
        for index in 3..<8 { sender.notSent(chunk: index) }
        #expect(sender.chunksSent == 3 && sender.chunksInFlight == 3)
        let again = sender.linkHasRoom(now: now).compactMap { if case .sendChunk(let index) = $0 { index } else { nil } }
        #expect(again == Array(3..<8))
        #expect(sender.chunksSent == 8 && sender.chunksInFlight == 8)
        #expect(sender.linkHasRoom(now: now).isEmpty, "nothing is sent twice")
        // A refused retransmission is left to its timer.
        sender.notSent(chunk: 42)
        #expect(sender.chunksInFlight == 8)
    }
}
