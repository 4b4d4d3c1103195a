import struct Foundation.Data


/// The receiving side of one resource transfer (PROTOCOL.md §16), as a value: no I/O, no clock.
///
/// Created from a validated offer (``ResourceOffer/init(validating:)``) that the shell decided to
/// accept. States: **receiving** (chunks are stored in any order within
/// ``window`` (``ResourceLimits/receiveWindow``) of the cumulative acknowledgement; every second chunk stored in
/// order, the last, and each chunk stored out of order or duplicate is acknowledged),
/// **verifying** (every chunk is stored; the shell hashes the `.part` file and calls
/// ``verified(sha256:)``), and **finished** (confirmed or failed).
///
/// A chunk out of range or of the wrong length cancels the transfer with `protocolViolation`; a
/// chunk past the window is dropped (the sender retransmits it); a duplicate is acknowledged again.
/// With no chunk for ``ResourceLimits/receiveIdleTimeout`` the transfer fails with `timedOut`;
/// while the sender is out of reach (``senderUnreachable(now:)``) that timeout is paused, for at most
/// ``ResourceLimits/unreachableTimeout``.
///
/// Resuming (PROTOCOL.md §16.4.2): ``init(restoring:offer:next:stored:incarnation:now:)`` rebuilds
/// the machine from the shell's state file after a restart, paused until the sender is reachable;
/// every acknowledgement carries the machine's `incarnation` (new at each load), which tells the
/// sender to go on from what this acknowledgement says is stored. A chunk past the window is
/// answered with an acknowledgement, so that a sender that did not see the restart learns it.
public struct ResourceReceiveStateMachine: Sendable {
    /// Where the transfer is.
    public enum State: Sendable, Hashable {
        /// Chunks are arriving.
        case receiving
        /// Every chunk is stored; the hash is being checked.
        case verifying
        /// Over (confirmed or failed).
        case finished
    }

    /// What the shell does after an input.
    public enum Action: Sendable, Hashable {
        /// Write chunk `index` at its offset in the `.part` file (before the acknowledgement that follows).
        case write(index: Int)
        /// Send an acknowledgement.
        case sendAck(ResourceAckPayload)
        /// Hash the `.part` file and call ``verified(sha256:)``.
        case verify
        /// Tell the sender the resource is stored and its hash matches.
        case sendDone(ResourceDonePayload)
        /// Tell the sender the transfer is over.
        case sendCancel(ResourceCancelCode, String)
        /// Bytes stored so far.
        case progress(UInt64)
        /// The sender went out of reach: the transfer waits (report it).
        case paused
        /// A route to the sender is back, or a chunk came: the transfer goes on (report it).
        case resumed
        /// The resource is complete and verified: move it into place. Comes before ``sendDone(_:)``; when
        /// placing fails, the shell sends `storageFailed` instead of the confirmation.
        case completed
        /// The transfer failed: remove the `.part` file.
        case failed(ResourceFailure)
        /// An input was dropped (for the log).
        case ignored(String)
    }

    /// The transfer id.
    public let id: ResourceID
    /// What was offered.
    public let offer: ResourceOffer
    /// Where the transfer is.
    public private(set) var state: State = .receiving
    /// Every chunk below this is stored.
    public private(set) var next = 0
    /// Chunks at or above ``next`` stored too.
    private var stored: Set<Int> = []
    private var lastHeard: ContinuousClock.Instant
    /// Since when the sender is out of reach, if it is.
    public private(set) var pausedSince: ContinuousClock.Instant?
    /// This load of the transfer, carried in every acknowledgement (never 0).
    public let incarnation: UInt64
    /// How far past ``next`` chunks are stored (PROTOCOL.md §16.4): a binding limit, whatever
    /// the sender does.
    public let window: Int

    /// Creates the receiver of an accepted offer; ``accept()`` answers the sender.
    /// - Parameters:
    ///   - id: the sender's transfer id.
    ///   - offer: the validated offer.
    ///   - incarnation: a random number other than 0, new for each load of a transfer.
    ///   - now: the time.
    ///   - window: how far past the cumulative acknowledgement chunks are stored.
    public init(id: ResourceID, offer: ResourceOffer, incarnation: UInt64, now: ContinuousClock.Instant,
                window: Int = ResourceLimits.receiveWindow) {
        self.id = id
        self.offer = offer
        self.incarnation = max(1, incarnation)
        self.lastHeard = now
        self.window = max(1, window)
    }

    /// Rebuilds the receiver of a transfer from its state file (PROTOCOL.md §16.4.2): paused until
    /// ``senderReachable(now:)``; when every chunk is stored, ``resume()`` asks for verification.
    /// - Parameters:
    ///   - id: the transfer id.
    ///   - offer: the offer as accepted.
    ///   - next: every chunk below this is stored (clamped to the chunk count).
    ///   - stored: chunks at or above `next` stored too (others are ignored).
    ///   - incarnation: a new random number other than 0.
    ///   - now: the time.
    public init(restoring id: ResourceID, offer: ResourceOffer, next: Int, stored: Set<Int>, incarnation: UInt64, now: ContinuousClock.Instant,
                window: Int = ResourceLimits.receiveWindow) {
        self.init(id: id, offer: offer, incarnation: incarnation, now: now, window: window)
        let count = offer.chunkCount
        self.next = min(max(0, next), count)
        self.stored = stored.filter { $0 >= self.next && $0 < min(count, self.next + self.window) }
        while self.stored.remove(self.next) != nil { self.next += 1 }
        self.pausedSince = now
        if self.next == count { state = .verifying }
    }

    /// Chunks stored at or above ``next``, in order (for the shell's state file).
    public var storedAhead: [Int] { stored.sorted() }

    /// After ``init(restoring:offer:next:stored:incarnation:now:)``: verification when every
    /// chunk is stored already, else nothing (the transfer waits for the sender).
    public mutating func resume() -> [Action] {
        state == .verifying ? [.verify] : []
    }

    /// When ``timerFired(now:)`` is next needed, or `nil`.
    public var nextDeadline: ContinuousClock.Instant? {
        guard state == .receiving else { return nil }
        return pausedSince.map { $0 + ResourceLimits.unreachableTimeout } ?? lastHeard + ResourceLimits.receiveIdleTimeout
    }

    /// Bytes stored so far.
    public var bytesStored: UInt64 {
        let whole = min(offer.size, offer.offset(ofChunk: next))
        return whole + stored.reduce(0) { $0 + UInt64(offer.length(ofChunk: $1)) }
    }

    // MARK: Inputs

    /// Accepts the offer: the first acknowledgement (and, for an empty resource, verification at once).
    public mutating func accept() -> [Action] {
        guard state == .receiving, next == 0, stored.isEmpty else { return [.ignored("already accepted")] }
        if offer.chunkCount == 0 {
            state = .verifying
            return [.sendAck(ack), .verify]
        }
        return [.sendAck(ack)]
    }

    /// The sender offered the same transfer again (its first acknowledgement was lost).
    public mutating func receivedOfferAgain() -> [Action] {
        state == .finished ? [.ignored("an offer after the end")] : [.sendAck(ack)]
    }

    /// A chunk arrived.
    /// - Parameters:
    ///   - index: its index.
    ///   - length: its byte count.
    ///   - now: the time.
    public mutating func receivedChunk(index: Int, length: Int, now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .finished:
            return [.ignored("a chunk after the end")]
        case .verifying:
            return [.sendAck(ack)]
        case .receiving:
            break
        }
        let count = offer.chunkCount
        guard index >= 0, index < count else {
            return fail(.protocolViolation, "chunk \(index) is out of range (the resource has \(count) chunks)")
        }
        guard length == offer.length(ofChunk: index) else {
            return fail(.protocolViolation, "chunk \(index) has \(length) bytes (\(offer.length(ofChunk: index)) expected)")
        }
        lastHeard = now
        let resumed: [Action] = pausedSince == nil ? [] : [.resumed]
        pausedSince = nil
        if index < next || stored.contains(index) { return resumed + [.sendAck(ack)] }
        guard index < next + window else {
            // A sender that did not see this receiver restart: tell it where to go on (§16.4.2).
            return resumed + [.sendAck(ack)]
        }
        let inOrder = index == next && stored.isEmpty
        stored.insert(index)
        while stored.remove(next) != nil { next += 1 }
        // §16.4: in-order chunks are acknowledged every second one (each acknowledgement is a sealed
        // packet, half the crypto of a chunk); out of order, after a pause and at the end, at once.
        let acknowledge = !inOrder || !resumed.isEmpty || next % 2 == 0 || next == count
        var actions: [Action] = resumed + [.write(index: index)] + (acknowledge ? [.sendAck(ack)] : []) + [.progress(bytesStored)]
        if next == count {
            state = .verifying
            actions.append(.verify)
        }
        return actions
    }

    /// The shell hashed the complete `.part` file.
    /// - Parameter sha256: the hash of what is stored.
    public mutating func verified(sha256: [UInt8]) -> [Action] {
        guard state == .verifying else { return [.ignored("a verification while not verifying")] }
        guard sha256.elementsEqual(offer.sha256) else {
            return fail(.hashMismatch, "the received content's SHA-256 differs from the offer's")
        }
        state = .finished
        var done = ResourceDonePayload()
        done.sha256 = offer.sha256
        // Placed on disk first (§16.5): the FileDone promises the resource is stored under its name.
        return [.completed, .sendDone(done)]
    }

    /// The sender abandoned the transfer.
    /// - Parameter cancel: its reason.
    public mutating func receivedCancel(_ cancel: ResourceCancelPayload) -> [Action] {
        guard state != .finished else { return [.ignored("a cancel after the end")] }
        state = .finished
        let reason = cancel.reason.isEmpty ? "\(ResourceCancelCode(wire: cancel.code))" : cancel.reason
        return [.failed(ResourceFailure(ResourceCancelCode(wire: cancel.code), reason, byPeer: true))]
    }

    /// This node gives the transfer up (writing failed, or the user cancelled).
    /// - Parameters:
    ///   - code: why.
    ///   - reason: for people.
    public mutating func cancel(_ code: ResourceCancelCode, _ reason: String) -> [Action] {
        guard state != .finished else { return [.ignored("already over")] }
        return fail(code, reason)
    }

    /// The sender is no longer reachable: the idle timeout pauses.
    /// - Parameter now: the time.
    /// - Returns: ``Action/paused`` when the transfer was running.
    public mutating func senderUnreachable(now: ContinuousClock.Instant) -> [Action] {
        guard state == .receiving, pausedSince == nil else { return [] }
        pausedSince = now
        return [.paused]
    }

    /// A route to the sender appeared (again): the idle timeout starts afresh, and an acknowledgement
    /// of what is stored goes out.
    /// - Parameter now: the time.
    /// - Returns: ``Action/resumed`` when the transfer was paused.
    public mutating func senderReachable(now: ContinuousClock.Instant) -> [Action] {
        guard state == .receiving, pausedSince != nil else { return [] }
        pausedSince = nil
        lastHeard = now
        // The acknowledgement tells a sender that kept running where to go on (§16.4.2).
        return [.resumed, .sendAck(ack)]
    }

    /// Time passed: gives up when the sender went quiet.
    /// - Parameter now: the time.
    public mutating func timerFired(now: ContinuousClock.Instant) -> [Action] {
        if state == .receiving, let pausedSince {
            guard now >= pausedSince + ResourceLimits.unreachableTimeout else { return [] }
            return fail(.timedOut, "the sender was out of reach for \(ResourceLimits.unreachableTimeout)")
        }
        guard state == .receiving, now >= lastHeard + ResourceLimits.receiveIdleTimeout else { return [] }
        return fail(.timedOut, "no chunk for \(ResourceLimits.receiveIdleTimeout)")
    }

    // MARK: Internals

    /// The acknowledgement of what is stored now (the shell sends it once for a batch of chunks
    /// whose acknowledgements it held back, §16.4).
    public var ack: ResourceAckPayload {
        var ack = ResourceAckPayload()
        ack.next = UInt32(next)
        ack.received = stored.sorted().map(UInt32.init)
        ack.incarnation = incarnation
        return ack
    }

    private mutating func fail(_ code: ResourceCancelCode, _ reason: String) -> [Action] {
        state = .finished
        return [.sendCancel(code, reason), .failed(ResourceFailure(code, reason))]
    }
}
