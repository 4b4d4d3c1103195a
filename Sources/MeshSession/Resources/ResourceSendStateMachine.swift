import struct Foundation.Data


/// The sending side of one resource transfer (PROTOCOL.md §16), as a value: no I/O, no clock.
///
/// States: **offered** (the offer is out, retransmitted until the receiver's first
/// acknowledgement or a cancel), **sending** (chunks in flight, at most
/// ``window`` past the receiver's cumulative acknowledgement), **confirming**
/// (every chunk acknowledged; waiting for the receiver's `ResourceDone`, probing with the last chunk on
/// timeout) and **finished** (completed, refused, cancelled or timed out; every later input is
/// ignored).
///
/// Each input returns the actions for the shell, in order: send the offer, send (read and seal) a
/// chunk, send a cancel, report progress, report the end. A chunk not acknowledged within the
/// retransmission timeout is sent again; after ``ResourceLimits/maxTransmissions`` sends of the
/// same offer or chunk without an answer the transfer fails with `timedOut`. The timeout adapts to
/// the measured round trip (Karn: only chunks sent once are measured).
///
/// While the receiver is out of reach (``peerUnreachable(now:)``, or ``start(now:reachable:)`` with
/// no route: the route may be lost while the resource is hashed) the transfer is paused: nothing is
/// retransmitted and no try is counted, for at most ``ResourceLimits/unreachableTimeout``
/// (PROTOCOL.md §16.4.1). When a route reappears (``peerReachable(now:)``) the offer or the
/// confirmation probe is sent again; a transfer that was sending chunks forgets those in flight
/// and sends the offer as a probe (``isProbing``), and only the receiver's acknowledgement, which
/// says exactly what it stored, sends chunks again: nothing that arrived before the link went is
/// sent twice. Pausing and resuming are reported (``Action/paused``,
/// ``Action/resumed``) so that people see why nothing moves.
///
/// Resuming after a restart (PROTOCOL.md §16.4.2): a restarted sender creates the machine again
/// with the same id and offer, and its offer is answered by the receiver's acknowledgement of what
/// it holds; the transfer goes on from there. A restarted receiver answers with a new
/// `incarnation`: its state on disk may hold fewer chunks than it acknowledged before, so the
/// sender rewinds to that acknowledgement (what was acknowledged and is missing is sent again).
/// A confirmation with the right hash completes the transfer in any state (the receiver finished
/// before the sender restarted).
public struct ResourceSendStateMachine: Sendable {
    /// Where the transfer is.
    public enum State: Sendable, Hashable {
        /// The offer is out.
        case offered
        /// The receiver accepted; chunks flow.
        case sending
        /// Every chunk is acknowledged; waiting for the receiver's confirmation.
        case confirming
        /// Over (completed or failed).
        case finished
    }

    /// What the shell does after an input.
    public enum Action: Sendable, Hashable {
        /// Send the offer (again).
        case sendOffer(ResourceOfferPayload)
        /// Read chunk `index` of the resource and send it.
        case sendChunk(Int)
        /// Tell the receiver the transfer is over.
        case sendCancel(ResourceCancelCode, String)
        /// The receiver accepted the offer.
        case accepted
        /// Bytes acknowledged so far.
        case progress(UInt64)
        /// The receiver went out of reach: the transfer waits (report it).
        case paused
        /// A route to the receiver is back: the transfer goes on (report it).
        case resumed
        /// The receiver confirmed the resource: done.
        case completed
        /// The transfer failed.
        case failed(ResourceFailure)
        /// The receiver restarted (a new incarnation) and holds fewer chunks than it acknowledged
        /// before: the transfer goes on from chunk `next` (for the log).
        case rewound(Int)
        /// An input was dropped (for the log).
        case ignored(String)
    }

    /// The transfer id.
    public let id: ResourceID
    /// What is offered.
    public let offer: ResourceOffer
    /// Where the transfer is.
    public private(set) var state: State = .offered
    /// Every chunk below this is acknowledged.
    public private(set) var acknowledged = 0
    /// Chunks at or above ``acknowledged`` acknowledged selectively.
    private var selective: Set<Int> = []
    /// Chunks sent and not acknowledged: when last sent and how often.
    private var inFlight: [Int: (sentAt: ContinuousClock.Instant, transmissions: Int)] = [:]
    /// The lowest chunk never sent.
    private var nextUnsent = 0
    /// The offer's (or the confirming probe's) last send and count.
    private var probe: (sentAt: ContinuousClock.Instant, transmissions: Int)?
    private var smoothedRoundTrip: Duration?
    /// The receiver's incarnation in its latest acknowledgement (0: none seen yet).
    public private(set) var receiverIncarnation: UInt64 = 0
    /// Chunks sent in all (retransmissions included), for the shell's accounting.
    public private(set) var chunksSent = 0
    /// Since when the receiver is out of reach (the transfer is paused), if it is.
    public private(set) var pausedSince: ContinuousClock.Instant?
    /// The retransmission timeout now.
    public private(set) var retransmissionTimeout = ResourceLimits.initialRetransmissionTimeout
    /// Chunks in flight at most, and how far past ``acknowledged`` chunks are sent: the shell's
    /// choice for the path (``ResourceLimits/window`` through relays, ``ResourceLimits/directWindow(for:)``
    /// to a neighbour), never more than the receiver stores (PROTOCOL.md §16.4).
    public var window = ResourceLimits.window {
        didSet { window = min(max(1, window), ResourceLimits.receiveWindow) }
    }

    /// Creates the sender of one transfer; ``start(now:)`` sends the offer.
    /// - Parameters:
    ///   - id: a new random id.
    ///   - offer: the resource's name, size, hash and chunk size.
    public init(id: ResourceID, offer: ResourceOffer) {
        self.id = id
        self.offer = offer
    }

    /// Chunks sent and not yet acknowledged.
    public var chunksInFlight: Int { inFlight.count }

    /// Bytes the receiver acknowledged (cumulatively) so far.
    public var bytesAcknowledged: UInt64 { min(offer.size, offer.offset(ofChunk: acknowledged)) }

    /// When ``timerFired(now:)`` is next needed, or `nil`.
    public var nextDeadline: ContinuousClock.Instant? {
        if state != .finished, let pausedSince { return pausedSince + ResourceLimits.unreachableTimeout }
        switch state {
        case .offered, .confirming: return probe.map { $0.sentAt + retransmissionTimeout }
        case .sending:
            if let probe { return probe.sentAt + retransmissionTimeout }
            return inFlight.values.map(\.sentAt).min().map { $0 + retransmissionTimeout }
        case .finished: return nil
        }
    }

    // MARK: Inputs

    /// Sends the offer, or, when the receiver is out of reach, starts paused: the offer goes out
    /// when ``peerReachable(now:)`` says a route is back.
    /// - Parameters:
    ///   - now: the time.
    ///   - reachable: whether a route to the receiver exists now.
    public mutating func start(now: ContinuousClock.Instant, reachable: Bool = true) -> [Action] {
        guard state == .offered, probe == nil, pausedSince == nil else { return [.ignored("the transfer has already started")] }
        guard reachable else {
            pausedSince = now
            return [.paused]
        }
        probe = (now, 1)
        return [.sendOffer(offer.payload)]
    }

    /// The receiver acknowledged: the first acknowledgement accepts the offer.
    /// - Parameters:
    ///   - ack: the acknowledgement.
    ///   - now: the time.
    public mutating func receivedAck(_ ack: ResourceAckPayload, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch state {
        case .finished:
            return [.ignored("an acknowledgement after the end")]
        case .offered:
            state = .sending
            probe = nil
            actions.append(.accepted)
        case .sending:
            // The answer to the probe after a pause (§16.4.1): chunks go on from what it says.
            probe = nil
        case .confirming:
            break
        }
        let count = offer.chunkCount
        guard Int(ack.next) <= count, ack.received.allSatisfy({ Int($0) < count }) else {
            return actions + fail(.protocolViolation, "acknowledgement past the last chunk (\(ack.next) of \(count))")
        }
        if ack.incarnation != 0, ack.incarnation != receiverIncarnation {
            let rewind = receiverIncarnation != 0
            receiverIncarnation = ack.incarnation
            if rewind {
                // §16.4.2: the receiver restarted and holds exactly what this acknowledgement says.
                acknowledged = Int(ack.next)
                selective = Set(ack.received.map(Int.init).filter { $0 >= acknowledged })
                inFlight = [:]
                nextUnsent = acknowledged
                if state == .confirming, acknowledged < count {
                    state = .sending
                    probe = nil
                }
                actions.append(.rewound(Int(ack.next)))
            }
        }
        let before = acknowledged
        var sample: Duration?
        func settle(_ index: Int) {
            if let flight = inFlight.removeValue(forKey: index), flight.transmissions == 1 {
                let measured = now - flight.sentAt
                sample = max(sample ?? .zero, measured)
            }
        }
        if Int(ack.next) > acknowledged {
            for index in acknowledged..<Int(ack.next) { settle(index) }
            acknowledged = Int(ack.next)
            selective = selective.filter { $0 >= acknowledged }
        }
        for index in ack.received.map(Int.init) where index >= acknowledged && !selective.contains(index) {
            selective.insert(index)
            settle(index)
        }
        while selective.remove(acknowledged) != nil { acknowledged += 1 }
        if let sample { measure(sample) }
        if acknowledged > before { actions.append(.progress(min(offer.size, offer.offset(ofChunk: acknowledged)))) }
        if acknowledged == count {
            if state != .confirming {
                state = .confirming
                inFlight = [:]
                probe = (now, 0)
            }
            return actions
        }
        return actions + pump(now: now)
    }

    /// The mesh did not take a chunk this machine sent for the first time (its first hop's link
    /// was congested): it counts as unsent again and goes out on the next acknowledgement or
    /// ``linkHasRoom(now:)``, instead of after a retransmission timeout. A refused
    /// retransmission changes nothing (its timer still runs).
    public mutating func notSent(chunk index: Int) {
        guard state == .sending, let flight = inFlight[index], flight.transmissions == 1 else { return }
        inFlight[index] = nil
        chunksSent -= 1
        nextUnsent = min(nextUnsent, index)
    }

    /// The first hop's link has room again: sends what ``notSent(chunk:)`` held back.
    public mutating func linkHasRoom(now: ContinuousClock.Instant) -> [Action] {
        guard state == .sending, pausedSince == nil, probe == nil else { return [] }
        return pump(now: now)
    }

    /// Sends every chunk the window allows that is neither in flight nor acknowledged.
    private mutating func pump(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        nextUnsent = max(nextUnsent, acknowledged)
        let end = min(offer.chunkCount, acknowledged + window)
        while nextUnsent < end {
            if !selective.contains(nextUnsent), inFlight[nextUnsent] == nil {
                inFlight[nextUnsent] = (now, 1)
                chunksSent += 1
                actions.append(.sendChunk(nextUnsent))
            }
            nextUnsent += 1
        }
        return actions
    }

    /// The receiver stored the resource and sent the hash it computed.
    /// - Parameter done: its confirmation.
    public mutating func receivedDone(_ done: ResourceDonePayload) -> [Action] {
        switch state {
        case .finished:
            return [.ignored("a confirmation after the end")]
        case .offered, .sending, .confirming:
            // In .offered: the receiver finished before this sender restarted (§16.4.2).
            guard done.sha256 == offer.sha256 else {
                return fail(.hashMismatch, "the receiver's SHA-256 differs from the resource's")
            }
            if state == .sending, acknowledged != offer.chunkCount {
                // The last acknowledgements were lost; the confirmation covers every chunk.
                acknowledged = offer.chunkCount
            }
            state = .finished
            inFlight = [:]
            probe = nil
            return [.progress(offer.size), .completed]
        }
    }

    /// The receiver refused or abandoned the transfer.
    /// - Parameter cancel: its reason.
    public mutating func receivedCancel(_ cancel: ResourceCancelPayload) -> [Action] {
        guard state != .finished else { return [.ignored("a cancel after the end")] }
        finish()
        let reason = cancel.reason.isEmpty ? "\(ResourceCancelCode(wire: cancel.code))" : cancel.reason
        return [.failed(ResourceFailure(ResourceCancelCode(wire: cancel.code), reason, byPeer: true))]
    }

    /// This node gives the transfer up (the user cancelled, or the resource cannot be read).
    /// - Parameters:
    ///   - code: why.
    ///   - reason: for people.
    public mutating func cancel(_ code: ResourceCancelCode, _ reason: String) -> [Action] {
        guard state != .finished else { return [.ignored("already over")] }
        return fail(code, reason)
    }

    /// The receiver is no longer reachable: pause (no retransmissions, no tries counted).
    /// - Parameter now: the time.
    public mutating func peerUnreachable(now: ContinuousClock.Instant) -> [Action] {
        guard state != .finished, pausedSince == nil else { return [] }
        pausedSince = now
        return [.paused]
    }

    /// A route to the receiver appeared (again): a paused transfer resumes by sending again what
    /// waits for an answer. Route changes of a transfer that is not paused change nothing.
    /// - Parameter now: the time.
    public mutating func peerReachable(now: ContinuousClock.Instant) -> [Action] {
        guard state != .finished, pausedSince != nil else { return [] }
        pausedSince = nil
        retransmissionTimeout = smoothedRoundTrip.map {
            min(ResourceLimits.maxRetransmissionTimeout, max(ResourceLimits.minRetransmissionTimeout, $0 * 2))
        } ?? ResourceLimits.initialRetransmissionTimeout
        switch state {
        case .offered:
            probe = (now, 1)
            return [.resumed, .sendOffer(offer.payload)]
        case .confirming:
            probe = (now, 1)
            if offer.chunkCount > 0 { chunksSent += 1 }
            return [.resumed, offer.chunkCount == 0 ? .sendOffer(offer.payload) : .sendChunk(offer.chunkCount - 1)]
        case .sending:
            // §16.4.1: nothing is sent again before the receiver says what it holds. The chunks
            // in flight may have arrived before the link went, or have been lost with it: the
            // offer, sent again, is answered with the receiver's acknowledgement (as is the
            // route's return, by the receiver), and that is what the chunks go on from.
            inFlight = [:]
            nextUnsent = acknowledged
            probe = (now, 1)
            return [.resumed, .sendOffer(offer.payload)]
        case .finished:
            return []
        }
    }

    /// Whether the transfer waits, after a pause, for the acknowledgement that says what the
    /// receiver holds (PROTOCOL.md §16.4.1) before it sends chunks again.
    public var isProbing: Bool { state == .sending && probe != nil }

    /// Time passed: retransmits what timed out, or gives up.
    /// - Parameter now: the time.
    public mutating func timerFired(now: ContinuousClock.Instant) -> [Action] {
        if state != .finished, let pausedSince {
            guard now >= pausedSince + ResourceLimits.unreachableTimeout else { return [] }
            return fail(.timedOut, "the receiver was out of reach for \(ResourceLimits.unreachableTimeout)")
        }
        switch state {
        case .finished:
            return []
        case .offered, .confirming,
             .sending where probe != nil:
            guard let current = probe, now >= current.sentAt + retransmissionTimeout else { return [] }
            let what = state == .confirming ? "the confirmation" : "the offer"
            guard current.transmissions < ResourceLimits.maxTransmissions else {
                return fail(.timedOut, "no answer to \(what) after \(current.transmissions) tries")
            }
            probe = (now, current.transmissions + 1)
            backOff()
            if state != .confirming { return [.sendOffer(offer.payload)] }
            if offer.chunkCount > 0 { chunksSent += 1 }
            return offer.chunkCount == 0 ? [.sendOffer(offer.payload)] : [.sendChunk(offer.chunkCount - 1)]
        case .sending:
            var actions: [Action] = []
            let due = inFlight.filter { now >= $0.value.sentAt + retransmissionTimeout }.keys.sorted()
            guard !due.isEmpty else { return [] }
            for index in due {
                guard let flight = inFlight[index] else { continue }
                guard flight.transmissions < ResourceLimits.maxTransmissions else {
                    return fail(.timedOut, "chunk \(index) was not acknowledged after \(flight.transmissions) tries")
                }
                inFlight[index] = (now, flight.transmissions + 1)
                chunksSent += 1
                actions.append(.sendChunk(index))
            }
            backOff()
            return actions
        }
    }

    // MARK: Internals

    private mutating func fail(_ code: ResourceCancelCode, _ reason: String) -> [Action] {
        finish()
        return [.sendCancel(code, reason), .failed(ResourceFailure(code, reason))]
    }

    private mutating func finish() {
        state = .finished
        pausedSince = nil
        inFlight = [:]
        probe = nil
    }

    /// A loss doubles the timeout (up to its maximum), as TCP does.
    private mutating func backOff() {
        retransmissionTimeout = min(ResourceLimits.maxRetransmissionTimeout, retransmissionTimeout * 2)
    }

    /// A round-trip sample sets the timeout to twice the smoothed round trip, within bounds.
    private mutating func measure(_ sample: Duration) {
        let smoothed = smoothedRoundTrip.map { ($0 * 7 + sample) / 8 } ?? sample
        smoothedRoundTrip = smoothed
        retransmissionTimeout = min(ResourceLimits.maxRetransmissionTimeout,
                                    max(ResourceLimits.minRetransmissionTimeout, smoothed * 2))
    }
}
