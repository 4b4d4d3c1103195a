import struct Foundation.Data

/// The opening (writing) side of one stream (PROTOCOL.md §18), as a value: no I/O, the clock
/// passed in.
///
/// States: **opening** (the open is out, sent again on timeout until the reader's first
/// acknowledgement or close), **open** (the application writes; bytes go out as the reader's
/// credit allows), **finishing** (the application finished: the end is queued or sent, and the
/// stream waits for the reader's `finished` close, which it sends once its application has read
/// everything) and **closed** (every later input is ignored).
///
/// Flow control (§18.4): the reader's acknowledgement carries a cumulative offset and a window; the
/// opener sends only bytes below offset + window, so a slow reader stops it. The opener holds at
/// most ``StreamLimits/window`` bytes written and not acknowledged (``writableBytes``), which bounds
/// its memory; the shell makes writers wait for ``Action/writable``.
///
/// Reliability (§18.6): data sent and not acknowledged within the retransmission timeout is sent
/// again. The timeout starts at 1 s, becomes twice the smoothed round trip (Karn: only packets sent
/// once are measured; smoothing 7/8 old + 1/8 new) within 0.2–10 s, and doubles after each timeout.
/// After ``StreamLimits/maxTransmissions`` sends of one packet, or ``StreamLimits/peerTimeout``
/// without any packet from the reader, the stream ends with `timedOut`. With nothing in flight
/// (a closed window, or the end sent and acknowledged) the opener probes every
/// ``StreamLimits/keepaliveInterval`` with an empty data packet, which the reader answers.
package struct StreamSendStateMachine: Sendable {
    /// Where the stream is.
    package enum State: Sendable, Hashable {
        /// The open is out.
        case opening
        /// The reader accepted; bytes flow.
        case open
        /// The application finished writing.
        case finishing
        /// Over.
        case closed
    }

    /// What the shell does after an input, in order.
    package enum Action: Sendable, Hashable {
        /// Send the packet to the reader.
        case send(StreamPacket)
        /// The reader accepted the stream.
        case opened
        /// Room for more bytes appeared (``writableBytes`` grew).
        case writable
        /// The reader's application read every byte: `finish()` returns.
        case finished
        /// The stream ended otherwise.
        case failed(StreamError)
        /// An input was dropped (for the log).
        case ignored(String)
    }

    private struct Segment: Sendable {
        var offset: UInt64
        var bytes: Data
        var fin: Bool
        var sentAt: ContinuousClock.Instant?
        var transmissions = 0
        var end: UInt64 { offset + UInt64(bytes.count) }
    }

    static let initialRetransmissionTimeout: Duration = .seconds(1)
    static let minRetransmissionTimeout: Duration = .milliseconds(200)
    static let maxRetransmissionTimeout: Duration = .seconds(10)

    /// The stream id.
    let id: UInt64
    /// The stream's name.
    let name: String
    /// The limits.
    let limits: StreamLimits
    /// Where the stream is.
    package private(set) var state: State = .opening
    /// Bytes the application wrote.
    private(set) var written: UInt64 = 0
    /// Every byte below this is acknowledged.
    private(set) var acknowledged: UInt64 = 0
    /// The reader's credit: bytes below this may be sent.
    private(set) var creditLimit: UInt64 = 0
    /// The retransmission timeout now.
    private(set) var retransmissionTimeout = Self.initialRetransmissionTimeout
    /// Written and not acknowledged, in offset order; those below `nextUnsent` are sent.
    private var segments: [Segment] = []
    private var nextUnsent = 0
    private var sentEnd: UInt64 = 0
    private var finSent = false
    private var open: (sentAt: ContinuousClock.Instant, transmissions: Int)?
    private var smoothedRoundTrip: Duration?
    private var lastHeard: ContinuousClock.Instant
    private var lastSent: ContinuousClock.Instant
    private var lastProgress: ContinuousClock.Instant

    /// Creates the opener of a stream; ``start(now:)`` sends the open.
    package init(id: UInt64, name: String, limits: StreamLimits, now: ContinuousClock.Instant) {
        self.id = id
        self.name = name
        self.limits = limits
        self.lastHeard = now
        self.lastSent = now
        self.lastProgress = now
    }

    /// Bytes the application may write now without exceeding ``StreamLimits/window`` held.
    var writableBytes: Int {
        guard state == .open else { return 0 }
        let held = written - acknowledged
        return held >= UInt64(limits.window) ? 0 : limits.window - Int(held)
    }

    /// Bytes held (written and not acknowledged).
    package var heldBytes: UInt64 { written - acknowledged }

    /// When ``timerFired(now:)`` is next needed, or `nil` once closed.
    var nextDeadline: ContinuousClock.Instant? {
        guard state != .closed else { return nil }
        if let open { return open.sentAt + retransmissionTimeout }
        var due = min(lastHeard + limits.peerTimeout, lastProgress + limits.idleTimeout)
        // The oldest send of what is in flight, without building a list for every turn.
        var oldest: ContinuousClock.Instant?
        for index in 0..<nextUnsent {
            if let sentAt = segments[index].sentAt { oldest = min(oldest ?? sentAt, sentAt) }
        }
        if let oldest {
            due = min(due, oldest + retransmissionTimeout)
        } else if state != .opening {
            due = min(due, lastSent + limits.keepaliveInterval)
        }
        return due
    }

    // MARK: Inputs

    /// Sends the open.
    package mutating func start(now: ContinuousClock.Instant) -> [Action] {
        guard state == .opening, open == nil else { return [.ignored("the stream has already started")] }
        open = (now, 1)
        lastSent = now
        return [.send(.open(id: id, name: name))]
    }

    /// The application writes bytes; takes at most ``writableBytes`` of them.
    /// - Returns: how many bytes were taken, and the actions.
    package mutating func write(_ bytes: Data, now: ContinuousClock.Instant) -> (taken: Int, actions: [Action]) {
        let taken = min(bytes.count, writableBytes)
        guard taken > 0 else { return (0, []) }
        var position = bytes.startIndex
        let stop = bytes.startIndex + taken
        while position < stop {
            if let last = segments.last, nextUnsent < segments.count, last.sentAt == nil, !last.fin,
               last.bytes.count < limits.chunkSize {
                // Coalesce small writes into the last unsent chunk.
                let count = min(limits.chunkSize - last.bytes.count, stop - position)
                segments[segments.count - 1].bytes.append(bytes[position..<(position + count)])
                position += count
            } else {
                let count = min(limits.chunkSize, stop - position)
                // A slice, not a copy: it shares the written bytes until it is acknowledged.
                segments.append(Segment(offset: written + UInt64(position - bytes.startIndex),
                                        bytes: bytes[position..<(position + count)], fin: false))
                position += count
            }
        }
        written += UInt64(taken)
        lastProgress = now
        return (taken, pump(now: now))
    }

    /// The application wrote everything: the end goes out after the last byte.
    package mutating func finish(now: ContinuousClock.Instant) -> [Action] {
        guard state == .open || state == .opening else { return [.ignored("finish when \(state)")] }
        if state == .opening { return [.ignored("finish before the reader accepted")] }
        state = .finishing
        if nextUnsent < segments.count, let last = segments.last, !last.fin {
            segments[segments.count - 1].fin = true
        } else {
            segments.append(Segment(offset: written, bytes: Data(), fin: true))
        }
        return pump(now: now)
    }

    /// The reader acknowledged: the first acknowledgement accepts the stream.
    package mutating func receivedAck(offset: UInt64, window: UInt64, fin: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [.ignored("an acknowledgement after the end")] }
        lastHeard = now
        var actions: [Action] = []
        if state == .opening {
            state = .open
            open = nil
            actions.append(.opened)
        }
        guard offset <= sentEnd else {
            return actions + fail(.protocolViolation, "acknowledgement of \(offset) bytes, but \(sentEnd) were sent")
        }
        guard !fin || finSent else {
            return actions + fail(.protocolViolation, "the end acknowledged before it was sent")
        }
        let (limit, overflow) = offset.addingReportingOverflow(window)
        creditLimit = max(creditLimit, overflow ? .max : limit)
        if offset > acknowledged || (fin && segments.contains(where: \.fin)) {
            let before = acknowledged
            var sample: Duration?
            var removed = 0
            while removed < segments.count, segments[removed].end <= offset, !segments[removed].fin || fin {
                if segments[removed].transmissions == 1, let sentAt = segments[removed].sentAt { sample = now - sentAt }
                removed += 1
            }
            // Removed at once: one shift of the rest, not one per acknowledged chunk.
            segments.removeFirst(removed)
            if let first = segments.first, first.offset < offset, first.end > offset {
                segments[0].bytes = Data(first.bytes.dropFirst(Int(offset - first.offset)))
                segments[0].offset = offset
            }
            nextUnsent = max(0, nextUnsent - removed)
            acknowledged = max(acknowledged, offset)
            if let sample { measure(sample) }
            if acknowledged > before {
                lastProgress = now
                if state == .open { actions.append(.writable) }
            }
        }
        return actions + pump(now: now)
    }

    /// The reader closed the stream: `finished` after its application read the end, else a failure.
    package mutating func receivedClose(code: StreamCloseCode, reason: String) -> [Action] {
        guard state != .closed else { return [.ignored("a close after the end")] }
        state = .closed
        segments = []
        if code == .finished {
            guard finSent else {
                return [.failed(StreamError(.protocolViolation, "the reader said finished before the end was sent", byPeer: true))]
            }
            return [.finished]
        }
        return [.failed(StreamError(code, reason.isEmpty ? "\(code)" : reason, byPeer: true))]
    }

    /// This node ends the stream (the application cancelled, or the session stops).
    package mutating func cancel(_ code: StreamCloseCode, _ reason: String) -> [Action] {
        guard state != .closed else { return [.ignored("already over")] }
        return fail(code, reason)
    }

    /// The mesh did not take a data packet this machine sent for the first time (its first hop's
    /// link was congested): the packet and every one after it count as unsent again, so that they
    /// go out, in order, on the next ``pump(now:)`` instead of after a retransmission timeout.
    /// A refused retransmission or probe changes nothing (its timer still runs).
    package mutating func notSent(offset: UInt64) {
        guard state == .open || state == .finishing,
              let index = segments[..<nextUnsent].firstIndex(where: { $0.offset == offset }),
              segments[index].transmissions == 1 else { return }
        for later in index..<nextUnsent {
            segments[later].sentAt = nil
            segments[later].transmissions = 0
        }
        nextUnsent = index
    }

    /// The first hop's link has room again: sends what ``notSent(offset:)`` held back (and
    /// anything else the credit allows).
    package mutating func linkHasRoom(now: ContinuousClock.Instant) -> [Action] { pump(now: now) }

    /// Time passed: sends again what timed out, probes, or gives up.
    package mutating func timerFired(now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        // An open is bounded by its transmissions alone: the reader may not have a route back
        // yet (its first adverts still on their way), and each try waits longer.
        if state != .opening, now >= lastHeard + limits.peerTimeout {
            return fail(.timedOut, "no answer from the reader for \(limits.peerTimeout)")
        }
        if state != .opening, now >= lastProgress + limits.idleTimeout {
            return fail(.idle, "no byte moved for \(limits.idleTimeout)")
        }
        if let current = open {
            guard now >= current.sentAt + retransmissionTimeout else { return [] }
            guard current.transmissions < limits.maxTransmissions else {
                return fail(.timedOut, "no answer to the open after \(current.transmissions) tries")
            }
            open = (now, current.transmissions + 1)
            lastSent = now
            backOff()
            return [.send(.open(id: id, name: name))]
        }
        var actions: [Action] = []
        for index in 0..<nextUnsent {
            guard let sentAt = segments[index].sentAt, now >= sentAt + retransmissionTimeout else { continue }
            let segment = segments[index]
            guard segment.transmissions < limits.maxTransmissions else {
                return fail(.timedOut, "bytes at \(segment.offset) were not acknowledged after \(segment.transmissions) tries")
            }
            segments[index].sentAt = now
            segments[index].transmissions += 1
            actions.append(.send(.data(id: id, offset: segment.offset, bytes: segment.bytes, fin: segment.fin)))
        }
        if !actions.isEmpty {
            backOff()
            lastSent = now
        } else if nextUnsent == 0, now >= lastSent + limits.keepaliveInterval {
            // Nothing in flight: probe, so that the reader answers (liveness, a lost window update).
            lastSent = now
            let fin = finSent && segments.isEmpty
            actions.append(.send(.data(id: id, offset: sentEnd, bytes: Data(), fin: fin)))
        }
        return actions
    }

    // MARK: Internals

    /// Sends every unsent chunk the reader's credit allows, cutting one at the credit's end.
    private mutating func pump(now: ContinuousClock.Instant) -> [Action] {
        guard state == .open || state == .finishing else { return [] }
        var actions: [Action] = []
        while nextUnsent < segments.count {
            let segment = segments[nextUnsent]
            if segment.end > creditLimit {
                guard segment.offset < creditLimit else { break }
                let fit = Int(creditLimit - segment.offset)
                segments[nextUnsent] = Segment(offset: segment.offset, bytes: Data(segment.bytes.prefix(fit)), fin: false)
                segments.insert(Segment(offset: segment.offset + UInt64(fit), bytes: Data(segment.bytes.dropFirst(fit)), fin: segment.fin),
                                at: nextUnsent + 1)
            }
            segments[nextUnsent].sentAt = now
            segments[nextUnsent].transmissions = 1
            let sending = segments[nextUnsent]
            sentEnd = max(sentEnd, sending.end)
            if sending.fin { finSent = true }
            actions.append(.send(.data(id: id, offset: sending.offset, bytes: sending.bytes, fin: sending.fin)))
            nextUnsent += 1
            lastSent = now
        }
        return actions
    }

    private mutating func fail(_ code: StreamCloseCode, _ reason: String) -> [Action] {
        state = .closed
        segments = []
        nextUnsent = 0
        open = nil
        return [.send(.close(id: id, code: code, reason: reason, fromReader: false)), .failed(StreamError(code, reason))]
    }

    /// A loss doubles the timeout (up to its maximum).
    private mutating func backOff() {
        retransmissionTimeout = min(Self.maxRetransmissionTimeout, retransmissionTimeout * 2)
    }

    /// A round-trip sample sets the timeout to twice the smoothed round trip, within bounds.
    private mutating func measure(_ sample: Duration) {
        let smoothed = smoothedRoundTrip.map { ($0 * 7 + sample) / 8 } ?? sample
        smoothedRoundTrip = smoothed
        retransmissionTimeout = min(Self.maxRetransmissionTimeout, max(Self.minRetransmissionTimeout, smoothed * 2))
    }
}
