import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// Writes envelopes to one link with exact back-pressure (PROTOCOL.md §10).
///
/// Every write is counted as in flight until the socket has taken it (its write promise
/// completes). A writer that finds more than ``highWaterMark`` bytes in flight waits until
/// completions bring it under ``lowWaterMark``. Completions happen only when the link's event loop
/// runs its socket, so a sender can neither buffer without bound nor keep that loop from reading.
///
/// Writes made on the link's own event loop (the usual case when tasks run on SwiftNIO's loops)
/// are coalesced: they are queued without a flush or a promise, and one ``LinkHandler/Flush`` runs
/// when the writing task next suspends, so a burst of small messages leaves as one buffer in one
/// `write` (the handler seals them into one buffer), and its bytes are counted out together. A burst
/// that has gone on for 1 ms or 4 MiB without its flush running (the writing task never gave the
/// loop up) pauses the writer until the loop has polled its sockets (`WriteBurst`); a task that
/// sends a message and waits for the answer never pauses. Writes from other threads are written
/// and flushed one by one.
///
/// This type is thread-safe.
public final class LinkWriter: Sendable {
    /// Bytes in flight above which writers wait.
    public let highWaterMark: Int
    /// Bytes in flight at which waiting writers resume.
    public let lowWaterMark: Int
    /// How long a paused writer gives the loop: long enough that the loop polls before the pause
    /// ends (it runs ready tasks first), short enough not to idle a loop with nothing to read.
    static let pollPause = TimeAmount.microseconds(50)
    /// The bytes of packets relayed from one input link that may be in flight on this link (PROTOCOL.md
    /// §13.11): each input's share of this link's queue, whatever else is queued, so that an input
    /// that fills the link (a bulk sender, a flooder) waits for its own bytes to drain while another
    /// input's packets still go at once, and nothing relayed is dropped for congestion.
    public static let relayShare = 1 << 20
    /// The longest an input link is held for room here (PROTOCOL.md §13.11): a next hop that drains
    /// its share more slowly than this (half of 1 MiB in 500 ms: 1 MB/s) would otherwise stall
    /// everything else its input neighbour sends through this node. After it, that input's relayed
    /// packets for this link are dropped instead (``relayHoldExpired(for:)``) until its bytes here
    /// have drained to half its share.
    public static let relayHoldLimit = TimeAmount.milliseconds(500)

    private let channel: any Channel

    private struct State {
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// Called once when there is room again (or the link closed), for senders that do not wait.
        var roomCallbacks: [@Sendable () -> Void] = []
        var closed = false
        /// A flush is queued on the loop for writes made there.
        var flushQueued = false
        /// Bytes written on the loop since the last flush (counted out together when it completes).
        var unflushed = 0
        /// The writes on the loop since the last flush or pause.
        var burst = WriteBurst()
        /// Envelopes offered with `flush: false`, admitted and counted in flight, not yet handed
        /// to the loop (``flushOffers()``), and their bytes.
        var offered: [Envelope] = []
        var offeredBytes = 0
        /// A ``writeOffers()`` is queued on the loop.
        var offersQueued = false
        /// Bytes of packets relayed from each input link in flight here (``relay(_:size:from:)``).
        var relayed: [NodeID: Int] = [:]
        /// Called once when an input's relayed bytes here are down to half its share (or the link closed).
        var relayCallbacks: [NodeID: [@Sendable () -> Void]] = [:]
        /// Inputs whose hold timed out (``relayHoldExpired(for:)``): their relayed packets are dropped
        /// until their bytes here are down to half their share.
        var relayDropping: Set<NodeID> = []
        /// Relayed packets dropped that way (for tests and logs).
        var relayDropped = 0
    }

    private let state = NIOLockedValueBox(State())

    /// The link was closed; the message was not sent.
    public struct Closed: Error, CustomStringConvertible {
        /// "the link is closed".
        public var description: String { "the link is closed" }
    }

    /// Creates a writer for a link's channel.
    /// - Parameters:
    ///   - channel: the link's channel (its pipeline takes ``Envelope``s, and its ``LinkHandler``
    ///     carries out the ``LinkHandler/Flush`` that ends a burst of writes made on its loop).
    ///   - highWaterMark: bytes in flight above which writers wait.
    ///   - lowWaterMark: bytes in flight at which they resume.
    public init(channel: any Channel, highWaterMark: Int, lowWaterMark: Int) {
        self.channel = channel
        self.highWaterMark = highWaterMark
        self.lowWaterMark = lowWaterMark
        channel.closeFuture.whenComplete { [state] _ in
            let (waiters, callbacks) = state.withLockedValue { state in
                state.closed = true
                defer {
                    state.waiters = []
                    state.roomCallbacks = []
                    state.relayCallbacks = [:]
                }
                return (state.waiters, state.roomCallbacks + state.relayCallbacks.values.joined())
            }
            waiters.forEach { $0.resume(throwing: Closed()) }
            callbacks.forEach { $0() }
        }
    }

    /// Bytes written but not yet taken by the socket.
    public var bytesInFlight: Int { state.withLockedValue { $0.inFlight } }

    /// Queues an envelope, waiting first while too much is in flight.
    ///
    /// On the link's loop the write costs no promise: the burst's bytes are counted in flight at
    /// once, and one ``LinkHandler/Flush`` with one promise at the end of the burst sends them and
    /// counts them out when the socket has taken them all.
    /// - Parameters:
    ///   - envelope: the envelope.
    ///   - size: its approximate size on the wire, for the accounting.
    /// - Throws: ``Closed`` when the link is closed.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): a task that SwiftNIO's loop
    /// runs (the loop is its executor) writes without a hop to Swift's generic executor, which
    /// would re-enqueue the task on the loop for every message and end its burst.
    public nonisolated(nonsending) func write(_ envelope: Envelope, size: Int) async throws {
        var admitted = admit(size: size, onLoop: channel.eventLoop.inEventLoop, mayWait: true)
        if admitted == .wait {
            try await waitForRoom()
            // (The task may go on on another thread.)
            admitted = admit(size: size, onLoop: channel.eventLoop.inEventLoop, mayWait: false)
        }
        switch admitted {
        case .closed, .wait:
            throw Closed()
        case .writeAndFlush:
            channel.writeAndFlush(envelope).whenComplete(written(size))
            return
        case .write, .writeThenPause:
            channel.write(envelope, promise: nil)
        case .writeQueueFlush, .writeQueueFlushThenPause:
            channel.write(envelope, promise: nil)
            channel.eventLoop.execute { [self] in flushBurst() }
        }
        if admitted == .writeThenPause || admitted == .writeQueueFlushThenPause {
            // The queued flush runs first, then the loop polls (the pause is still running), then we go on.
            try? await channel.eventLoop.scheduleTask(in: Self.pollPause) {}.futureResult.get()
        }
    }

    /// Counts a write in (one lock): what to do with it. `mayWait`: `.wait` when too much is in
    /// flight (a writer that has waited once goes on regardless).
    private func admit(size: Int, onLoop: Bool, mayWait: Bool) -> Admission {
        let now: NIODeadline? = onLoop ? channel.eventLoop.now : nil
        return state.withLockedValue { state -> Admission in
            guard !state.closed else { return .closed }
            if mayWait, state.inFlight > highWaterMark { return .wait }
            state.inFlight += size
            guard let now else { return .writeAndFlush }
            state.unflushed += size
            let pause = state.burst.wrote(size, now: now)
            if state.flushQueued { return pause ? .writeThenPause : .write }
            state.flushQueued = true
            return pause ? .writeQueueFlushThenPause : .writeQueueFlush
        }
    }

    /// Ends a burst of writes made on the loop: one flush, one promise for all of them.
    private func flushBurst() {
        let bytes = state.withLockedValue { state -> Int in
            state.flushQueued = false
            // The writing task gave the loop up: its next write starts a new burst.
            state.burst.ended()
            defer { state.unflushed = 0 }
            return state.unflushed
        }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete(written(bytes))
        channel.triggerUserOutboundEvent(LinkHandler.Flush(), promise: promise)
    }

    /// Writes without waiting, for packets this node relays or originates on the mesh (PROTOCOL.md
    /// §13.2.7): a relay must never block on one slow link.
    /// - Parameters:
    ///   - envelope: the envelope.
    ///   - size: its approximate size on the wire, counted against the high-water mark.
    ///   - force: write even above the high-water mark (small control packets such as adverts).
    ///   - flush: `false` keeps the admitted envelope for ``flushOffers()``, which hands every
    ///     envelope kept so far to the loop at once: one hop to the loop, one flush and one
    ///     completion for all of them, instead of one each.
    /// - Returns: `false`, with nothing written, when the link is closed or its buffer is above the
    ///   high-water mark and `force` is not set.
    @discardableResult
    public func offer(_ envelope: Envelope, size: Int, force: Bool = false, flush: Bool = true) -> Bool {
        let admitted = state.withLockedValue { state -> Bool in
            guard !state.closed, force || state.inFlight <= highWaterMark else { return false }
            state.inFlight += size
            if !flush {
                state.offered.append(envelope)
                state.offeredBytes += size
            }
            return true
        }
        guard admitted else { return false }
        if flush { channel.writeAndFlush(envelope).whenComplete(written(size)) }
        return true
    }

    /// Hands the envelopes offered with `flush: false` to the link in one hop to its loop (none
    /// from the loop itself), in the order they were offered, then flushes: a burst of a shell's
    /// packets leaves in one `writev`. Does nothing when none waits, or when a hand-over is queued
    /// on the loop already (it takes whatever was offered by the time it runs).
    public func flushOffers() {
        let schedule = state.withLockedValue { state -> Bool in
            guard !state.offered.isEmpty, !state.offersQueued else { return false }
            state.offersQueued = true
            return true
        }
        guard schedule else { return }
        if channel.eventLoop.inEventLoop {
            writeOffers()
        } else {
            channel.eventLoop.execute { [self] in writeOffers() }
        }
    }

    /// On the loop: writes what was offered so far, in order (taken here, so that hand-overs
    /// queued from different threads cannot reorder it).
    private func writeOffers() {
        let (envelopes, bytes) = state.withLockedValue { state -> ([Envelope], Int) in
            state.offersQueued = false
            defer {
                state.offered = []
                state.offeredBytes = 0
            }
            return (state.offered, state.offeredBytes)
        }
        guard let last = envelopes.last else { return }
        for envelope in envelopes.dropLast() { channel.write(envelope, promise: nil) }
        // Writes complete in order: the last one's completion counts them all out.
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete(written(bytes))
        channel.writeAndFlush(last, promise: promise)
    }

    /// What may happen to a packet relayed from `source` now (``relayAdmission(for:orWhenRoom:)``).
    public enum RelayAdmission: Sendable, Hashable {
        /// Write it (``relay(_:size:from:)``).
        case now
        /// Hold the input link; the callback will be called once there is room.
        case wait
        /// Drop it: the input was held for ``LinkWriter/relayHoldLimit`` and its bytes here have not
        /// drained to half its share since (counted in ``relayDropped``).
        case drop
    }

    /// Whether a packet relayed from `source` may be written now, must wait (and then `callback` is
    /// called once, on whatever thread completes a write, when `source`'s relayed bytes here are down
    /// to half of ``relayShare`` or the link closed), or is dropped because an earlier hold of
    /// `source` timed out (``relayHoldExpired(for:)``).
    /// - Parameters:
    ///   - source: the neighbour whose link the packet came on.
    ///   - callback: what to call when there is room; it must not block.
    public func relayAdmission(for source: NodeID, orWhenRoom callback: @escaping @Sendable () -> Void) -> RelayAdmission {
        let (admission, early) = state.withLockedValue { state -> (RelayAdmission, (@Sendable () -> Void)?) in
            if state.closed || state.relayed[source, default: 0] < Self.relayShare { return (.now, nil) }
            if state.relayDropping.contains(source) {
                state.relayDropped += 1
                return (.drop, nil)
            }
            // One input link waits at a time; links of the same neighbour that closed while they
            // waited (a neighbour reconnecting fast) must not pile up here: past a few, the oldest is
            // called early, which is always safe (its link asks again, or is closed).
            var waiting = state.relayCallbacks[source, default: []]
            let evicted = waiting.count >= Self.maxRelayCallbacks ? waiting.removeFirst() : nil
            waiting.append(callback)
            state.relayCallbacks[source] = waiting
            return (.wait, evicted)
        }
        early?()
        return admission
    }

    /// The most callbacks held for one input (``relayAdmission(for:orWhenRoom:)``).
    public static let maxRelayCallbacks = 4

    /// `source`'s input link was held for ``relayHoldLimit`` without room here: until its relayed
    /// bytes here have drained to half its share, its packets for this link are dropped
    /// (``relayAdmission(for:orWhenRoom:)`` says ``RelayAdmission/drop``) and its link is read on.
    /// Does nothing when there is room by now.
    /// - Parameter source: the neighbour whose link was held.
    /// - Returns: whether `source` drops from now on (`false`: there was room, read on as usual).
    @discardableResult
    public func relayHoldExpired(for source: NodeID) -> Bool {
        state.withLockedValue { state in
            guard !state.closed, state.relayed[source, default: 0] >= Self.relayShare else { return false }
            state.relayDropping.insert(source)
            state.relayCallbacks[source] = nil
            return true
        }
    }

    /// Relayed packets dropped because their input's hold timed out (``relayHoldExpired(for:)``).
    public var relayDropped: Int { state.withLockedValue { $0.relayDropped } }

    /// Writes a packet relayed from another link without waiting, counted against its input's share
    /// (``relayAdmission(for:orWhenRoom:)``, which the caller asked first) and in ``bytesInFlight``.
    /// - Parameters:
    ///   - envelope: the envelope.
    ///   - size: its approximate size on the wire.
    ///   - source: the neighbour whose link it came on.
    /// - Returns: `false`, with nothing written, when the link is closed.
    @discardableResult
    public func relay(_ envelope: Envelope, size: Int, from source: NodeID) -> Bool {
        let admitted = state.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            state.inFlight += size
            state.relayed[source, default: 0] += size
            return true
        }
        guard admitted else { return false }
        let done = written(size)
        channel.writeAndFlush(envelope).whenComplete { [state] result in
            let callbacks = state.withLockedValue { state -> [@Sendable () -> Void] in
                let left = state.relayed[source, default: 0] - size
                state.relayed[source] = left > 0 ? left : nil
                if left <= Self.relayShare / 2 { state.relayDropping.remove(source) }
                guard left <= Self.relayShare / 2, let waiting = state.relayCallbacks.removeValue(forKey: source) else { return [] }
                return waiting
            }
            done(result)
            callbacks.forEach { $0() }
        }
        return true
    }

    /// Relayed bytes from `source` in flight on this link (for tests).
    public func relayedInFlight(from source: NodeID) -> Int { state.withLockedValue { $0.relayed[source, default: 0] } }

    /// Whether ``offer(_:size:force:)`` would take a message now: the link is open and at most
    /// ``highWaterMark`` bytes are in flight.
    public var hasRoom: Bool { state.withLockedValue { !$0.closed && $0.inFlight <= highWaterMark } }

    /// Calls `callback` once, on whatever thread completes a write, when writes have brought the bytes
    /// in flight down to ``lowWaterMark`` or the link closed; at once when there is room already
    /// (``hasRoom``). For senders that never wait (``offer(_:size:force:)``) and were refused.
    /// - Parameter callback: what to call; it must not block.
    public func whenRoom(_ callback: @escaping @Sendable () -> Void) {
        let now = state.withLockedValue { state -> Bool in
            if state.closed || state.inFlight <= highWaterMark { return true }
            state.roomCallbacks.append(callback)
            return false
        }
        if now { callback() }
    }

    /// What a finished write does: `size` bytes are no longer in flight, and waiting writers (and
    /// ``whenRoom(_:)`` callbacks) go on once the buffer is down to the low-water mark.
    private func written(_ size: Int) -> @Sendable (Result<Void, any Error>) -> Void {
        { [state, lowWaterMark] _ in
            let (ready, callbacks) = state.withLockedValue { state -> ([CheckedContinuation<Void, any Error>], [@Sendable () -> Void]) in
                state.inFlight -= size
                guard state.inFlight <= lowWaterMark, !state.waiters.isEmpty || !state.roomCallbacks.isEmpty else { return ([], []) }
                defer {
                    state.waiters = []
                    state.roomCallbacks = []
                }
                return (state.waiters, state.roomCallbacks)
            }
            ready.forEach { $0.resume() }
            callbacks.forEach { $0() }
        }
    }

    private enum Admission: Equatable {
        case closed
        case wait
        case writeAndFlush
        case write
        case writeThenPause
        case writeQueueFlush
        case writeQueueFlushThenPause
    }

    private nonisolated(nonsending) func waitForRoom() async throws {
        let mustWait = state.withLockedValue { state -> Bool? in
            if state.closed { return nil }
            return state.inFlight > highWaterMark
        }
        guard let mustWait else { throw Closed() }
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLockedValue { state -> Bool? in
                if state.closed { return nil }
                if state.inFlight <= lowWaterMark { return true }
                state.waiters.append(continuation)
                return false
            }
            switch outcome {
            case nil: continuation.resume(throwing: Closed())
            case true?: continuation.resume()
            case false?: break
            }
        }
    }
}
