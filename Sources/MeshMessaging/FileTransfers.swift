import Foundation
import Logging
import MeshSession
import MeshTransport
import MeshWire

/// File transfer over a session (PROTOCOL.md §16): the I/O shell around
/// ``FileSendStateMachine`` and ``FileReceiveStateMachine``.
///
/// ``send(path:to:)`` hashes a file and offers it to a peer anywhere in the mesh; chunks, sealed
/// end to end, flow within a window and are retransmitted on timeout. Offers from peers are
/// **accepted automatically** (PROTOCOL.md §16.6) unless the sender is blocked, the file is over
/// ``FileTransferLimits/maxFileSize`` or too many transfers are running: the received file is
/// written to a `.part` file in the downloads directory and gets its (sanitised, never
/// overwriting) name only once its SHA-256 matches the offer's.
///
/// The application hands it every session event (``handle(_:)``) and runs ``run()`` beside the
/// session (it drives the timers); it reports ``events``. This type is thread-safe (an actor).
public actor FileTransfers {
    /// Everything the transfers report. One consumer.
    public nonisolated let events: EventQueue<FileTransferEvent>
    /// Where received files go (created with mode 0700 on the first offer).
    public nonisolated let downloads: String
    private let session: Session
    private let logger: Logger
    private let tick: Duration
    private var blocked: Set<NodeID> = []
    private var outgoing: [FileTransferID: Outgoing] = [:]
    private var incoming: [IncomingKey: Incoming] = [:]
    /// Finished incoming transfers: the confirmation to repeat to a sender that did not hear it.
    private var finished: [IncomingKey: (done: FileDonePayload?, until: ContinuousClock.Instant)] = [:]

    private struct IncomingKey: Hashable { var peer: NodeID; var id: FileTransferID }

    private struct Outgoing {
        var machine: FileSendStateMachine
        var peer: PeerID
        var handle: FileHandle
        var info: FileTransferInfo
        var lastProgress: ContinuousClock.Instant?
    }

    private struct Incoming {
        var machine: FileReceiveStateMachine
        var peer: PeerID
        var handle: FileHandle
        var partPath: String
        var info: FileTransferInfo
        var lastProgress: ContinuousClock.Instant?
    }

    /// Creates the shell.
    /// - Parameters:
    ///   - session: the session to send through.
    ///   - downloads: the directory for received files.
    ///   - tick: how often timers are checked.
    ///   - logger: where refused input is logged.
    public init(session: Session, downloads: String, tick: Duration = .milliseconds(100), logger: Logger) {
        self.session = session
        self.downloads = downloads
        self.tick = tick
        self.logger = logger
        self.events = EventQueue(capacity: 1024)
    }

    /// The default downloads directory: `$XDG_DOWNLOAD_DIR/meshchat` when that is set (and
    /// absolute), else `~/Downloads/meshchat`.
    /// - Parameter environment: the process environment.
    public static func defaultDownloads(environment: [String: String]) -> String {
        if let xdg = environment["XDG_DOWNLOAD_DIR"], xdg.hasPrefix("/") { return xdg + "/meshchat" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/Downloads/meshchat"
    }

    /// Offers are refused from these nodes (the messenger's block list); files already coming
    /// from a newly blocked node are cancelled with `refused`.
    /// - Parameter nodes: the blocked nodes.
    public func setBlocked(_ nodes: Set<NodeID>) async {
        blocked = nodes
        for key in incoming.keys where nodes.contains(key.peer) {
            await cancelIncoming(key, .refused, "the receiver blocked you")
        }
    }

    /// The transfers running now with their progress: outgoing first, each direction by name.
    public var running: [FileTransferProgress] {
        outgoing.values.map { FileTransferProgress(info: $0.info, bytes: $0.machine.bytesAcknowledged) }.sorted { $0.info.name < $1.info.name }
            + incoming.values.map { FileTransferProgress(info: $0.info, bytes: $0.machine.bytesStored) }.sorted { $0.info.name < $1.info.name }
    }

    // MARK: Sending

    /// Offers a file to a peer: checks it, hashes it and sends the offer. The rest is reported
    /// through ``events``.
    /// - Parameters:
    ///   - path: an absolute path of a regular, readable file of at most ``FileTransferLimits/maxFileSize`` bytes.
    ///   - peer: the receiver. When no route to it exists once the file is hashed (it was out of
    ///     reach already, or the route was lost meanwhile) the transfer starts paused and the offer
    ///     goes out when a route appears, for up to ``FileTransferLimits/unreachableTimeout``
    ///     (PROTOCOL.md §16.4.1).
    /// - Returns: the transfer.
    /// - Throws: ``FileTransferError`` naming what was wrong; nothing is sent then.
    @discardableResult
    public func send(path: String, to peer: PeerID) async throws(FileTransferError) -> FileTransferInfo {
        let (handle, size) = try FileStorage.openForReading(path)
        guard size <= FileTransferLimits.maxFileSize else {
            throw FileTransferError("\(path) has \(size) bytes, over the limit of \(FileTransferLimits.maxFileSize) bytes (64 MiB)")
        }
        try checkOutgoingLimits(to: peer)
        let hash: [UInt8]
        do {
            hash = try await EventLoops.runBlocking { try FileStorage.sha256(handle, size: size) }
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError("cannot read \(path): \(error)")
        }
        // Another send may have started while this one hashed (the actor is re-entrant).
        try checkOutgoingLimits(to: peer)
        let name = FileNames.cut((path as NSString).lastPathComponent, to: FileTransferLimits.maxOfferedNameBytes)
        let offer = FileOffer(name: name, size: size, sha256: Data(hash))
        let id = FileTransferID.random()
        let info = FileTransferInfo(id: id, direction: .outgoing, peer: peer, name: name, size: size, sha256: Data(hash).hexString)
        var machine = FileSendStateMachine(id: id, offer: offer)
        // The route is looked up after hashing: a relay may have gone away meanwhile.
        let actions = machine.start(now: .now, reachable: session.route(to: peer) != nil)
        outgoing[id] = Outgoing(machine: machine, peer: peer, handle: handle, info: info)
        logger.info("offering a file", metadata: ["mesh.peer": "\(peer.id.shortHex)", "file.id": "\(id.shortHex)", "file.size": "\(size)"])
        await events.push(.offered(info))
        await perform(actions, outgoing: id)
        return info
    }

    /// Throws when another outgoing transfer would break a limit (per peer, or in all).
    private func checkOutgoingLimits(to peer: PeerID) throws(FileTransferError) {
        let toPeer = outgoing.values.filter { $0.peer.id == peer.id }.count
        guard toPeer < FileTransferLimits.maxTransfersPerPeer else {
            throw FileTransferError("already \(toPeer) files on their way to \(peer.displayName) (at most \(FileTransferLimits.maxTransfersPerPeer) at once)")
        }
        guard outgoing.count < FileTransferLimits.maxOutgoingTransfers else {
            throw FileTransferError("already \(outgoing.count) files on their way (at most \(FileTransferLimits.maxOutgoingTransfers) at once)")
        }
    }

    /// Gives up a running transfer, in either direction.
    /// - Parameter id: the transfer.
    /// - Returns: whether a running transfer had that id.
    @discardableResult
    public func cancel(_ id: FileTransferID) async -> Bool {
        if var transfer = outgoing[id] {
            let actions = transfer.machine.cancel(.cancelled, "the sender cancelled")
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
            return true
        }
        if let key = incoming.keys.first(where: { $0.id == id }), var transfer = incoming[key] {
            let actions = transfer.machine.cancel(.cancelled, "the receiver cancelled")
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
            return true
        }
        return false
    }

    // MARK: Inputs

    /// Handles a session event: file messages (other events are ignored). Malformed or unexpected
    /// messages are logged and answered or dropped as PROTOCOL.md §16 says; nothing traps.
    /// - Parameter event: the event.
    public func handle(_ event: SessionEvent) async {
        if case .reachabilityChanged(let peer, let route) = event {
            await reachabilityChanged(peer.id, reachable: route != nil)
            return
        }
        guard case .file(let message, let sender, _) = event else { return }
        guard let id = FileTransferID(bytes: message.transferID) else {
            logger.notice("dropped a file message: transfer id of \(message.transferID.count) bytes", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
            return
        }
        let key = IncomingKey(peer: sender.id, id: id)
        switch message.body {
        case .offer(let offer):
            await received(offer, id: id, from: sender)
        case .chunk(let chunk):
            if var transfer = incoming[key] {
                let actions = transfer.machine.receivedChunk(index: Int(chunk.index), length: chunk.data.count, now: .now)
                incoming[key] = transfer
                await perform(actions, incoming: key, chunk: chunk)
            } else if let memory = finished[key] {
                if let done = memory.done { await send(.done(done), id: id, to: sender) }
            } else {
                logger.notice("refused a file chunk: unknown transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "file.id": "\(id.shortHex)"])
                await send(.cancel(Self.cancel(.unknownTransfer, "no transfer \(id.shortHex) here")), id: id, to: sender)
            }
        case .ack(let ack):
            await toOutgoing(id, from: sender, "an acknowledgement") { $0.receivedAck(ack, now: .now) }
        case .done(let done):
            await toOutgoing(id, from: sender, "a confirmation") { $0.receivedDone(done) }
        case .cancel(let cancel):
            if let transfer = outgoing[id], transfer.peer.id == sender.id {
                await toOutgoing(id, from: sender, "a cancel") { $0.receivedCancel(cancel) }
            } else if var transfer = incoming[key] {
                let actions = transfer.machine.receivedCancel(cancel)
                incoming[key] = transfer
                await perform(actions, incoming: key, chunk: nil)
            } else {
                logger.debug("ignored a cancel of an unknown file transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "file.id": "\(id.shortHex)"])
            }
        case nil:
            logger.debug("ignored a file message of an unknown kind (a newer peer's)", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
        }
    }

    /// Drives the timers (retransmissions, timeouts) until cancelled; then abandons the
    /// transfers still running (their `.part` files are removed) and finishes ``events``.
    public func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: tick)
            await timersFired(now: .now)
        }
        await cancelAll()
        events.finish()
    }

    // MARK: Internals

    /// Pauses the transfers with a node that went out of reach, and resumes them when it is back.
    private func reachabilityChanged(_ node: NodeID, reachable: Bool) async {
        let now = ContinuousClock.now
        for id in outgoing.keys {
            guard var transfer = outgoing[id], transfer.peer.id == node else { continue }
            let actions = reachable ? transfer.machine.peerReachable(now: now) : transfer.machine.peerUnreachable(now: now)
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
        }
        for key in incoming.keys where key.peer == node {
            guard var transfer = incoming[key] else { continue }
            let actions = reachable ? transfer.machine.senderReachable(now: now) : transfer.machine.senderUnreachable(now: now)
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
        }
    }

    private func toOutgoing(_ id: FileTransferID, from sender: PeerID, _ what: String,
                            _ input: (inout FileSendStateMachine) -> [FileSendStateMachine.Action]) async {
        guard var transfer = outgoing[id], transfer.peer.id == sender.id else {
            logger.notice("dropped \(what) for an unknown file transfer", metadata: ["mesh.peer": "\(sender.id.shortHex)", "file.id": "\(id.shortHex)"])
            return
        }
        let actions = input(&transfer.machine)
        outgoing[id] = transfer
        await perform(actions, outgoing: id)
    }

    private func received(_ payload: FileOfferPayload, id: FileTransferID, from sender: PeerID) async {
        let key = IncomingKey(peer: sender.id, id: id)
        if var transfer = incoming[key] {
            let actions = transfer.machine.receivedOfferAgain()
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
            return
        }
        if let memory = finished[key] {
            // §16.2: completed — its FileDone was lost (for a 0-byte file the offer is the probe); refused — ignored.
            if let done = memory.done { await send(.done(done), id: id, to: sender) }
            return
        }
        let metadata: Logger.Metadata = ["mesh.peer": "\(sender.id.shortHex)", "file.id": "\(id.shortHex)"]
        if blocked.contains(sender.id) {
            logger.notice("refused a file from a blocked peer", metadata: metadata)
            await refuse(key, sender, FileTransferFailure(.refused, "the receiver does not take files from you"), info: nil)
            return
        }
        let name = FileNames.sanitised(payload.name)
        let info = FileTransferInfo(id: id, direction: .incoming, peer: sender, name: name, size: payload.size, sha256: payload.sha256.hexString)
        let offer: FileOffer
        do {
            offer = try FileOffer(validating: payload)
        } catch {
            logger.notice("refused a file offer: \(error.reason)", metadata: metadata)
            await refuse(key, sender, error, info: info)
            return
        }
        let fromPeer = incoming.keys.filter { $0.peer == sender.id }.count
        guard fromPeer < FileTransferLimits.maxTransfersPerPeer, incoming.count < FileTransferLimits.maxIncomingTransfers else {
            let failure = FileTransferFailure(.busy, fromPeer >= FileTransferLimits.maxTransfersPerPeer
                ? "already \(fromPeer) files coming from you (at most \(FileTransferLimits.maxTransfersPerPeer) at once)"
                : "already \(incoming.count) files coming in (at most \(FileTransferLimits.maxIncomingTransfers) at once)")
            logger.notice("refused a file offer: \(failure.reason)", metadata: metadata)
            await refuse(key, sender, failure, info: info)
            return
        }
        let partPath = downloads + "/" + name + "." + id.shortHex + ".part"
        let handle: FileHandle
        do {
            try FileStorage.makeDirectory(downloads)
            handle = try FileStorage.createExclusive(partPath)
        } catch {
            logger.error("cannot store a file offered: \(error.message)", metadata: metadata)
            await refuse(key, sender, FileTransferFailure(.storageFailed, "the receiver cannot store files now"), info: info)
            return
        }
        var machine = FileReceiveStateMachine(id: id, offer: offer, now: .now)
        let actions = machine.accept()
        incoming[key] = Incoming(machine: machine, peer: sender, handle: handle, partPath: partPath, info: info)
        logger.info("accepted a file", metadata: metadata.merging(["file.size": "\(offer.size)"]) { $1 })
        await events.push(.offered(info))
        await perform(actions, incoming: key, chunk: nil)
    }

    private func refuse(_ key: IncomingKey, _ sender: PeerID, _ failure: FileTransferFailure, info: FileTransferInfo?) async {
        remember(key, done: nil)
        await send(.cancel(Self.cancel(failure.code, failure.reason)), id: key.id, to: sender)
        if let info { await events.push(.failed(info, failure)) }
    }

    private func remember(_ key: IncomingKey, done: FileDonePayload?) {
        let now = ContinuousClock.now
        finished = finished.filter { $0.value.until > now }
        while finished.count >= FileTransferLimits.maxFinishedRemembered,
              let oldest = finished.min(by: { $0.value.until < $1.value.until })?.key {
            finished[oldest] = nil
        }
        finished[key] = (done, now + FileTransferLimits.finishedMemory)
    }

    private func perform(_ actions: [FileSendStateMachine.Action], outgoing id: FileTransferID) async {
        guard let transfer = outgoing[id] else { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(transfer.peer.id.shortHex)", "file.id": "\(id.shortHex)"]
        for action in actions {
            switch action {
            case .sendOffer(let offer):
                await send(.offer(offer), id: id, to: transfer.peer)
            case .sendChunk(let index):
                let offer = transfer.machine.offer
                let data: Data
                do {
                    data = try FileStorage.read(transfer.handle, offset: offer.offset(ofChunk: index), length: offer.length(ofChunk: index))
                } catch {
                    guard var current = outgoing[id] else { return }
                    let more = current.machine.cancel(.sourceFailed, "the sender cannot read the file: \(error.message)")
                    outgoing[id] = current
                    await perform(more, outgoing: id)
                    return
                }
                var chunk = FileChunkPayload()
                chunk.index = UInt32(index)
                chunk.data = data
                await send(.chunk(chunk), id: id, to: transfer.peer)
            case .sendCancel(let code, let reason):
                await send(.cancel(Self.cancel(code, reason)), id: id, to: transfer.peer)
            case .accepted:
                logger.debug("the receiver accepted a file", metadata: metadata)
            case .paused, .resumed:
                await reportPause(action == .paused, transfer.info, metadata: metadata)
            case .progress(let bytes):
                guard bytes < transfer.info.size, outgoing[id] != nil, Self.progressDue(&outgoing[id]!.lastProgress) else { continue }
                _ = events.offer(.progress(transfer.info, bytes: bytes))
            case .completed:
                outgoing[id] = nil
                logger.info("sent a file", metadata: metadata)
                await events.push(.sent(transfer.info))
            case .failed(let failure):
                outgoing[id] = nil
                logger.notice("a file transfer failed: \(failure)", metadata: metadata)
                await events.push(.failed(transfer.info, failure))
            case .ignored(let why):
                logger.debug("file transfer input ignored: \(why)", metadata: metadata)
            }
        }
    }

    /// Logs and reports that a transfer paused (its peer went out of reach) or resumed.
    private func reportPause(_ paused: Bool, _ info: FileTransferInfo, metadata: Logger.Metadata) async {
        let other = info.direction == .outgoing ? "receiver" : "sender"
        logger.info(paused ? "paused a file transfer: the \(other) is out of reach" : "resumed a file transfer: the \(other) is reachable",
                    metadata: metadata)
        await events.push(paused ? .paused(info) : .resumed(info))
    }

    /// Whether a progress event is due: at most one per ``FileTransferLimits/progressInterval``
    /// for each transfer (`last` is updated when it is).
    private static func progressDue(_ last: inout ContinuousClock.Instant?) -> Bool {
        let now = ContinuousClock.now
        if let last, now - last < FileTransferLimits.progressInterval { return false }
        last = now
        return true
    }

    private func perform(_ actions: [FileReceiveStateMachine.Action], incoming key: IncomingKey, chunk: FileChunkPayload?) async {
        guard let transfer = incoming[key] else { return }
        let metadata: Logger.Metadata = ["mesh.peer": "\(key.peer.shortHex)", "file.id": "\(key.id.shortHex)"]
        for action in actions {
            switch action {
            case .write(let index):
                guard let chunk else { continue }
                do {
                    try FileStorage.write(transfer.handle, chunk.data, offset: transfer.machine.offer.offset(ofChunk: index))
                } catch {
                    logger.error("cannot write a received file: \(error.message)", metadata: metadata)
                    await cancelIncoming(key, .storageFailed, "the receiver cannot write the file")
                    return
                }
            case .sendAck(let ack):
                await send(.ack(ack), id: key.id, to: transfer.peer)
            case .verify:
                let handle = transfer.handle
                let size = transfer.machine.offer.size
                let hash: [UInt8]
                do {
                    hash = try await EventLoops.runBlocking { try FileStorage.sha256(handle, size: size) }
                } catch {
                    logger.error("cannot read back a received file: \(error)", metadata: metadata)
                    await cancelIncoming(key, .storageFailed, "the receiver cannot read the file back")
                    return
                }
                guard var current = incoming[key] else { return }
                let more = current.machine.verified(sha256: hash)
                incoming[key] = current
                await perform(more, incoming: key, chunk: nil)
                return
            case .sendDone(let done):
                remember(key, done: done)
                await send(.done(done), id: key.id, to: transfer.peer)
            case .sendCancel(let code, let reason):
                await send(.cancel(Self.cancel(code, reason)), id: key.id, to: transfer.peer)
            case .progress(let bytes):
                guard bytes < transfer.info.size, incoming[key] != nil, Self.progressDue(&incoming[key]!.lastProgress) else { continue }
                _ = events.offer(.progress(transfer.info, bytes: bytes))
            case .paused, .resumed:
                await reportPause(action == .paused, transfer.info, metadata: metadata)
            case .completed:
                incoming[key] = nil
                do {
                    try transfer.handle.synchronize()
                    let path = try FileStorage.place(transfer.partPath, in: downloads, as: transfer.info.name)
                    logger.info("received a file", metadata: metadata)
                    await events.push(.received(transfer.info, path: path))
                } catch {
                    FileStorage.remove(transfer.partPath)
                    logger.error("cannot store a received file: \(error)", metadata: metadata)
                    remember(key, done: nil)
                    await send(.cancel(Self.cancel(.storageFailed, "the receiver cannot store the file")), id: key.id, to: transfer.peer)
                    await events.push(.failed(transfer.info, FileTransferFailure(.storageFailed, "cannot store the file: \(error)")))
                    return
                }
            case .failed(let failure):
                incoming[key] = nil
                remember(key, done: nil)
                FileStorage.remove(transfer.partPath)
                logger.notice("a file transfer failed: \(failure)", metadata: metadata)
                await events.push(.failed(transfer.info, failure))
            case .ignored(let why):
                logger.debug("file transfer input ignored: \(why)", metadata: metadata)
            }
        }
    }

    private func cancelIncoming(_ key: IncomingKey, _ code: FileCancelCode, _ reason: String) async {
        guard var current = incoming[key] else { return }
        let actions = current.machine.cancel(code, reason)
        incoming[key] = current
        await perform(actions, incoming: key, chunk: nil)
    }

    private func timersFired(now: ContinuousClock.Instant) async {
        for id in outgoing.keys {
            guard var transfer = outgoing[id], let due = transfer.machine.nextDeadline, due <= now else { continue }
            let actions = transfer.machine.timerFired(now: now)
            outgoing[id] = transfer
            await perform(actions, outgoing: id)
        }
        for key in incoming.keys {
            guard var transfer = incoming[key], let due = transfer.machine.nextDeadline, due <= now else { continue }
            let actions = transfer.machine.timerFired(now: now)
            incoming[key] = transfer
            await perform(actions, incoming: key, chunk: nil)
        }
    }

    /// Cancels every running transfer (telling each peer) and removes their `.part` files: call it
    /// before the session disconnects, so that peers learn at once.
    public func cancelAll() async {
        for id in outgoing.keys { await cancel(id) }
        for key in incoming.keys { await cancel(key.id) }
    }

    private func send(_ body: FileTransferPayload.OneOf_Body, id: FileTransferID, to peer: PeerID) async {
        var message = FileTransferPayload()
        message.transferID = id.bytes
        message.body = body
        do {
            try await session.sendFile(message, to: peer)
        } catch {
            // No route now: the retransmission timer tries again, and gives up in the end.
            logger.debug("a file message was not sent: \(error)", metadata: ["mesh.peer": "\(peer.id.shortHex)", "file.id": "\(id.shortHex)"])
        }
    }

    private static func cancel(_ code: FileCancelCode, _ reason: String) -> FileCancelPayload {
        var cancel = FileCancelPayload()
        cancel.code = code.rawValue
        var text = reason
        while text.utf8.count > FileTransferLimits.maxReasonBytes { text.removeLast() }
        cancel.reason = text
        return cancel
    }
}
