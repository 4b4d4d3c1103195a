import Crypto
import Foundation
import Logging
import MeshTransport
import MeshWire

extension ResourceTransfers {
    // MARK: Offers (PROTOCOL.md §16.2, §16.6)

    func received(_ payload: ResourceOfferPayload, key: Key, from sender: PeerID) async {
        if var transfer = incoming[key] {
            let actions = transfer.machine.receivedOfferAgain()
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
            return
        }
        if let memory = finished[key] {
            // §16.2: completed — its ResourceDone was lost (or the sender restarted); refused — ignored.
            if let done = memory.done { await send(.done(done), id: key.id, to: sender) }
            return
        }
        if let done = recordedDone(key) {
            await send(.done(done), id: key.id, to: sender)
            return
        }
        if pending[key] != nil { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(key.id.shortHex)"]
        let offer: ResourceOffer
        do {
            offer = try ResourceOffer(validating: payload)
            try admit(offer, from: sender)
        } catch {
            logger.notice("refused a resource offer: \(error.reason)", metadata: metadata)
            await refuse(key, sender, error)
            return
        }
        if case .ask(let timeout) = configuration.acceptPolicy {
            guard pending.count < ResourceLimits.maxPendingOffers else {
                await refuse(key, sender, ResourceFailure(.busy, "too many offers wait for an answer"))
                return
            }
            let request = ResourceOfferRequest(id: key.id, sender: sender, name: offer.name, size: offer.size, sha256: offer.sha256)
            pending[key] = Pending(request: request, offer: offer, until: clock.now + timeout)
            rearm()
            if !events.offer(.offered(request)) { logger.notice("a resource offer was not reported: the application reads no resource events") }
            return
        }
        await accept(offer, key: key, from: sender)
    }

    /// The receiver's policy: throws the refusal, or returns when the offer may be accepted.
    private func admit(_ offer: ResourceOffer, from sender: PeerID) throws(ResourceFailure) {
        guard let journal else { throw ResourceFailure(.refused, "the receiver takes no resources") }
        if case .refuse = configuration.acceptPolicy { throw ResourceFailure(.refused, "the receiver takes no resources") }
        guard offer.size <= configuration.maxIncomingSize else {
            throw ResourceFailure(.tooLarge, "\(offer.size) bytes is over the receiver's limit of \(configuration.maxIncomingSize) bytes")
        }
        let fromPeer = incoming.keys.filter { $0.peer == sender.id }.count + pending.keys.filter { $0.peer == sender.id }.count
        guard fromPeer < configuration.maxIncomingPerPeer else {
            throw ResourceFailure(.busy, "already \(fromPeer) resources coming from you (at most \(configuration.maxIncomingPerPeer) at once)")
        }
        guard incoming.count + pending.count < configuration.maxIncoming else {
            throw ResourceFailure(.busy, "already \(incoming.count) resources coming in (at most \(configuration.maxIncoming) at once)")
        }
        try? journal.prepare()
        if let free = ResourceStorage.freeBytes(journal.directory) {
            let (needed, overflow) = offer.size.addingReportingOverflow(configuration.minFreeBytes)
            guard !overflow, needed <= free else {
                throw ResourceFailure(.tooLarge, "the receiver has not enough disk space for \(offer.size) bytes")
            }
        }
    }

    /// The application's answer to an offer it was asked about.
    func answer(_ request: ResourceOfferRequest, accept: Bool) async {
        let key = Key(peer: request.sender.id, id: request.id)
        guard let waiting = pending.removeValue(forKey: key) else { return }
        if accept {
            await self.accept(waiting.offer, key: key, from: request.sender)
        } else {
            logger.info("the application refused a resource", metadata: ["mesh.peer": "\(key.peer.shortHex)", "resource.id": "\(key.id.shortHex)"])
            await refuse(key, request.sender, ResourceFailure(.refused, "the receiver does not take it"))
        }
    }

    /// Creates the `.part` file and its state file, then answers the sender.
    private func accept(_ offer: ResourceOffer, key: Key, from sender: PeerID) async {
        guard let journal else { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(sender.id.shortHex)", "resource.id": "\(key.id.shortHex)"]
        let stem = journal.incomingStem(key.peer, key.id)
        let record = ResourceJournal.Incoming(id: key.id.hex, sender: key.peer.hex, senderName: sender.displayName, name: offer.name,
                                              size: offer.size, sha256: offer.sha256.hexString, chunkSize: offer.chunkSize, next: 0, stored: [])
        let handle: FileHandle
        do {
            try journal.prepare()
            ResourceStorage.remove(stem + ".part")
            handle = try ResourceStorage.createExclusive(stem + ".part")
            // On disk before the first acknowledgement: a restart finds the transfer (§16.4.2).
            try journal.save(record)
        } catch {
            ResourceStorage.remove(stem + ".part")
            logger.error("cannot store a resource offered: \(error.message)", metadata: metadata)
            await refuse(key, sender, ResourceFailure(.storageFailed, "the receiver cannot store resources now"))
            return
        }
        var machine = ResourceReceiveStateMachine(id: key.id, offer: offer, incarnation: .random(in: 1...UInt64.max), now: clock.now)
        let actions = machine.accept()
        let progress = makeProgress(key.id, .incoming, sender, offer, bytes: 0)
        incoming[key] = Incoming(machine: machine, peer: sender, handle: handle, record: record, progress: progress,
                                 reachable: true, checkpointedAt: clock.now, digest: InOrderDigest())
        logger.info("accepted a resource", metadata: metadata.merging(["resource.size": "\(offer.size)"]) { $1 })
        report(.startedReceiving(progress))
        await perform(actions, incoming: key, chunk: nil)
    }

    func refuse(_ key: Key, _ sender: PeerID, _ failure: ResourceFailure) async {
        remember(key, done: nil)
        await send(.cancel(Self.cancel(failure.code, failure.reason)), id: key.id, to: sender)
    }

    func remember(_ key: Key, done: ResourceDonePayload?) {
        let now = clock.now
        finished = finished.filter { $0.value.until > now }
        while finished.count >= ResourceLimits.maxFinishedRemembered,
              let oldest = finished.min(by: { $0.value.until < $1.value.until })?.key {
            finished[oldest] = nil
        }
        finished[key] = (done, now + ResourceLimits.finishedMemory)
    }

    /// The `ResourceDone` of a transfer received whole before what memory holds (earlier than
    /// ``ResourceLimits/finishedMemory``, or before a restart), from its record on disk; it is
    /// remembered in memory again.
    func recordedDone(_ key: Key) -> ResourceDonePayload? {
        guard let hash = journal?.finished(key.peer, key.id) else { return nil }
        var done = ResourceDonePayload()
        done.sha256 = hash
        remember(key, done: done)
        return done
    }

    func report(_ event: ResourceEvent) {
        if !events.offer(event) { logger.notice("a resource event was dropped: the application reads no resource events") }
    }

    // MARK: Sender actions

    func perform(_ actions: [ResourceSendStateMachine.Action], outgoing id: ResourceID) async {
        defer {
            // In a batch, what its acknowledgements let out leaves at its end (``endBatch()``).
            if !batching { flushKept() }
            rearm()
        }
        guard let transfer = outgoing[id] else { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(transfer.peer.id.shortHex)", "resource.id": "\(id.shortHex)"]
        // After a chunk the link refused, the rest of this turn's chunks are not even read.
        var heldBack = false
        for action in actions {
            switch action {
            case .sendOffer(let offer):
                await send(.offer(offer), id: id, to: transfer.peer)
            case .sendChunk(let index) where heldBack:
                outgoing[id]?.machine.notSent(chunk: index)
            case .sendChunk(let index):
                let offer = transfer.machine.offer
                let length = offer.length(ofChunk: index)
                let message: Data
                do {
                    try Self.checkUnchanged(transfer)
                    // Read straight into the serialized message (§16.3's layout, ResourceWire).
                    message = try ResourceWire.chunkMessage(id: id, index: index, length: length) { (buffer) throws(ResourceStorageError) in
                        try ResourceStorage.read(transfer.handle, offset: offer.offset(ofChunk: index), into: buffer)
                    }
                } catch {
                    guard var current = outgoing[id] else { return }
                    let more = current.machine.cancel(.sourceFailed, "the sender cannot send the file: \(error.message)")
                    outgoing[id] = current
                    await perform(more, outgoing: id)
                    return
                }
                if send(serialized: message, id: id, to: transfer.peer, deferringFlush: true) {
                    count(length)
                } else {
                    heldBack = true
                    outgoing[id]?.machine.notSent(chunk: index)
                }
            case .sendCancel(let code, let reason):
                await send(.cancel(Self.cancel(code, reason)), id: id, to: transfer.peer)
            case .accepted:
                logger.debug("the receiver accepted a resource", metadata: metadata)
            case .rewound(let next):
                logger.info("the receiver restarted: resuming from its state", metadata: metadata.merging(["resource.chunk": "\(next)"]) { $1 })
            case .paused, .resumed:
                logPause(action == .paused, .outgoing, metadata: metadata)
                transfer.progress.pause(action == .paused)
            case .progress(let bytes):
                guard outgoing[id] != nil else { continue }
                transfer.progress.moved(bytes, report: bytes < transfer.machine.offer.size && Self.progressDue(&outgoing[id]!.lastProgress, now: clock.now), now: clock.now)
            case .completed:
                outgoing[id] = nil
                journal.map { ResourceStorage.remove($0.outgoingPath(id)) }
                logger.info("sent a resource", metadata: metadata)
                transfer.progress.end(.completed(path: nil))
            case .failed(let failure):
                outgoing[id] = nil
                journal.map { ResourceStorage.remove($0.outgoingPath(id)) }
                logger.notice("a resource transfer failed: \(failure)", metadata: metadata)
                transfer.progress.end(.failed(failure))
            case .ignored(let why):
                logger.debug("resource input ignored: \(why)", metadata: metadata)
            }
        }
    }

    /// Throws unless the source still has the size and modification time it was offered with
    /// (PROTOCOL.md §16.4.2): a receiver never gets a mix of two versions.
    private static func checkUnchanged(_ transfer: Outgoing) throws(ResourceStorageError) {
        guard let stamp = ResourceStorage.stamp(transfer.handle), stamp.size == transfer.machine.offer.size,
              stamp.modified == transfer.modified else {
            throw ResourceStorageError("the file changed since it was offered (size or modification time)")
        }
    }

    private func logPause(_ paused: Bool, _ direction: ResourceProgress.Direction, metadata: Logger.Metadata) {
        let other = direction == .outgoing ? "receiver" : "sender"
        logger.info(paused ? "paused a resource transfer: the \(other) is out of reach" : "resumed a resource transfer: the \(other) is reachable",
                    metadata: metadata)
    }

    // MARK: Receiver actions

    func perform(_ actions: [ResourceReceiveStateMachine.Action], incoming key: Key, chunk: ResourceChunkPayload?) async {
        defer { rearm() }
        guard let transfer = incoming[key], let journal else { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(key.peer.shortHex)", "resource.id": "\(key.id.shortHex)"]
        let stem = journal.incomingStem(key.peer, key.id)
        // Reported after the actions that follow it (`.sendDone`): an application that stops its
        // session once it hears of the file must not cut off the message that tells the sender.
        var stored: (progress: ResourceProgress, size: UInt64, target: String)?
        // The in-order SHA-256 of the chunks written, taken after this turn's acknowledgement
        // (in a batch, after the batch's: ``endBatch()``).
        defer {
            if let (progress, size, target) = stored {
                progress.moved(size, report: false, now: clock.now)
                progress.end(.completed(path: target))
                report(.finishedReceiving(progress, .success(target)))
            }
        }
        for action in actions {
            switch action {
            case .write(let index):
                guard let chunk else { continue }
                do {
                    try ResourceStorage.write(transfer.handle, chunk.data, offset: transfer.machine.offer.offset(ofChunk: index))
                } catch {
                    logger.error("cannot write a received resource: \(error.message)", metadata: metadata)
                    await cancelIncoming(key, .storageFailed, "the receiver cannot write the resource")
                    return
                }
                incoming[key]?.unsaved += 1
                if incoming[key]?.digest?.take(index, chunk.data) == true {
                    // Hashed after the acknowledgement has gone: the sender does not wait for it.
                    undigested.insert(key)
                } else {
                    incoming[key]?.digest = nil
                }
                if let current = incoming[key], current.unsaved >= ResourceLimits.checkpointChunks { requestCheckpoint(key) }
            case .sendAck(let ack):
                if batching, chunk != nil {
                    // One acknowledgement for the batch's chunks, at its end (§16.4): it says
                    // what is stored then, every chunk of the batch written already.
                    owedAcks.insert(key)
                } else {
                    await send(.ack(ack), id: key.id, to: transfer.peer)
                }
            case .verify:
                // The last acknowledgement goes before the hash is checked (the sender learns
                // every chunk arrived), and every chunk written is hashed.
                await sendOwedAck(key)
                await hashWritten(key)
                let handle = transfer.handle
                let size = transfer.machine.offer.size
                let hash: [UInt8]
                do {
                    // Every chunk was hashed as it was written, in order: the same bytes as the file's.
                    if let digest = incoming[key]?.digest, digest.chunks == transfer.machine.offer.chunkCount {
                        hash = await digest.digest.finalize()
                    } else {
                        hash = try await EventLoops.runBlocking { try ResourceStorage.sha256(handle, size: size) }
                    }
                } catch {
                    logger.error("cannot read back a received resource: \(error)", metadata: metadata)
                    await cancelIncoming(key, .storageFailed, "the receiver cannot read the resource back")
                    return
                }
                guard var current = incoming[key] else { return }
                let more = current.machine.verified(sha256: hash)
                incoming[key] = current
                await perform(more, incoming: key, chunk: nil)
                return
            case .sendDone(let done):
                remember(key, done: done)
                do {
                    // On disk before the sender hears it (§16.5): it forgets the transfer then.
                    try await EventLoops.runBlocking { try journal.saveFinished(key.peer, key.id, sha256: done.sha256) }
                } catch {
                    logger.error("cannot record a received resource as finished: \(error)", metadata: metadata)
                }
                await send(.done(done), id: key.id, to: transfer.peer)
            case .sendCancel(let code, let reason):
                await send(.cancel(Self.cancel(code, reason)), id: key.id, to: transfer.peer)
            case .progress(let bytes):
                guard incoming[key] != nil else { continue }
                transfer.progress.moved(bytes, report: bytes < transfer.machine.offer.size && Self.progressDue(&incoming[key]!.lastProgress, now: clock.now), now: clock.now)
            case .paused, .resumed:
                logPause(action == .paused, .incoming, metadata: metadata)
                transfer.progress.pause(action == .paused)
            case .completed:
                incoming[key] = nil
                let target = journal.receivedPath(key.peer, key.id)
                let handle = transfer.handle
                // Known as finished while the file is moved (off the actor): a repeated chunk
                // meanwhile is ignored, not taken for an unknown transfer; `.sendDone` follows.
                remember(key, done: nil)
                do {
                    try await EventLoops.runBlocking {
                        try ResourceStorage.sync(handle)
                        try journal.prepare()
                        try ResourceStorage.move(stem + ".part", to: target)
                        ResourceStorage.remove(stem + ".json")
                    }
                } catch {
                    ResourceStorage.remove(stem + ".part")
                    ResourceStorage.remove(stem + ".json")
                    logger.error("cannot store a received resource: \(error)", metadata: metadata)
                    remember(key, done: nil)
                    await send(.cancel(Self.cancel(.storageFailed, "the receiver cannot store the resource")), id: key.id, to: transfer.peer)
                    let failure = ResourceFailure(.storageFailed, "cannot store the resource: \(error)")
                    transfer.progress.end(.failed(failure))
                    report(.finishedReceiving(transfer.progress, .failure(failure)))
                    return
                }
                logger.info("received a resource", metadata: metadata)
                stored = (transfer.progress, transfer.machine.offer.size, target)
            case .failed(let failure):
                incoming[key] = nil
                remember(key, done: nil)
                ResourceStorage.remove(stem + ".part")
                ResourceStorage.remove(stem + ".json")
                logger.notice("a resource transfer failed: \(failure)", metadata: metadata)
                transfer.progress.end(.failed(failure))
                report(.finishedReceiving(transfer.progress, .failure(failure)))
            case .ignored(let why):
                logger.debug("resource input ignored: \(why)", metadata: metadata)
            }
        }
    }

    func cancelIncoming(_ key: Key, _ code: ResourceCancelCode, _ reason: String) async {
        guard var current = incoming[key] else { return }
        let actions = current.machine.cancel(code, reason)
        incoming[key] = current
        await perform(actions, incoming: key, chunk: nil)
    }

    /// Asks the checkpoint task for a checkpoint of a transfer (once until it is taken); without
    /// that task (the shell does not run), takes it at once.
    func requestCheckpoint(_ key: Key) {
        guard let transfer = incoming[key], !transfer.checkpointQueued else { return }
        guard let checkpoints else { return checkpointNow(key) }
        incoming[key]?.checkpointQueued = true
        checkpoints.yield(key)
    }

    /// Syncs a transfer's `.part` file, then records the chunks it holds (PROTOCOL.md §16.4.2),
    /// on NIO's blocking pool: the shell goes on meanwhile. The record claims what was written
    /// when the checkpoint began, so it never claims a chunk that is not on disk.
    func checkpoint(_ key: Key) async {
        guard let journal, let (handle, record) = beginCheckpoint(key) else { return }
        do {
            try await EventLoops.runBlocking {
                try ResourceStorage.sync(handle)
                try journal.save(record)
            }
        } catch {
            logger.error("cannot record a received resource's state: \(error)", metadata: ["resource.id": "\(key.id.shortHex)"])
        }
        // Ended meanwhile (completed or failed, its files removed): so goes the record just written.
        if incoming[key] == nil { ResourceStorage.remove(journal.incomingStem(key.peer, key.id) + ".json") }
    }

    /// ``checkpoint(_:)`` on the caller's thread (the session stops).
    func checkpointNow(_ key: Key) {
        guard let journal, let (handle, record) = beginCheckpoint(key) else { return }
        do {
            try ResourceStorage.sync(handle)
            try journal.save(record)
        } catch {
            logger.error("cannot record a received resource's state: \(error.message)", metadata: ["resource.id": "\(key.id.shortHex)"])
        }
    }

    /// The record of what a running transfer holds now, with its checkpoint bookkeeping reset.
    private func beginCheckpoint(_ key: Key) -> (FileHandle, ResourceJournal.Incoming)? {
        guard var transfer = incoming[key], transfer.machine.state != .finished else { return nil }
        transfer.record.next = transfer.machine.next
        transfer.record.stored = transfer.machine.storedAhead
        transfer.unsaved = 0
        transfer.checkpointedAt = clock.now
        transfer.checkpointQueued = false
        incoming[key] = transfer
        return (transfer.handle, transfer.record)
    }
}
