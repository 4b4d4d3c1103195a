import struct Foundation.Data
import Logging
import MeshTransport

/// The streams of one session (PROTOCOL.md §18): the actor shell around the per-stream state
/// machines, on the reserved channel ``ChannelID/streams``.
///
/// It decodes each sealed channel message, hands it to the stream's machine and executes the
/// actions: packets go to the mesh at once, in order, writers and `finish()` wait on
/// continuations, readers' chunks go to their ``MeshInputStream``. One timer drives the machines'
/// timers: it sleeps until the earliest deadline of any stream and is armed again when a nearer
/// one appears (no polling; none while no stream lives). Outbound packets are bounded by the protocol, not by a queue cap: each
/// stream emits at most its window in data plus a few control packets per input.
actor StreamShell {
    /// The most queued packets handled in one turn of the actor.
    static let maxBatch = 64

    private struct Outgoing {
        var machine: StreamSendStateMachine
        let peer: PeerID
        var opened: CheckedContinuation<Result<Void, StreamError>, Never>?
        var writer: CheckedContinuation<Result<Void, StreamError>, Never>?
        var finisher: CheckedContinuation<Result<Void, StreamError>, Never>?
    }

    private struct Incoming {
        var machine: StreamReceiveStateMachine
        let stream: MeshInputStream
    }

    private let channel: MeshChannel
    /// The session's clock: the machines' `now` and the ticker's wait (virtual on a test loop).
    private let clock: SessionClock
    private let localID: NodeID
    private let logger: Logger
    /// Limits of streams this node reads; set by ``accept(limits:)``.
    private var readLimits = StreamLimits()
    /// Streams offered to the application, once it accepts streams.
    private var accepting: EventQueue<MeshInputStream>?
    private var admission = StreamAdmission(limits: StreamLimits())
    private var outgoing: [StreamKey: Outgoing] = [:]
    private var incoming: [StreamKey: Incoming] = [:]
    private var recent = RecentlyClosedStreams()
    private var stopped = false
    /// Wakes the machines at their earliest deadline.
    private var timer = DeadlineTimer()
    /// Links that refused a packet and will say when they have room (each asked once).
    private var congestedLinks = CongestedLinks()
    /// Links that keep this turn's packets until its end (one hop to each link's loop per turn).
    private var kept = KeptSends()
    /// Readers given chunks this turn and not yet woken.
    private var fed: [StreamKey: MeshInputStream] = [:]
    /// Within ``received(_:)``: packets and chunks wait for the end of the batch.
    private var batching = false

    init(channel: MeshChannel, clock: SessionClock, localID: NodeID, logger: Logger) {
        self.channel = channel
        self.clock = clock
        self.localID = localID
        var logger = logger
        logger[metadataKey: "channel.id"] = "\(ChannelID.streams)"
        self.logger = logger
    }

    /// Reads the channel until it ends (the session disconnected); then ends every stream.
    nonisolated func run() {
        Task {
            for await message in channel.messages {
                // What arrived together is one actor hop, and one acknowledgement per stream.
                var batch = [message]
                while batch.count < Self.maxBatch, let more = channel.messages.poll() { batch.append(more) }
                await self.received(batch)
            }
            await self.stop()
        }
    }

    /// Arms the timer for the earliest deadline of any stream (none once stopped). Called at the
    /// end of every turn that may have changed a machine.
    private func rearm() {
        var earliest: ContinuousClock.Instant?
        if !stopped {
            for entry in outgoing.values { if let deadline = entry.machine.nextDeadline { earliest = min(earliest ?? deadline, deadline) } }
            for entry in incoming.values { if let deadline = entry.machine.nextDeadline { earliest = min(earliest ?? deadline, deadline) } }
        }
        timer.arm(for: earliest, clock: clock) { generation in await self.timerDue(generation) }
    }

    private func timerDue(_ generation: UInt64) {
        guard timer.take(generation) else { return }
        timerFired()
        rearm()
    }

    // MARK: Application inputs

    /// Starts accepting streams; returns the queue the application takes them from.
    func accept(limits: StreamLimits) -> EventQueue<MeshInputStream> {
        if let accepting { return accepting }
        readLimits = limits
        admission = StreamAdmission(limits: limits)
        let queue = EventQueue<MeshInputStream>(capacity: limits.pendingCapacity)
        if stopped { queue.finish() }
        accepting = queue
        return queue
    }

    /// Opens a stream and waits for the reader to accept it.
    func open(name: String, to peer: PeerID, limits: StreamLimits) async -> Result<MeshOutputStream, StreamError> {
        guard !stopped else { return .failure(StreamError(.closed, "the session stopped")) }
        var key = StreamKey(peer: peer.id, id: 0, reader: false)
        repeat { key.id = UInt64.random(in: 1...UInt64.max) } while outgoing[key] != nil
        let now = clock.now
        var machine = StreamSendStateMachine(id: key.id, name: name, limits: limits, now: now)
        let actions = machine.start(now: now)
        outgoing[key] = Outgoing(machine: machine, peer: peer)
        let result = await cancellable(key) {
            await withCheckedContinuation { continuation in
                outgoing[key]?.opened = continuation
                perform(actions, for: key)
            }
        }
        return result.map { MeshOutputStream(name: name, peer: peer, key: key, shell: self) }
    }

    func write(_ bytes: Data, to key: StreamKey) async throws(StreamError) {
        var rest = bytes[...]
        while true {
            guard var entry = outgoing[key] else { throw closedError(key) }
            guard entry.machine.state == .open else { throw StreamError(.cancelled, "a write after finish()") }
            // Slices, not copies: the machine keeps its chunks as slices of the application's bytes.
            let (taken, actions) = entry.machine.write(rest.prefix(entry.machine.writableBytes), now: clock.now)
            outgoing[key] = entry
            perform(actions, for: key)
            rest = rest.dropFirst(taken)
            if rest.isEmpty { return }
            guard outgoing[key] != nil else { throw closedError(key) }
            let outcome = await cancellable(key) {
                await withCheckedContinuation { continuation in
                    if outgoing[key]?.machine.writableBytes ?? 1 > 0 {
                        continuation.resume(returning: Result<Void, StreamError>.success(()))
                    } else {
                        outgoing[key]?.writer = continuation
                    }
                }
            }
            try outcome.get()
        }
    }

    func finish(_ key: StreamKey) async throws(StreamError) {
        guard var entry = outgoing[key] else { throw closedError(key) }
        guard entry.machine.state == .open else { throw StreamError(.cancelled, "finish() called twice") }
        let actions = entry.machine.finish(now: clock.now)
        outgoing[key] = entry
        let outcome = await cancellable(key) {
            await withCheckedContinuation { continuation in
                outgoing[key]?.finisher = continuation
                perform(actions, for: key)
            }
        }
        try outcome.get()
    }

    /// Runs a wait of an outgoing stream's application; cancelling the waiting task cancels the
    /// stream (the wait then ends with its `cancelled` error).
    private func cancellable<T: Sendable>(_ key: StreamKey, _ wait: () async -> T) async -> T {
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {
            Task { await self.cancel(key, reason: "the writing task was cancelled") }
        }
    }

    func cancel(_ key: StreamKey, reason: String) {
        if key.reader {
            onIncoming(key) { $0.cancel(.cancelled, reason) }
        } else {
            onOutgoing(key) { $0.cancel(.cancelled, reason) }
        }
    }

    func consumed(_ count: Int, of key: StreamKey) {
        onIncoming(key) { $0.consumed(count, now: clock.now) }
    }

    /// Bytes held by this node's streams, as the application-facing types cannot say (for tests):
    /// written and not acknowledged by outgoing streams, received and not read by incoming ones.
    var heldBytes: (outgoing: [UInt64], incoming: [Int]) {
        (outgoing.values.map(\.machine.heldBytes), incoming.values.map(\.machine.heldBytes))
    }

    // MARK: Network and timer inputs

    /// Packets that arrived together: each in order, then one acknowledgement for each stream
    /// whose data packets deferred theirs (§18.3).
    private func received(_ batch: [ChannelMessage]) {
        batching = true
        var owing: Set<StreamKey> = []
        for message in batch { received(message, owing: &owing) }
        let now = clock.now
        for key in owing { onIncoming(key) { $0.flushAck(now: now) } }
        batching = false
        endTurn()
    }

    /// What a turn's inputs produced leaves: the packets kept by the links go to their loops,
    /// and each reader given chunks is woken once (after all of them, not for each).
    private func endTurn() {
        kept.flush()
        guard !fed.isEmpty else { return }
        for stream in fed.values { stream.wake() }
        fed.removeAll(keepingCapacity: true)
    }

    private func received(_ message: ChannelMessage, owing: inout Set<StreamKey>) {
        guard message.delivery == .sealed else {
            logger.debug("stream packet broadcast, dropped", metadata: ["mesh.peer": "\(message.sender.id.shortHex)"])
            return
        }
        let packet: StreamPacket
        do {
            packet = try StreamWire.decode(message.payload)
        } catch {
            logger.debug("stream packet dropped", metadata: ["mesh.peer": "\(message.sender.id.shortHex)", "error": "\(error)"])
            return
        }
        let peer = message.sender
        let now = clock.now
        switch packet {
        case .open(let id, let name):
            let key = StreamKey(peer: peer.id, id: id, reader: true)
            if !onIncoming(key, { $0.receivedOpen(now: now) }), !answerLate(key, to: peer, now: now) {
                admit(key, name: name, from: peer, now: now)
            }
        case .data(let id, let offset, let bytes, let fin):
            let key = StreamKey(peer: peer.id, id: id, reader: true)
            if onIncoming(key, { $0.receivedData(offset: offset, bytes: bytes, fin: fin, now: now, deferringAck: true) }) {
                owing.insert(key)
            } else {
                answerUnknown(key, to: peer, now: now)
            }
        case .ack(let id, let offset, let window, let fin):
            let key = StreamKey(peer: peer.id, id: id, reader: false)
            if !onOutgoing(key, { $0.receivedAck(offset: offset, window: window, fin: fin, now: now) }) {
                answerUnknown(key, to: peer, now: now)
            }
        case .close(let id, let code, let reason, let fromReader):
            // A close is never answered (§18.5).
            let key = StreamKey(peer: peer.id, id: id, reader: !fromReader)
            if key.reader {
                onIncoming(key) { $0.receivedClose(code: code, reason: reason) }
            } else {
                onOutgoing(key) { $0.receivedClose(code: code, reason: reason) }
            }
        }
    }

    private func timerFired() {
        let now = clock.now
        for key in outgoing.keys where outgoing[key]?.machine.nextDeadline.map({ now >= $0 }) == true {
            onOutgoing(key) { $0.timerFired(now: now) }
        }
        for key in incoming.keys where incoming[key]?.machine.nextDeadline.map({ now >= $0 }) == true {
            onIncoming(key) { $0.timerFired(now: now) }
        }
    }

    /// The session stopped: every stream ends with `closed`, the queue of incoming streams ends.
    private func stop() {
        guard !stopped else { return }
        stopped = true
        for key in outgoing.keys { onOutgoing(key) { $0.cancel(.closed, "the session stopped") } }
        for key in incoming.keys { onIncoming(key) { $0.cancel(.closed, "the session stopped") } }
        accepting?.finish()
        rearm()
    }

    // MARK: Internals

    /// Runs an input on an outgoing stream's machine and carries out its actions.
    /// - Returns: `false` when there is no such stream.
    @discardableResult
    private func onOutgoing(_ key: StreamKey, _ input: (inout StreamSendStateMachine) -> [StreamSendStateMachine.Action]) -> Bool {
        guard var entry = outgoing[key] else { return false }
        let actions = input(&entry.machine)
        outgoing[key] = entry
        perform(actions, for: key)
        return true
    }

    /// Runs an input on an incoming stream's machine and carries out its actions.
    /// - Returns: `false` when there is no such stream.
    @discardableResult
    private func onIncoming(_ key: StreamKey, _ input: (inout StreamReceiveStateMachine) -> [StreamReceiveStateMachine.Action]) -> Bool {
        guard var entry = incoming[key] else { return false }
        let actions = input(&entry.machine)
        incoming[key] = entry
        perform(actions, for: key)
        return true
    }

    /// Answers a packet of a stream this node does not hold: how it ended, if recently, else
    /// `unknownStream` (§18.5).
    private func answerUnknown(_ key: StreamKey, to peer: PeerID, now: ContinuousClock.Instant) {
        if !answerLate(key, to: peer, now: now) { refuse(key, to: peer, .unknownStream, "no stream \(key.id) here") }
    }

    private func admit(_ key: StreamKey, name: String, from peer: PeerID, now: ContinuousClock.Instant) {
        guard let accepting, !stopped else {
            return refuse(key, to: peer, .refused, "this node does not accept streams")
        }
        let fromNode = incoming.keys.reduce(0) { $0 + ($1.peer == key.peer ? 1 : 0) }
        if let (code, reason) = admission.admit(key.peer, fromNode: fromNode, inAll: incoming.count, pending: accepting.count, now: now) {
            logger.debug("stream refused", metadata: ["mesh.peer": "\(key.peer.shortHex)", "stream.reason": "\(reason)"])
            return refuse(key, to: peer, code, reason)
        }
        let stream = MeshInputStream(name: name, peer: peer, key: key, shell: self)
        guard accepting.offer(stream) else {
            return refuse(key, to: peer, .busy, "streams wait for the application (limit \(readLimits.pendingCapacity))")
        }
        var machine = StreamReceiveStateMachine(id: key.id, limits: readLimits, now: now)
        let actions = machine.start()
        incoming[key] = Incoming(machine: machine, stream: stream)
        logger.debug("stream accepted", metadata: ["mesh.peer": "\(key.peer.shortHex)", "stream.id": "\(key.id)"])
        perform(actions, for: key)
    }

    /// Answers a packet of a stream that ended recently with how it ended; `false` when it did not.
    private func answerLate(_ key: StreamKey, to peer: PeerID, now: ContinuousClock.Instant) -> Bool {
        guard let code = recent.code(for: key, now: now) else { return false }
        send(.close(id: key.id, code: code, reason: "the stream is over", fromReader: key.reader), to: peer)
        return true
    }

    private func refuse(_ key: StreamKey, to peer: PeerID, _ code: StreamCloseCode, _ reason: String) {
        send(.close(id: key.id, code: code, reason: reason, fromReader: key.reader), to: peer)
    }

    /// Hands a packet to the mesh at once, in the order the machines made them: no task between
    /// (each one was a thread wake-up per packet on both ends of a stream). A neighbour's link
    /// admits it at once and keeps it until the end of the turn (``endTurn()``), so that a turn's
    /// packets reach the link's loop in one hop and leave in one write.
    /// - Returns: `false` when the first hop's link was congested and took nothing: the shell is
    ///   called back (``linkHasRoom()``) once it has room.
    @discardableResult
    private func send(_ packet: StreamPacket, to peer: PeerID) -> Bool {
        do {
            let outcome = try channel.sendNow(StreamWire.encode(packet), to: peer, deferringFlush: true)
            kept.note(outcome)
            return congestedLinks.sent(outcome) { [weak self] link in
                guard let self else { return }
                Task { await self.linkHasRoom(link) }
            }
        } catch {
            // Lost like any packet: the stream's retransmission and timeouts cover it.
            logger.trace("stream packet not sent", metadata: ["mesh.peer": "\(peer.id.shortHex)", "error": "\(error)"])
            return true
        }
    }

    /// A congested link has room again (or closed): every outgoing stream sends what it held
    /// back (a closed link's streams find their route, or time out).
    private func linkHasRoom(_ link: ObjectIdentifier) {
        congestedLinks.roomArrived(link)
        let now = clock.now
        for key in outgoing.keys { onOutgoing(key) { $0.linkHasRoom(now: now) } }
    }

    private func closedError(_ key: StreamKey) -> StreamError {
        let code = recent.code(for: key, now: clock.now) ?? .unknownStream
        return StreamError(code == .finished ? .cancelled : code, "the stream is over (\(code))")
    }

    private func perform(_ actions: [StreamSendStateMachine.Action], for key: StreamKey) {
        defer {
            rearm()
            if !batching { endTurn() }
        }
        guard let peer = outgoing[key]?.peer else { return }
        // After a data packet the link refused, the rest of this turn's data is not even tried.
        var heldBack = false
        for action in actions {
            switch action {
            case .send(let packet):
                guard case .data(_, let offset, _, _) = packet else {
                    send(packet, to: peer)
                    continue
                }
                if heldBack || !send(packet, to: peer) {
                    heldBack = true
                    outgoing[key]?.machine.notSent(offset: offset)
                }
            case .opened:
                outgoing[key]?.opened?.resume(returning: .success(()))
                outgoing[key]?.opened = nil
            case .writable:
                outgoing[key]?.writer?.resume(returning: .success(()))
                outgoing[key]?.writer = nil
            case .finished:
                end(key, .finished, nil)
            case .failed(let error):
                logger.debug("stream ended", metadata: ["mesh.peer": "\(key.peer.shortHex)", "stream.id": "\(key.id)", "error": "\(error)"])
                end(key, error.code, error)
            case .ignored(let why):
                logger.trace("stream input ignored", metadata: ["stream.id": "\(key.id)", "reason": "\(why)"])
            }
        }
    }

    private func end(_ key: StreamKey, _ code: StreamCloseCode, _ error: StreamError?) {
        guard let entry = outgoing.removeValue(forKey: key) else { return }
        recent.insert(key, code: code, now: clock.now)
        let result: Result<Void, StreamError> = error.map { .failure($0) } ?? .success(())
        entry.opened?.resume(returning: result)
        entry.writer?.resume(returning: error.map { .failure($0) } ?? .failure(StreamError(.cancelled, "the stream finished")))
        entry.finisher?.resume(returning: result)
    }

    private func perform(_ actions: [StreamReceiveStateMachine.Action], for key: StreamKey) {
        defer {
            rearm()
            if !batching { endTurn() }
        }
        guard let entry = incoming[key] else { return }
        for action in actions {
            switch action {
            case .send(let packet):
                send(packet, to: entry.stream.peer)
            case .deliver(let chunk):
                // Within a batch the reader is woken once, at its end.
                entry.stream.deliver(chunk, wake: !batching)
                if batching { fed[key] = entry.stream }
            case .end:
                entry.stream.end()
            case .completed:
                incoming[key] = nil
                recent.insert(key, code: .finished, now: clock.now)
            case .failed(let error):
                logger.debug("stream ended", metadata: ["mesh.peer": "\(key.peer.shortHex)", "stream.id": "\(key.id)", "error": "\(error)"])
                entry.stream.fail(error)
                incoming[key] = nil
                recent.insert(key, code: error.code, now: clock.now)
            case .ignored(let why):
                logger.trace("stream input ignored", metadata: ["stream.id": "\(key.id)", "reason": "\(why)"])
            }
        }
    }
}
