import Crypto
import Foundation
import Logging
import MeshTransport
import MeshWire

/// The session's resource shell (PROTOCOL.md §16): the I/O around ``ResourceSendStateMachine``
/// and ``ResourceReceiveStateMachine``, on channel ``ChannelID/resources``.
///
/// Outgoing: ``send(path:name:to:)`` hashes a file, records the transfer in the journal and
/// offers it; chunks, sealed end to end, flow within a window and are retransmitted on timeout.
/// Incoming: offers pass the policy (``ResourceConfiguration``); an accepted resource is written
/// to a `.part` file in the resource directory, its state checkpointed beside it, and moved to
/// `received/` once its SHA-256 matches. Both sides survive a restart: ``run(session:)`` loads the
/// journal first (``ResourceJournal``), and the transfers resume from what the receiver holds.
///
/// Timers run on one ``DeadlineTimer`` armed for the earliest deadline (a retransmission, a
/// checkpoint, an offer's answer); reachability is checked when the session's routes change
/// (``routesChanged()``): a transfer whose peer has no route pauses, and resumes when one appears.
/// Nothing polls. This type is thread-safe (an actor).
actor ResourceTransfers {
    /// What the shell reports to the application (``Session/resourceEvents``).
    nonisolated let events: EventQueue<ResourceEvent>
    /// The journal, or `nil` when resources are off (no directory).
    nonisolated let journal: ResourceJournal?
    let configuration: ResourceConfiguration
    let logger: Logger
    /// The session's clock: the machines' `now` and the timer's wait (virtual on a test loop).
    let clock: SessionClock
    /// Wakes the transfers at their earliest deadline, while ``run(session:)`` runs.
    private var timer = DeadlineTimer()
    private var serving = false
    weak var session: Session?
    var channel: MeshChannel?
    var outgoing: [ResourceID: Outgoing] = [:]
    /// Links that refused a chunk and will say when they have room (each asked once).
    private var congestedLinks = CongestedLinks()
    /// Links keeping chunks this turn sent, handed over at its end (``flushKept()``).
    private var kept = KeptSends()
    var incoming: [Key: Incoming] = [:]
    /// Offers waiting for the application's answer.
    var pending: [Key: Pending] = [:]
    /// Finished incoming transfers: the confirmation to repeat to a sender that did not hear it.
    var finished: [Key: (done: ResourceDonePayload?, until: ContinuousClock.Instant)] = [:]
    /// The checkpoint task's queue (``requestCheckpoint(_:)``), while ``run(session:)`` runs.
    var checkpoints: AsyncStream<Key>.Continuation?
    /// Chunk bytes sent, retransmissions included (tests and benchmarks: ≤ 1.1 × the size).
    private(set) var chunkBytesSent: UInt64 = 0
    /// Within a batch of messages (``received(_:)``): acknowledgements of chunks, and chunks the
    /// links keep, wait for its end.
    var batching = false
    /// Incoming transfers whose chunk acknowledgements wait for the end of the batch.
    var owedAcks: Set<Key> = []
    /// Incoming transfers with chunks written and not hashed yet (``InOrderDigest/pending``).
    var undigested: Set<Key> = []
    /// Messages taken from the channel at once, at most: one actor hop, one acknowledgement per
    /// transfer (§16.4).
    static let maxBatch = 64

    struct Key: Hashable { var peer: NodeID; var id: ResourceID }

    struct Outgoing {
        var machine: ResourceSendStateMachine
        var peer: PeerID
        var handle: FileHandle
        /// The source's modification time when it was offered (nanoseconds): a chunk is read
        /// only while the file still has it and the offered size, so that a receiver never gets
        /// a mix of two versions (PROTOCOL.md §16.4.2).
        var modified: Int64
        var progress: ResourceProgress
        var reachable: Bool
        var lastProgress: ContinuousClock.Instant?
    }

    struct Incoming {
        var machine: ResourceReceiveStateMachine
        var peer: PeerID
        var handle: FileHandle
        var record: ResourceJournal.Incoming
        var progress: ResourceProgress
        var reachable: Bool
        var lastProgress: ContinuousClock.Instant?
        var checkpointedAt: ContinuousClock.Instant
        var unsaved = 0
        /// A checkpoint was asked of the checkpoint task and not taken yet.
        var checkpointQueued = false
        /// The SHA-256 of the chunks written so far, while they came in order from the first
        /// (§16.5): the verification then needs no read of the file. `nil` once a chunk came out
        /// of order, and for a transfer restored from disk; the file is hashed then.
        var digest: InOrderDigest?
    }

    /// The hash of a resource's chunks written in order from the first.
    struct InOrderDigest {
        /// Hashes them off the event loop, in order.
        let digest = ResourceDigest()
        /// Chunks taken (hashed, queued or waiting to be): the next one in order is this index.
        var chunks = 0
        /// Chunks taken and not queued yet: queued after the acknowledgement of their batch has
        /// gone (``ResourceTransfers/hashWritten(_:)``).
        var pending: [Data] = []

        /// Takes chunk `index` if it is the next in order.
        /// - Returns: `false` when it is not (the in-order hash is then given up).
        mutating func take(_ index: Int, _ data: Data) -> Bool {
            guard index == chunks else { return false }
            pending.append(data)
            chunks += 1
            return true
        }

        /// Queues the chunks taken so far for hashing.
        /// - Returns: `false` when the hash lags by more than ``ResourceDigest/maxQueuedBytes``.
        mutating func queuePending() -> Bool {
            defer { pending.removeAll(keepingCapacity: true) }
            return digest.submit(pending)
        }
    }

    struct Pending {
        var request: ResourceOfferRequest
        var offer: ResourceOffer
        var until: ContinuousClock.Instant
    }

    /// The limits of channel 17: chunks are large and many, so the rate is far above the default.
    static var channelLimits: ChannelLimits {
        var limits = ChannelLimits()
        limits.messagesPerSecond = 16_000
        limits.burst = 32_000
        limits.inboundCapacity = 1_024
        limits.maxBroadcastSize = 1
        limits.directToNeighbours = true
        // Chunks are written from the delivered record (ResourceWire.plainChunk): no copy first.
        limits.deliversSlices = true
        return limits
    }

    init(directory: String?, configuration: ResourceConfiguration, clock: SessionClock, logger: Logger) {
        self.journal = directory.map(ResourceJournal.init(directory:))
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.events = EventQueue(capacity: 1_024)
    }

    // MARK: Running

    /// Registers channel 17, loads the journal (transfers of an earlier run resume), then reads
    /// the channel and drives the timers until cancelled; then checkpoints what is running.
    func run(session: Session) async {
        self.session = session
        let channel: MeshChannel
        do {
            channel = try session.register(channel: .resources, limits: Self.channelLimits)
        } catch {
            logger.error("resources are off: cannot register channel 17: \(error)")
            return
        }
        self.channel = channel
        await load()
        serving = true
        let (requests, checkpoints) = AsyncStream.makeStream(of: Key.self)
        self.checkpoints = checkpoints
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await message in channel.messages {
                    // What arrived together is one actor hop, and one acknowledgement per transfer.
                    var batch = [message]
                    while batch.count < Self.maxBatch, let more = channel.messages.poll() { batch.append(more) }
                    await self.received(batch)
                }
            }
            // Checkpoints sync the .part file and write the record on NIO's blocking pool, one at
            // a time, while the shell goes on with chunks (an fsync costs tens of milliseconds).
            group.addTask {
                for await key in requests { await self.checkpoint(key) }
            }
            // Restored transfers whose peers are reachable already go on; the rest wait for a route.
            await self.timersFired(now: self.clock.now)
        }
        serving = false
        timer.cancel()
        suspendAll()
        events.finish()
    }

    /// The transfers running now, outgoing first.
    var running: [ResourceProgress] {
        outgoing.values.map(\.progress).sorted { $0.name < $1.name } + incoming.values.map(\.progress).sorted { $0.name < $1.name }
    }

    // MARK: Sending

    /// Offers a file to a peer: checks it, hashes it, records the transfer and sends the offer.
    func send(path: String, name: String, to peer: PeerID) async throws(SessionError) -> ResourceProgress {
        guard let journal else { throw .resourcesUnavailable() }
        let nameBytes = name.utf8.count
        guard (1...ResourceLimits.maxOfferedNameBytes).contains(nameBytes) else {
            throw .invalidResource("a name of \(nameBytes) bytes (1 to \(ResourceLimits.maxOfferedNameBytes) allowed)")
        }
        let handle: FileHandle, size: UInt64
        do {
            (handle, size) = try ResourceStorage.openForReading(path)
        } catch {
            throw .invalidResource(error.message)
        }
        guard size <= ResourceLimits.maxSize else {
            throw .invalidResource("\(path) has \(size) bytes, over the limit of \(ResourceLimits.maxSize) bytes")
        }
        guard let stamp = ResourceStorage.stamp(path) else { throw .invalidResource("cannot read \(path)") }
        try checkOutgoingLimits(to: peer)
        let hash: [UInt8]
        do {
            hash = try await EventLoops.runBlocking { try ResourceStorage.sha256(handle, size: size) }
        } catch {
            throw .invalidResource("cannot read \(path): \(error)")
        }
        // Another send may have started while this one hashed (the actor is re-entrant).
        try checkOutgoingLimits(to: peer)
        let offer = ResourceOffer(name: name, size: size, sha256: Data(hash))
        let id = ResourceID.random()
        let record = ResourceJournal.Outgoing(id: id.hex, peer: peer.id.hex, peerName: peer.displayName, path: path, name: name,
                                              size: size, modified: stamp.modified, sha256: offer.sha256.hexString, chunkSize: offer.chunkSize)
        do {
            try journal.prepare()
            try journal.save(record)
        } catch {
            throw .invalidResource("cannot record the transfer: \(error.message)")
        }
        let progress = makeProgress(id, .outgoing, peer, offer, bytes: 0)
        var machine = ResourceSendStateMachine(id: id, offer: offer)
        machine.window = session?.neighbourWriter(peer.id) != nil ? ResourceLimits.directWindow(for: offer) : ResourceLimits.window
        // The route is looked up after hashing: a relay may have gone away meanwhile.
        let reachable = isReachable(peer.id)
        let actions = machine.start(now: clock.now, reachable: reachable)
        outgoing[id] = Outgoing(machine: machine, peer: peer, handle: handle, modified: stamp.modified, progress: progress,
                                reachable: reachable)
        logger.info("offering a resource", metadata: ["mesh.peer": "\(peer.id.shortHex)", "resource.id": "\(id.shortHex)", "resource.size": "\(size)"])
        await perform(actions, outgoing: id)
        return progress
    }

    /// Throws when another outgoing transfer would break a limit (per peer, or in all).
    private func checkOutgoingLimits(to peer: PeerID) throws(SessionError) {
        let toPeer = outgoing.values.filter { $0.peer.id == peer.id }.count
        guard toPeer < ResourceLimits.maxOutgoingPerPeer else {
            throw .invalidResource("already \(toPeer) resources on their way to \(peer.displayName) (at most \(ResourceLimits.maxOutgoingPerPeer) at once)")
        }
        guard outgoing.count < ResourceLimits.maxOutgoingTransfers else {
            throw .invalidResource("already \(outgoing.count) resources on their way (at most \(ResourceLimits.maxOutgoingTransfers) at once)")
        }
    }

    /// Gives up a running transfer, in either direction.
    func cancel(_ id: ResourceID, peer: NodeID) async {
        if var transfer = outgoing[id], transfer.peer.id == peer {
            let actions = transfer.machine.cancel(.cancelled, "the sender cancelled")
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
        } else if var transfer = incoming[Key(peer: peer, id: id)] {
            let actions = transfer.machine.cancel(.cancelled, "the receiver cancelled")
            incoming[Key(peer: peer, id: id)] = transfer
            await perform(actions, incoming: Key(peer: peer, id: id), chunk: nil)
        }
    }

    func makeProgress(_ id: ResourceID, _ direction: ResourceProgress.Direction, _ peer: PeerID, _ offer: ResourceOffer, bytes: UInt64) -> ResourceProgress {
        ResourceProgress(id: id, direction: direction, peer: peer, offer: offer, bytes: bytes) { [weak self] id, node in
            await self?.cancel(id, peer: node)
        }
    }

    func isReachable(_ node: NodeID) -> Bool { session?.mesh.route(to: node) != nil }

    /// The chunks a transfer keeps in flight on its path now (PROTOCOL.md §16.4): to a neighbour
    /// (the chunks ride its link, §6.3, which holds back what it cannot take) a sixteenth of the
    /// resource within the receiver's window; through relays, whose link queues must not be
    /// flooded, ``ResourceLimits/window``.
    func pathWindow(_ transfer: Outgoing) -> Int {
        session?.neighbourWriter(transfer.peer.id) != nil ? ResourceLimits.directWindow(for: transfer.machine.offer) : ResourceLimits.window
    }

    // MARK: Inputs

    /// Messages that arrived together: each in order, then one acknowledgement for each transfer
    /// whose chunks held theirs back (§16.4), then the in-order hash of the chunks written.
    func received(_ batch: [ChannelMessage]) async {
        batching = true
        for message in batch { await received(message) }
        batching = false
        await endBatch()
    }

    /// Sends the acknowledgements the batch held back (each says what is stored now), then hashes
    /// what it wrote: the sender does not wait for the hash.
    func endBatch() async {
        flushKept()
        for key in owedAcks { await sendOwedAck(key) }
        await hashWritten()
    }

    /// Sends the acknowledgement a batch held back for a transfer, if it did.
    func sendOwedAck(_ key: Key) async {
        guard owedAcks.remove(key) != nil, let transfer = incoming[key], transfer.machine.state != .finished else { return }
        await send(.ack(transfer.machine.ack), id: key.id, to: transfer.peer)
    }

    /// Queues the chunks written in order and not hashed yet, of one transfer or of all, for
    /// hashing off the loop; waits while a hash lags too far behind (the link waits meanwhile).
    func hashWritten(_ only: Key? = nil) async {
        for key in only.map({ [$0] }) ?? Array(undigested) {
            guard undigested.remove(key) != nil, let within = incoming[key]?.digest?.queuePending() else { continue }
            if !within, let digest = incoming[key]?.digest?.digest { await digest.drained() }
        }
    }

    /// A message on channel 17. Malformed or unexpected messages are logged and answered or
    /// dropped as PROTOCOL.md §16 says; nothing traps.
    func received(_ channelMessage: ChannelMessage) async {
        let sender = channelMessage.sender
        guard channelMessage.delivery == .sealed else {
            logger.debug("ignored a broadcast resource message", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
            return
        }
        if let plain = ResourceWire.plainChunk(in: channelMessage.payload), let id = ResourceID(bytes: plain.transferID) {
            // The hot path: the chunk's data stays a slice of the delivered record until written.
            var chunk = ResourceChunkPayload()
            chunk.index = plain.index
            chunk.data = plain.data
            await received(chunk, key: Key(peer: sender.id, id: id), from: sender)
            return
        }
        let message: ResourceMessagePayload
        do {
            message = try ResourceMessagePayload(decoding: channelMessage.payload, what: "resource message")
        } catch {
            logger.notice("dropped a malformed resource message: \(error)", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
            return
        }
        guard let id = ResourceID(bytes: message.transferID) else {
            logger.notice("dropped a resource message: transfer id of \(message.transferID.count) bytes", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
            return
        }
        let key = Key(peer: sender.id, id: id)
        switch message.body {
        case .offer(let offer):
            await received(offer, key: key, from: sender)
        case .chunk(let chunk):
            await received(chunk, key: key, from: sender)
        case .ack(let ack):
            await toOutgoing(id, from: sender, "an acknowledgement") { $0.receivedAck(ack, now: clock.now) }
        case .done(let done):
            await toOutgoing(id, from: sender, "a confirmation") { $0.receivedDone(done) }
        case .cancel(let cancel):
            if let transfer = outgoing[id], transfer.peer.id == sender.id {
                await toOutgoing(id, from: sender, "a cancel") { $0.receivedCancel(cancel) }
            } else if var transfer = incoming[key] {
                let actions = transfer.machine.receivedCancel(cancel)
                incoming[key] = transfer
                await perform(actions, incoming: key, chunk: nil)
            } else if pending.removeValue(forKey: key) != nil {
                logger.debug("the sender withdrew an offer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(id.shortHex)"])
            } else {
                logger.debug("ignored a cancel of an unknown resource transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(id.shortHex)"])
            }
        case nil:
            logger.debug("ignored a resource message of an unknown kind (a newer peer's)", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
        }
    }

    /// A chunk (PROTOCOL.md §16.3), however it was decoded.
    private func received(_ chunk: ResourceChunkPayload, key: Key, from sender: PeerID) async {
        let id = key.id
        if var transfer = incoming[key] {
            let actions = transfer.machine.receivedChunk(index: Int(chunk.index), length: chunk.data.count, now: clock.now)
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: chunk)
            // Hashed after the acknowledgement has gone (in a batch, at its end).
            if !batching { await hashWritten(key) }
        } else if let memory = finished[key] {
            if let done = memory.done { await send(.done(done), id: id, to: sender) }
        } else if let done = recordedDone(key) {
            await send(.done(done), id: id, to: sender)
        } else if pending[key] == nil {
            logger.notice("refused a resource chunk: unknown transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(id.shortHex)"])
            await send(.cancel(Self.cancel(.unknownTransfer, "no transfer \(id.shortHex) here")), id: id, to: sender)
        }
    }

    private func toOutgoing(_ id: ResourceID, from sender: PeerID, _ what: String,
                            _ input: (inout ResourceSendStateMachine) -> [ResourceSendStateMachine.Action]) async {
        guard var transfer = outgoing[id], transfer.peer.id == sender.id else {
            logger.notice("dropped \(what) for an unknown resource transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(id.shortHex)"])
            return
        }
        transfer.machine.window = pathWindow(transfer)
        let actions = input(&transfer.machine)
        outgoing[id] = transfer
        await perform(actions, outgoing: id)
    }

    /// Time passed: retransmissions and timeouts, expired offers, and reachability changes.
    /// The session's routes changed: transfers pause or go on as their peers became unreachable
    /// or reachable.
    func routesChanged() async {
        guard serving else { return }
        await timersFired(now: clock.now)
    }

    /// Arms the timer for the earliest deadline of any transfer. Called at the end of every turn
    /// that may have changed one.
    func rearm() {
        guard serving else { return timer.cancel() }
        var earliest: ContinuousClock.Instant?
        func consider(_ deadline: ContinuousClock.Instant?) {
            if let deadline { earliest = min(earliest ?? deadline, deadline) }
        }
        for transfer in outgoing.values { consider(transfer.machine.nextDeadline) }
        for transfer in incoming.values {
            consider(transfer.machine.nextDeadline)
            if transfer.unsaved > 0 { consider(transfer.checkpointedAt + ResourceLimits.checkpointInterval) }
        }
        for offer in pending.values { consider(offer.until) }
        timer.arm(for: earliest, clock: clock) { generation in await self.timerDue(generation) }
    }

    private func timerDue(_ generation: UInt64) async {
        guard timer.take(generation) else { return }
        await timersFired(now: clock.now)
    }

    func timersFired(now: ContinuousClock.Instant) async {
        defer { rearm() }
        for id in outgoing.keys {
            guard var transfer = outgoing[id] else { continue }
            transfer.machine.window = pathWindow(transfer)
            let reachable = isReachable(transfer.peer.id)
            var actions: [ResourceSendStateMachine.Action] = []
            if reachable != transfer.reachable {
                transfer.reachable = reachable
                actions += reachable ? transfer.machine.peerReachable(now: now) : transfer.machine.peerUnreachable(now: now)
            }
            if let due = transfer.machine.nextDeadline, due <= now { actions += transfer.machine.timerFired(now: now) }
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
        }
        for key in incoming.keys {
            guard var transfer = incoming[key] else { continue }
            let reachable = isReachable(key.peer)
            var actions: [ResourceReceiveStateMachine.Action] = []
            if reachable != transfer.reachable {
                transfer.reachable = reachable
                actions += reachable ? transfer.machine.senderReachable(now: now) : transfer.machine.senderUnreachable(now: now)
            }
            if let due = transfer.machine.nextDeadline, due <= now { actions += transfer.machine.timerFired(now: now) }
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
            if let current = incoming[key], current.unsaved > 0, now - current.checkpointedAt >= ResourceLimits.checkpointInterval {
                requestCheckpoint(key)
            }
        }
        for (key, offer) in pending where offer.until <= now {
            pending[key] = nil
            logger.notice("refused a resource: the application did not answer in time", metadata: ["mesh.peer": "\(key.peer.shortHex)", "resource.id": "\(key.id.shortHex)"])
            await refuse(key, offer.request.sender, ResourceFailure(.refused, "the receiver did not accept it in time"))
        }
    }

    // MARK: Sending messages

    /// Hands a message to the mesh before it returns, without leaving the actor (an `await` of
    /// the channel's `send` hopped off the actor and back for every chunk and acknowledgement).
    /// - Returns: `false` when the first hop's link was congested and took nothing: the shell is
    ///   called back (``linkHasRoom(_:)``) once it has room.
    @discardableResult
    func send(_ body: ResourceMessagePayload.OneOf_Body, id: ResourceID, to peer: PeerID) async -> Bool {
        var message = ResourceMessagePayload()
        message.transferID = id.bytes
        message.body = body
        return send(serialized: message.serialized, id: id, to: peer)
    }

    /// ``send(_:id:to:)`` of a message serialized already (a chunk, ``ResourceWire``).
    /// - Parameter deferringFlush: a neighbour's link keeps the message until ``flushKept()``
    ///   (the end of the turn, or the next message sent without it), so that a turn's chunks
    ///   reach the link's loop in one hop and leave in one write.
    func send(serialized bytes: Data, id: ResourceID, to peer: PeerID, deferringFlush: Bool = false) -> Bool {
        guard let channel else { return true }
        // In the order they were made: what this turn kept goes first.
        if !deferringFlush { flushKept() }
        do {
            let outcome = try channel.sendNow(bytes, to: peer, deferringFlush: deferringFlush)
            kept.note(outcome)
            return congestedLinks.sent(outcome) { [weak self] link in
                guard let self else { return }
                Task { await self.linkHasRoom(link) }
            }
        } catch {
            // No route now: the retransmission timer tries again, and gives up in the end.
            logger.debug("a resource message was not sent: \(error)", metadata: ["mesh.peer": "\(peer.id.shortHex)", "resource.id": "\(id.shortHex)"])
            return true
        }
    }

    /// Hands the messages the links kept (``send(serialized:id:to:deferringFlush:)``) to their loops.
    func flushKept() { kept.flush() }

    /// A congested link has room again (or closed): every outgoing transfer sends the chunks it
    /// held back.
    private func linkHasRoom(_ link: ObjectIdentifier) async {
        congestedLinks.roomArrived(link)
        for id in Array(outgoing.keys) {
            guard var transfer = outgoing[id] else { continue }
            transfer.machine.window = pathWindow(transfer)
            let actions = transfer.machine.linkHasRoom(now: clock.now)
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
        }
    }

    static func cancel(_ code: ResourceCancelCode, _ reason: String) -> ResourceCancelPayload {
        var cancel = ResourceCancelPayload()
        cancel.code = code.rawValue
        var text = reason
        while text.utf8.count > ResourceLimits.maxReasonBytes { text.removeLast() }
        cancel.reason = text
        return cancel
    }

    /// Whether a progress update is due: at most one per ``ResourceLimits/progressInterval``
    /// for each transfer (`last` is updated when it is).
    static func progressDue(_ last: inout ContinuousClock.Instant?, now: ContinuousClock.Instant) -> Bool {
        if let last, now - last < ResourceLimits.progressInterval { return false }
        last = now
        return true
    }

    func count(_ bytes: Int) { chunkBytesSent += UInt64(bytes) }
}
