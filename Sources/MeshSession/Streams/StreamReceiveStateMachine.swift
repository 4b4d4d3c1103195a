import struct Foundation.Data

/// The reading side of one stream (PROTOCOL.md §18), as a value: no I/O, the clock passed in.
///
/// States: **open** (bytes arrive and are handed to the application in order), **ended** (the
/// opener's end arrived and every byte before it was handed over; waiting for the application to
/// read the rest) and **closed** (every later input is ignored).
///
/// Flow control (§18.4): the reader accepts only bytes below `read + window`, where `read` counts
/// bytes its application has taken (``consumed(_:now:)``) and `window` is
/// ``StreamLimits/window``, so a stream never holds more than the window, whatever the opener
/// sends: a byte past it closes the stream with `protocolViolation`. Every data packet is answered
/// with an acknowledgement (cumulative offset, the credit left, whether the end is held); packets
/// in order may share one, sent once a quarter of the window is unacknowledged or after
/// ``ackDelay`` (`deferringAck` and ``flushAck(now:)``, §18.3); reading a quarter of the window
/// answers too, so that an opener waiting for credit goes on.
///
/// Order and duplicates (§18.3): bytes ahead of the cumulative offset are held (at most
/// ``maxHeldSegments`` packets, none overlapping another) until the gap fills; bytes already
/// received are ignored. When the application has read the end, the reader sends the `finished`
/// close that completes the opener's `finish()`.
package struct StreamReceiveStateMachine: Sendable {
    /// Where the stream is.
    package enum State: Sendable, Hashable {
        /// Bytes arrive.
        case open
        /// Every byte up to the end was handed to the application.
        case ended
        /// Over.
        case closed
    }

    /// What the shell does after an input, in order. A packet that answers the input comes before
    /// the end or failure it reports (``end``, ``failed(_:)``): the shell hands packets to the mesh
    /// at once, so by the time the application sees a stream's end its close is on the link.
    package enum Action: Sendable, Hashable {
        /// Send the packet to the opener.
        case send(StreamPacket)
        /// Hand these bytes, the next in order, to the application.
        case deliver(Data)
        /// The stream's end: the application's sequence ends after what was delivered.
        case end
        /// The application read everything; the stream is over (the `finished` close is sent).
        case completed
        /// The stream ended otherwise.
        case failed(StreamError)
        /// An input was dropped (for the log).
        case ignored(String)
    }

    /// Packets ahead of a gap held at most.
    static let maxHeldSegments = 64

    /// The stream id.
    let id: UInt64
    /// The limits.
    let limits: StreamLimits
    /// Where the stream is.
    package private(set) var state: State = .open
    /// Every byte below this was received (and delivered).
    private(set) var received: UInt64 = 0
    /// Bytes the application read.
    private(set) var consumed: UInt64 = 0
    /// Where the stream ends, once known.
    private(set) var finOffset: UInt64?
    /// Bytes ahead of `received`, by offset.
    private var held: [UInt64: Data] = [:]
    private var advertisedLimit: UInt64 = 0
    /// Since when a data packet was answered by nothing yet (its acknowledgement was deferred).
    private var ackOwedSince: ContinuousClock.Instant?
    /// `received` when the last acknowledgement went out.
    private var acknowledgedOffset: UInt64 = 0

    /// How long an in-order data packet's acknowledgement may wait for more (§18.3): far below
    /// the opener's shortest retransmission timeout (200 ms).
    static let ackDelay: Duration = .milliseconds(5)
    /// Bytes received in order that are acknowledged without waiting: a quarter of the window (an
    /// eighth until session 17: half the acknowledgements, each a write and a wake-up on both
    /// sides, and the opener still holds at most three quarters of its window unacknowledged).
    private var ackEvery: UInt64 { UInt64(max(1, limits.window / 4)) }
    private var lastHeard: ContinuousClock.Instant
    private var lastProgress: ContinuousClock.Instant

    /// Creates the reader of a stream the application accepted.
    package init(id: UInt64, limits: StreamLimits, now: ContinuousClock.Instant) {
        self.id = id
        self.limits = limits
        self.lastHeard = now
        self.lastProgress = now
    }

    /// Bytes held for the application: delivered and not read, and held ahead of a gap.
    package var heldBytes: Int { Int(received - consumed) + held.values.reduce(0) { $0 + $1.count } }

    /// The credit's end: bytes below it are accepted.
    private var limit: UInt64 { consumed + UInt64(limits.window) }

    /// When ``timerFired(now:)`` is next needed, or `nil` once closed.
    var nextDeadline: ContinuousClock.Instant? {
        guard state != .closed else { return nil }
        let due = min(lastHeard + limits.peerTimeout, lastProgress + limits.idleTimeout)
        return ackOwedSince.map { min(due, $0 + Self.ackDelay) } ?? due
    }

    // MARK: Inputs

    /// Accepts the stream: the first acknowledgement grants the window.
    package mutating func start() -> [Action] { [ack()] }

    /// The open came again (the first acknowledgement was lost): acknowledge again.
    package mutating func receivedOpen(now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [.ignored("an open after the end")] }
        lastHeard = now
        return [ack()]
    }

    /// Bytes (or a probe, or the end) from the opener.
    /// - Parameter deferringAck: the acknowledgement of bytes that came in order may wait for
    ///   ``flushAck(now:)`` after the last packet that arrived with this one (§18.3), and then until
    ///   a quarter of the window is unacknowledged or ``ackDelay`` has passed. A probe, the end,
    ///   and bytes past a gap or already received are always answered at once.
    package mutating func receivedData(offset: UInt64, bytes: Data, fin: Bool, now: ContinuousClock.Instant,
                                       deferringAck: Bool = false) -> [Action] {
        guard state != .closed else { return [.ignored("data after the end")] }
        lastHeard = now
        let (end, overflow) = offset.addingReportingOverflow(UInt64(bytes.count))
        guard !overflow, end <= limit else {
            return fail(.protocolViolation, "bytes up to \(overflow ? "past 2^64" : "\(end)") exceed the window's end \(limit)")
        }
        if let finOffset, end > finOffset || (fin && end != finOffset) {
            return fail(.protocolViolation, "bytes up to \(end) (end \(fin)) disagree with the stream's end at \(finOffset)")
        }
        if fin, finOffset == nil {
            guard end >= received else {
                return fail(.protocolViolation, "the end at \(end) is before \(received) bytes already received")
            }
            finOffset = end
        }
        var actions: [Action] = []
        let before = received
        if end > received, !bytes.isEmpty {
            if offset <= received {
                let skip = Int(received - offset)
                // Bytes that start at the offset are handed over as they are (no copy of the chunk).
                actions.append(.deliver(skip == 0 ? bytes : Data(bytes.dropFirst(skip))))
                received = end
                actions += drainHeld()
            } else if held.count < Self.maxHeldSegments, !overlapsHeld(offset: offset, end: end) {
                held[offset] = Data(bytes)
            } else {
                actions.append(.ignored("bytes at \(offset) ahead of a gap at \(received) not held"))
            }
        }
        if received > before { lastProgress = now }
        if deferringAck, state == .open, !fin, offset <= before, received > before {
            if ackOwedSince == nil { ackOwedSince = now }
            return actions
        }
        if state == .open, let finOffset, received == finOffset {
            state = .ended
            // Everything was read already: the close goes out before the application hears of the
            // end, or an application that stops its session once it reads the end cuts it off.
            if consumed == finOffset { return actions + complete(announcingEnd: true) }
            actions.append(.end)
        }
        actions.append(ack())
        return actions
    }

    /// Answers the packets whose acknowledgement was deferred (one cumulative acknowledgement),
    /// once a quarter of the window came since the last one or the oldest waited ``ackDelay``;
    /// until then it stays owed, and ``timerFired(now:)`` sends it.
    package mutating func flushAck(now: ContinuousClock.Instant) -> [Action] {
        guard let since = ackOwedSince, state != .closed else { return [] }
        guard received - acknowledgedOffset >= ackEvery || now >= since + Self.ackDelay else { return [] }
        return [ack()]
    }

    /// The application read `count` bytes of what was delivered.
    package mutating func consumed(_ count: Int, now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed, count > 0 else { return [] }
        consumed = min(received, consumed + UInt64(count))
        lastProgress = now
        if state == .ended, consumed == finOffset { return complete() }
        guard state == .open, limit - advertisedLimit >= UInt64(max(1, limits.window / 4)) else { return [] }
        return [ack()]
    }

    /// The opener closed the stream (cancelled it, or gave up).
    package mutating func receivedClose(code: StreamCloseCode, reason: String) -> [Action] {
        guard state != .closed else { return [.ignored("a close after the end")] }
        state = .closed
        held = [:]
        return [.failed(StreamError(code, reason.isEmpty ? "\(code)" : reason, byPeer: true))]
    }

    /// This node ends the stream (the application cancelled, or the session stops).
    package mutating func cancel(_ code: StreamCloseCode, _ reason: String) -> [Action] {
        guard state != .closed else { return [.ignored("already over")] }
        return fail(code, reason)
    }

    /// Time passed: gives up on a silent or idle stream.
    package mutating func timerFired(now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        if now >= lastHeard + limits.peerTimeout {
            return fail(.timedOut, "nothing from the opener for \(limits.peerTimeout)")
        }
        if now >= lastProgress + limits.idleTimeout {
            return fail(.idle, "no byte moved for \(limits.idleTimeout)")
        }
        return flushAck(now: now)
    }

    // MARK: Internals

    private mutating func ack() -> Action {
        ackOwedSince = nil
        acknowledgedOffset = received
        advertisedLimit = limit
        return .send(.ack(id: id, offset: received, window: limit - received, fin: state != .open))
    }

    /// Hands over held bytes that the gap's filling made next in order.
    private mutating func drainHeld() -> [Action] {
        var actions: [Action] = []
        while let (offset, bytes) = held.first(where: { $0.key <= received }) {
            held[offset] = nil
            let end = offset + UInt64(bytes.count)
            guard end > received else { continue }
            actions.append(.deliver(offset == received ? bytes : Data(bytes.dropFirst(Int(received - offset)))))
            received = end
        }
        return actions
    }

    private func overlapsHeld(offset: UInt64, end: UInt64) -> Bool {
        held.contains { $0.key < end && offset < $0.key + UInt64($0.value.count) }
    }

    /// The application read everything: the `finished` close, then (when it was not announced
    /// before) the end, in that order (see ``Action``).
    private mutating func complete(announcingEnd: Bool = false) -> [Action] {
        state = .closed
        let close = Action.send(.close(id: id, code: .finished, reason: "", fromReader: true))
        return announcingEnd ? [close, .end, .completed] : [close, .completed]
    }

    private mutating func fail(_ code: StreamCloseCode, _ reason: String) -> [Action] {
        state = .closed
        held = [:]
        return [.send(.close(id: id, code: code, reason: reason, fromReader: true)), .failed(StreamError(code, reason))]
    }
}
