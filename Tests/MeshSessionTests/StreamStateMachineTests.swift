import Foundation
@testable import MeshSession
import MeshTestSupport
import Testing

/// The stream state machines alone (PROTOCOL.md §18): direct inputs, and an opener pumped against
/// a reader over a seeded lossy, reordering, duplicating network in virtual time.
@Suite("Stream state machines")
struct StreamStateMachineTests {
    static let start = ContinuousClock.now

    static func limits(window: Int = 8_192, chunk: Int = 1_024) -> StreamLimits {
        var limits = StreamLimits()
        limits.window = window
        limits.chunkSize = chunk
        return limits
    }

    static func packets<A>(_ actions: [A], _ extract: (A) -> StreamPacket?) -> [StreamPacket] { actions.compactMap(extract) }
    static func sent(_ actions: [StreamSendStateMachine.Action]) -> [StreamPacket] {
        packets(actions) { if case .send(let packet) = $0 { packet } else { nil } }
    }
    static func sent(_ actions: [StreamReceiveStateMachine.Action]) -> [StreamPacket] {
        packets(actions) { if case .send(let packet) = $0 { packet } else { nil } }
    }
    static func delivered(_ actions: [StreamReceiveStateMachine.Action]) -> Data {
        actions.reduce(into: Data()) { if case .deliver(let chunk) = $1 { $0.append(chunk) } }
    }

    @Test("the opener sends only within the reader's credit and holds at most its window")
    func credit() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 7, name: "n", limits: Self.limits(window: 4_096, chunk: 1_024), now: t)
        #expect(Self.sent(sender.start(now: t)) == [.open(id: 7, name: "n")])
        #expect(sender.writableBytes == 0, "nothing is written before the reader accepts")
        #expect(sender.receivedAck(offset: 0, window: 2_048, fin: false, now: t).contains(.opened))
        let (taken, actions) = sender.write(Data(repeating: 1, count: 10_000), now: t)
        #expect(taken == 4_096, "the opener holds at most its window")
        #expect(Self.sent(actions).count == 2, "two chunks fit the credit of 2,048 bytes")
        #expect(sender.writableBytes == 0)
        let more = sender.receivedAck(offset: 2_048, window: 2_048, fin: false, now: t)
        #expect(more.contains(.writable))
        #expect(Self.sent(more) == [.data(id: 7, offset: 2_048, bytes: Data(repeating: 1, count: 1_024), fin: false),
                                    .data(id: 7, offset: 3_072, bytes: Data(repeating: 1, count: 1_024), fin: false)])
        #expect(sender.writableBytes == 2_048)
    }

    @Test("a credit ending inside a chunk cuts the chunk there")
    func creditCutsChunk() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 7, name: "", limits: Self.limits(window: 4_096, chunk: 1_024), now: t)
        _ = sender.start(now: t)
        _ = sender.receivedAck(offset: 0, window: 100, fin: false, now: t)
        let (_, actions) = sender.write(Data(repeating: 2, count: 1_024), now: t)
        #expect(Self.sent(actions) == [.data(id: 7, offset: 0, bytes: Data(repeating: 2, count: 100), fin: false)])
    }

    @Test("the reader refuses bytes past its window with protocolViolation and holds nothing more")
    func readerWindowBinds() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 3, limits: Self.limits(window: 2_048, chunk: 1_024), now: t)
        #expect(Self.sent(reader.start()) == [.ack(id: 3, offset: 0, window: 2_048, fin: false)])
        let inside = reader.receivedData(offset: 0, bytes: Data(count: 1_024), fin: false, now: t)
        #expect(Self.delivered(inside).count == 1_024)
        let past = reader.receivedData(offset: 1_024, bytes: Data(count: 1_025), fin: false, now: t)
        #expect(past.contains(.failed(StreamError(.protocolViolation, ""))))
        #expect(Self.sent(past).first.map { if case .close(_, .protocolViolation, _, true) = $0 { true } else { false } } == true)
        #expect(reader.state == .closed)
        #expect(reader.receivedData(offset: 0, bytes: Data(count: 1), fin: false, now: t).allSatisfy {
            if case .ignored = $0 { true } else { false }
        })
    }

    @Test("an offset that overflows 2^64 is a protocol violation, not a trap")
    func offsetOverflow() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 3, limits: Self.limits(), now: t)
        let actions = reader.receivedData(offset: .max - 1, bytes: Data(count: 10), fin: false, now: t)
        #expect(actions.contains(.failed(StreamError(.protocolViolation, ""))))
    }

    @Test("the reader holds at most 64 segments ahead of a gap, none overlapping, and fills the gap in order")
    func heldSegments() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 3, limits: Self.limits(window: 1 << 20, chunk: 1_024), now: t)
        for index in 1...100 {
            _ = reader.receivedData(offset: UInt64(index * 10), bytes: Data(repeating: UInt8(index), count: 10), fin: false, now: t)
        }
        _ = reader.receivedData(offset: 15, bytes: Data(count: 10), fin: false, now: t)  // overlaps two held: dropped
        #expect(reader.heldBytes == 64 * 10)
        let filled = reader.receivedData(offset: 0, bytes: Data(repeating: 0, count: 10), fin: false, now: t)
        #expect(Self.delivered(filled).count == 650, "the gap and the 64 held segments after it")
        #expect(reader.received == 650)
    }

    @Test("finish completes only once the reader's application has read the end")
    func finishWaitsForTheApplication() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 9, name: "", limits: Self.limits(), now: t)
        var reader = StreamReceiveStateMachine(id: 9, limits: Self.limits(), now: t)
        _ = sender.start(now: t)
        _ = sender.receivedAck(offset: 0, window: 8_192, fin: false, now: t)
        let data = Self.sent(sender.write(Data("hello".utf8), now: t).actions) + Self.sent(sender.finish(now: t))
        #expect(data == [.data(id: 9, offset: 0, bytes: Data("hello".utf8), fin: false), .data(id: 9, offset: 5, bytes: Data(), fin: true)],
                "the bytes went out at once; the end follows them")
        #expect(!reader.receivedData(offset: 0, bytes: Data("hello".utf8), fin: false, now: t).contains(.end))
        let read = reader.receivedData(offset: 5, bytes: Data(), fin: true, now: t)
        #expect(read.contains(.end))
        #expect(Self.sent(read) == [.ack(id: 9, offset: 5, window: 8_187, fin: true)])
        #expect(sender.receivedAck(offset: 5, window: 8_187, fin: true, now: t).allSatisfy { $0 != .finished })
        let consumed = reader.consumed(5, now: t)
        #expect(consumed.contains(.completed))
        #expect(Self.sent(consumed) == [.close(id: 9, code: .finished, reason: "", fromReader: true)])
        #expect(sender.receivedClose(code: .finished, reason: "") == [.finished])
    }

    /// The lost close of session 8–11's rare `timedOut`: the application had read every byte when
    /// the end arrived alone; the shell ran `.end` first, the application saw it, stopped its
    /// session, and the close came after the link had closed.
    @Test("when the end arrives after everything was read, the finished close comes before the end")
    func closeBeforeEnd() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 9, limits: Self.limits(), now: t)
        _ = reader.receivedData(offset: 0, bytes: Data("hello".utf8), fin: false, now: t)
        #expect(reader.consumed(5, now: t).allSatisfy { $0 != .completed })
        let ended = reader.receivedData(offset: 5, bytes: Data(), fin: true, now: t)
        let close = StreamReceiveStateMachine.Action.send(.close(id: 9, code: .finished, reason: "", fromReader: true))
        #expect(ended.filter { $0 == close || $0 == .end || $0 == .completed } == [close, .end, .completed])
        #expect(reader.state == .closed)
    }

    @Test("packets that arrived together share one cumulative acknowledgement; probes, gaps and the end are answered at once")
    func deferredAcknowledgements() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 4, limits: Self.limits(), now: t)
        let chunk = Data(repeating: 7, count: 1_000)
        var owed: [StreamReceiveStateMachine.Action] = []
        for index in 0..<3 {
            owed += reader.receivedData(offset: UInt64(index * 1_000), bytes: chunk, fin: false, now: t, deferringAck: true)
        }
        #expect(Self.sent(owed).isEmpty)
        #expect(Self.delivered(owed).count == 3_000)
        #expect(Self.sent(reader.flushAck(now: t + .milliseconds(5))) == [.ack(id: 4, offset: 3_000, window: 8_192 - 3_000, fin: false)])
        #expect(reader.flushAck(now: t + .milliseconds(5)).isEmpty, "one acknowledgement for what was owed, not two")
        // Past a gap, a duplicate and a probe: each answered at once (the opener learns of the gap).
        let ahead = reader.receivedData(offset: 4_000, bytes: chunk, fin: false, now: t, deferringAck: true)
        #expect(Self.sent(ahead) == [.ack(id: 4, offset: 3_000, window: 8_192 - 3_000, fin: false)])
        #expect(Self.sent(reader.receivedData(offset: 0, bytes: chunk, fin: false, now: t, deferringAck: true)).count == 1)
        #expect(Self.sent(reader.receivedData(offset: 3_000, bytes: Data(), fin: false, now: t, deferringAck: true)).count == 1)
        // Filling the gap is in order (deferred, covering the held bytes too); the end is answered at once.
        #expect(Self.sent(reader.receivedData(offset: 3_000, bytes: chunk, fin: false, now: t, deferringAck: true)).isEmpty)
        #expect(Self.sent(reader.flushAck(now: t + .milliseconds(5))) == [.ack(id: 4, offset: 5_000, window: 8_192 - 5_000, fin: false)])
        let end = reader.receivedData(offset: 5_000, bytes: Data(), fin: true, now: t, deferringAck: true)
        #expect(end.contains(.end))
        #expect(Self.sent(end) == [.ack(id: 4, offset: 5_000, window: 8_192 - 5_000, fin: true)])
        #expect(reader.flushAck(now: t + .milliseconds(5)).isEmpty)
    }

    @Test("an in-order acknowledgement waits for a quarter of the window or 5 ms, whichever comes first (§18.3)")
    func delayedAcknowledgement() {
        let t = Self.start
        var reader = StreamReceiveStateMachine(id: 5, limits: Self.limits(window: 65_536), now: t)
        let chunk = Data(repeating: 1, count: 1_024)
        _ = reader.receivedData(offset: 0, bytes: chunk, fin: false, now: t, deferringAck: true)
        #expect(reader.flushAck(now: t).isEmpty, "1 KiB of a 64 KiB window waits")
        #expect(reader.nextDeadline == t + StreamReceiveStateMachine.ackDelay)
        #expect(reader.flushAck(now: t + .milliseconds(4)).isEmpty)
        #expect(Self.sent(reader.timerFired(now: t + .milliseconds(5))) == [.ack(id: 5, offset: 1_024, window: 65_536 - 1_024, fin: false)])
        #expect(reader.timerFired(now: t + .milliseconds(6)).isEmpty, "nothing more is owed")
        // A quarter of the window (16 KiB) is answered as soon as its packets are handled; an eighth waits.
        for index in 1...8 {
            _ = reader.receivedData(offset: UInt64(index * 1_024), bytes: chunk, fin: false, now: t + .milliseconds(6), deferringAck: true)
        }
        #expect(reader.flushAck(now: t + .milliseconds(6)).isEmpty, "an eighth of the window waits")
        for index in 9...16 {
            _ = reader.receivedData(offset: UInt64(index * 1_024), bytes: chunk, fin: false, now: t + .milliseconds(6), deferringAck: true)
        }
        #expect(Self.sent(reader.flushAck(now: t + .milliseconds(6))) == [.ack(id: 5, offset: 17_408, window: 65_536 - 17_408, fin: false)])
    }

    @Test("with the credit used up, the end rides on the last unsent chunk")
    func finRidesOnLastChunk() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 9, name: "", limits: Self.limits(), now: t)
        _ = sender.start(now: t)
        _ = sender.receivedAck(offset: 0, window: 0, fin: false, now: t)
        #expect(Self.sent(sender.write(Data("hello".utf8), now: t).actions).isEmpty)
        #expect(Self.sent(sender.finish(now: t)).isEmpty)
        #expect(Self.sent(sender.receivedAck(offset: 0, window: 5, fin: false, now: t)) == [.data(id: 9, offset: 0, bytes: Data("hello".utf8), fin: true)])
    }

    @Test("an opener with nothing in flight probes every keepalive interval and times out on a silent reader")
    func probeAndSilence() {
        let t = Self.start
        var limits = Self.limits()
        limits.keepaliveInterval = .seconds(2)
        limits.peerTimeout = .seconds(10)
        var sender = StreamSendStateMachine(id: 1, name: "", limits: limits, now: t)
        _ = sender.start(now: t)
        _ = sender.receivedAck(offset: 0, window: 0, fin: false, now: t)
        #expect(sender.nextDeadline == t + .seconds(2))
        #expect(Self.sent(sender.timerFired(now: t + .seconds(2))) == [.data(id: 1, offset: 0, bytes: Data(), fin: false)])
        let end = sender.timerFired(now: t + .seconds(10))
        #expect(end.contains(.failed(StreamError(.timedOut, ""))))
        #expect(sender.state == .closed)
    }

    @Test("the open is sent again with a doubling timeout, and gives up after maxTransmissions only")
    func openRetransmission() {
        let t = Self.start
        var limits = Self.limits()
        limits.maxTransmissions = 3
        limits.peerTimeout = .seconds(5)
        var sender = StreamSendStateMachine(id: 1, name: "x", limits: limits, now: t)
        _ = sender.start(now: t)
        #expect(Self.sent(sender.timerFired(now: t + .seconds(1))) == [.open(id: 1, name: "x")])
        #expect(Self.sent(sender.timerFired(now: t + .seconds(2))).isEmpty, "the timeout doubled to 2 s")
        #expect(Self.sent(sender.timerFired(now: t + .seconds(3))) == [.open(id: 1, name: "x")])
        #expect(sender.timerFired(now: t + .seconds(6)).isEmpty, "an open is bounded by its tries, not by the 5 s silence bound")
        let end = sender.timerFired(now: t + .seconds(7))
        #expect(end.contains(.failed(StreamError(.timedOut, ""))))
    }

    @Test("an acknowledgement past what was sent is a protocol violation")
    func ackPastSent() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 1, name: "", limits: Self.limits(), now: t)
        _ = sender.start(now: t)
        _ = sender.receivedAck(offset: 0, window: 100, fin: false, now: t)
        #expect(sender.receivedAck(offset: 5, window: 100, fin: false, now: t).contains(.failed(StreamError(.protocolViolation, ""))))
    }

    @Test("a cancel on either side reaches the other with its reason")
    func cancel() {
        let t = Self.start
        var sender = StreamSendStateMachine(id: 1, name: "", limits: Self.limits(), now: t)
        var reader = StreamReceiveStateMachine(id: 1, limits: Self.limits(), now: t)
        _ = sender.start(now: t)
        let close = Self.sent(sender.cancel(.cancelled, "user pressed ^C"))
        #expect(close == [.close(id: 1, code: .cancelled, reason: "user pressed ^C", fromReader: false)])
        let ended = reader.receivedClose(code: .cancelled, reason: "user pressed ^C")
        guard case .failed(let error) = ended.first else { Issue.record("no failure"); return }
        #expect(error.code == .cancelled && error.reason == "user pressed ^C" && error.byPeer)
    }

    @Test("the open rate and stream counts bind per node")
    func admission() {
        var limits = StreamLimits()
        limits.openBurst = 2
        limits.opensPerSecond = 1
        limits.maxStreamsPerPeer = 5
        var admission = StreamAdmission(limits: limits)
        let t = Self.start, node = NodeID.random(), other = NodeID.random()
        #expect(admission.admit(node, fromNode: 0, inAll: 0, pending: 0, now: t) == nil)
        #expect(admission.admit(node, fromNode: 1, inAll: 1, pending: 0, now: t) == nil)
        #expect(admission.admit(node, fromNode: 2, inAll: 2, pending: 0, now: t)?.0 == .busy, "over the burst")
        #expect(admission.admit(other, fromNode: 0, inAll: 2, pending: 0, now: t) == nil, "another node has its own bucket")
        #expect(admission.admit(node, fromNode: 2, inAll: 3, pending: 0, now: t + .seconds(1)) == nil, "refilled at 1/s")
        #expect(admission.admit(node, fromNode: 5, inAll: 5, pending: 0, now: t + .seconds(60))?.0 == .busy, "streams per node")
        #expect(admission.admit(other, fromNode: 0, inAll: 0, pending: 16, now: t + .seconds(60))?.0 == .busy, "pending")
    }

    @Test("late packets of a finished stream are answered with its end", arguments: [0, 119])
    func recentlyClosed(seconds: Int) {
        var recent = RecentlyClosedStreams()
        let key = StreamKey(peer: NodeID.random(), id: 5, reader: true)
        recent.insert(key, code: .finished, now: Self.start)
        #expect(recent.code(for: key, now: Self.start + .seconds(seconds)) == .finished)
        #expect(recent.code(for: key, now: Self.start + .seconds(121)) == nil)
    }

    @Test("pumped over a lossy, reordering, duplicating network, every byte arrives once and in order",
          arguments: [(seed: UInt64(1), loss: 0.0, slowReader: false), (2, 0.1, false), (3, 0.3, false), (4, 0.1, true), (5, 0.2, true)])
    func pumped(seed: UInt64, loss: Double, slowReader: Bool) throws {
        var pump = StreamPump(seed: seed, loss: loss, slowReader: slowReader)
        let content = pump.randomBytes(200_000)
        let result = try pump.run(content)
        #expect(result.received == content)
        #expect(result.senderFinished, "finish() completed")
        #expect(result.readerCompleted)
        #expect(result.maxHeldBySender <= pump.limits.window, "the opener held at most its window")
        #expect(result.maxHeldByReader <= pump.limits.window, "the reader held at most its window")
    }
}

/// An opener and a reader over a simulated network in virtual time.
struct StreamPump {
    struct Outcome {
        var received = Data()
        var senderFinished = false
        var readerCompleted = false
        var maxHeldBySender = 0
        var maxHeldByReader = 0
    }

    private struct InFlight {
        var at: ContinuousClock.Instant
        var packet: StreamPacket
        var toReader: Bool
    }

    var generator: SplitMix64
    let loss: Double
    let slowReader: Bool
    let limits: StreamLimits

    init(seed: UInt64, loss: Double, slowReader: Bool) {
        generator = SplitMix64(seed: seed)
        self.loss = loss
        self.slowReader = slowReader
        var limits = StreamLimits()
        limits.window = 16_384
        limits.chunkSize = 1_500
        limits.maxTransmissions = 40
        limits.peerTimeout = .seconds(120)
        self.limits = limits
    }

    mutating func randomBytes(_ count: Int) -> Data {
        Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    mutating func run(_ content: Data) throws -> Outcome {
        var now = StreamStateMachineTests.start
        var sender = StreamSendStateMachine(id: 1, name: "pump", limits: limits, now: now)
        var reader: StreamReceiveStateMachine?
        var network: [InFlight] = []
        var outcome = Outcome()
        var unread: [Data] = []
        var written = 0
        var finishing = false
        var nextRead = now

        func transmit(_ packets: [StreamPacket], toReader: Bool, from now: ContinuousClock.Instant, _ pump: inout StreamPump) {
            for packet in packets {
                guard Double.random(in: 0..<1, using: &pump.generator) >= pump.loss else { continue }
                let copies = Double.random(in: 0..<1, using: &pump.generator) < 0.05 ? 2 : 1
                for _ in 0..<copies {
                    let delay = Duration.milliseconds(Int.random(in: 5...40, using: &pump.generator))
                    network.append(InFlight(at: now + delay, packet: packet, toReader: toReader))
                }
            }
        }

        transmit(StreamStateMachineTests.sent(sender.start(now: now)), toReader: true, from: now, &self)
        for _ in 0..<2_000_000 {
            if outcome.senderFinished && outcome.readerCompleted { return outcome }
            if sender.state == .closed && !outcome.senderFinished { throw PumpError(description: "the opener failed") }
            // The application writes what it may, then finishes.
            if sender.state == .open && written < content.count {
                let (taken, actions) = sender.write(content[written...], now: now)
                written += taken
                transmit(StreamStateMachineTests.sent(actions), toReader: true, from: now, &self)
            }
            if sender.state == .open && written == content.count && !finishing {
                finishing = true
                transmit(StreamStateMachineTests.sent(sender.finish(now: now)), toReader: true, from: now, &self)
            }
            outcome.maxHeldBySender = max(outcome.maxHeldBySender, Int(sender.heldBytes))
            // The reader's application reads (slowly: one chunk every 50 ms).
            if var current = reader, !unread.isEmpty, now >= nextRead {
                let chunk = unread.removeFirst()
                outcome.received.append(chunk)
                let actions = current.consumed(chunk.count, now: now)
                if actions.contains(.completed) { outcome.readerCompleted = true }
                reader = current
                transmit(StreamStateMachineTests.sent(actions), toReader: false, from: now, &self)
                if slowReader { nextRead = now + .milliseconds(50) }
                continue
            }
            // Advance to the next event.
            var due = [sender.nextDeadline, reader?.nextDeadline, network.map(\.at).min()].compactMap { $0 }.min() ?? now
            if reader != nil, !unread.isEmpty { due = min(due, nextRead) }
            now = max(now, due)
            if let index = network.indices.filter({ network[$0].at <= now }).randomElement(using: &generator) {
                let item = network.remove(at: index)
                if item.toReader, outcome.readerCompleted {
                    // What the shell's table of recently closed streams answers (§18.5).
                    transmit([.close(id: 1, code: .finished, reason: "", fromReader: true)], toReader: false, from: now, &self)
                } else if item.toReader {
                    var current = reader ?? StreamReceiveStateMachine(id: 1, limits: limits, now: now)
                    var actions: [StreamReceiveStateMachine.Action]
                    switch item.packet {
                    case .open: actions = reader == nil ? current.start() : current.receivedOpen(now: now)
                    case .data(_, let offset, let bytes, let fin):
                        guard reader != nil else { continue }
                        actions = current.receivedData(offset: offset, bytes: bytes, fin: fin, now: now)
                    default: actions = []
                    }
                    reader = current
                    for action in actions { if case .deliver(let chunk) = action { unread.append(chunk) } }
                    if actions.contains(.completed) { outcome.readerCompleted = true }
                    outcome.maxHeldByReader = max(outcome.maxHeldByReader, current.heldBytes)
                    transmit(StreamStateMachineTests.sent(actions), toReader: false, from: now, &self)
                } else {
                    let actions: [StreamSendStateMachine.Action]
                    switch item.packet {
                    case .ack(_, let offset, let window, let fin): actions = sender.receivedAck(offset: offset, window: window, fin: fin, now: now)
                    case .close(_, let code, let reason, _): actions = sender.receivedClose(code: code, reason: reason)
                    default: actions = []
                    }
                    if actions.contains(.finished) { outcome.senderFinished = true }
                    transmit(StreamStateMachineTests.sent(actions), toReader: true, from: now, &self)
                }
                continue
            }
            transmit(StreamStateMachineTests.sent(sender.timerFired(now: now)), toReader: true, from: now, &self)
            if var current = reader {
                let actions = current.timerFired(now: now)
                reader = current
                transmit(StreamStateMachineTests.sent(actions), toReader: false, from: now, &self)
            }
        }
        throw PumpError(description: "the pump did not settle")
    }
}

struct PumpError: Error, CustomStringConvertible {
    let description: String
}
