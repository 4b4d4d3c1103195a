import Foundation
import Logging
import MeshSession

/// The chat's files (`/send`, `/files`, `/cancel`; PROTOCOL.md §16.6) on the session's resources.
///
/// ``send(path:to:)`` checks a file against the chat's limits and hands it to
/// ``MeshSession/Session/sendResource(at:withName:to:)``. Offers from peers are answered at once
/// (the session's policy must be ``MeshSession/ResourceAcceptPolicy/ask(timeout:)``, see
/// ``acceptPolicy``): refused from a blocked sender or over ``maxFileSize``, accepted otherwise.
/// A received resource is moved from the session's resource directory to the
/// downloads directory under its sanitised, never-overwriting name (``FileNames``) — the naming
/// rules live here, with the application that picks where files go, since the library never uses
/// a sender's name as a path.
///
/// Transfers survive a restart of either side: the session keeps them on disk and reports them
/// again, paused until the peer is reachable. Run ``run()`` beside the session; it reports
/// ``events``. This type is thread-safe (an actor).
public actor FileTransfers {
    /// Everything the transfers report. One consumer.
    public nonisolated let events: EventQueue<FileTransferEvent>
    /// Where received files go (created with mode 0700 on the first one).
    public nonisolated let downloads: String
    /// The largest file accepted from a peer.
    public nonisolated let maxFileSize: UInt64
    private let session: Session
    private let logger: Logger
    private var blocked: Set<NodeID> = []
    private var transfers: [Key: ResourceProgress] = [:]
    private nonisolated let watch: AsyncStream<ResourceProgress>.Continuation
    private nonisolated let watched: AsyncStream<ResourceProgress>

    private struct Key: Hashable { var peer: NodeID; var id: FileTransferID }

    /// The policy the session needs for this shell to answer offers.
    public static let acceptPolicy = ResourceAcceptPolicy.ask(timeout: FileTransferLimits.answerTimeout)

    /// Creates the shell.
    /// - Parameters:
    ///   - session: the session, configured with ``acceptPolicy`` and `maxIncomingSize` =
    ///     `maxFileSize`.
    ///   - downloads: the directory for received files.
    ///   - maxFileSize: the largest file accepted from a peer (offers over it are refused; at
    ///     most ``MeshSession/ResourceLimits/maxSize``).
    ///   - logger: where refused input is logged.
    public init(session: Session, downloads: String, maxFileSize: UInt64 = FileTransferLimits.defaultMaxFileSize, logger: Logger) {
        self.session = session
        self.downloads = downloads
        self.maxFileSize = min(maxFileSize, ResourceLimits.maxSize)
        self.logger = logger
        self.events = EventQueue(capacity: 1024)
        (watched, watch) = AsyncStream.makeStream(of: ResourceProgress.self)
    }

    /// The default downloads directory: `$XDG_DOWNLOAD_DIR/meshchat` when that is set (and
    /// absolute), else `~/Downloads/meshchat`.
    /// - Parameter environment: the process environment.
    public static func defaultDownloads(environment: [String: String]) -> String {
        if let xdg = environment["XDG_DOWNLOAD_DIR"], xdg.hasPrefix("/") { return xdg + "/meshchat" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/Downloads/meshchat"
    }

    /// Offers are refused from these nodes (the messenger's block list); files already coming
    /// from a newly blocked node are cancelled.
    /// - Parameter nodes: the blocked nodes.
    public func setBlocked(_ nodes: Set<NodeID>) async {
        blocked = nodes
        for (key, progress) in transfers where nodes.contains(key.peer) && progress.direction == .incoming {
            await progress.cancel()
        }
    }

    /// The transfers running now with their progress: outgoing first, each direction by name.
    public var running: [FileTransferProgress] {
        let rows = transfers.values.filter { $0.outcome == nil }.map { FileTransferProgress(info: FileTransferInfo($0), bytes: $0.snapshot.bytes) }
        return rows.filter { $0.info.direction == .outgoing }.sorted { $0.info.name < $1.info.name }
            + rows.filter { $0.info.direction == .incoming }.sorted { $0.info.name < $1.info.name }
    }

    /// Offers a file to a peer; the rest is reported through ``events``.
    /// - Parameters:
    ///   - path: an absolute path of a regular, readable file of at most
    ///     ``FileTransferLimits/maxSendSize`` bytes (the receiver's own limit decides whether it takes it).
    ///   - peer: the receiver; out of reach, the transfer starts paused (PROTOCOL.md §16.4.1).
    /// - Returns: the transfer.
    /// - Throws: ``FileTransferError`` naming what was wrong; nothing is sent then.
    @discardableResult
    public func send(path: String, to peer: PeerID) async throws(FileTransferError) -> FileTransferInfo {
        let size: UInt64
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            size = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        } catch {
            throw FileTransferError("cannot open \(path): \((error as NSError).localizedDescription)")
        }
        guard size <= FileTransferLimits.maxSendSize else {
            throw FileTransferError("\(path) has \(size) bytes, over the limit of \(FileTransferLimits.maxSendSize) bytes "
                                    + "(\(FileTransferLimits.describe(FileTransferLimits.maxSendSize)))")
        }
        let name = FileNames.cut((path as NSString).lastPathComponent, to: FileTransferLimits.maxOfferedNameBytes)
        let progress: ResourceProgress
        do {
            progress = try await session.sendResource(at: path, withName: name, to: peer)
        } catch {
            throw FileTransferError(error.message)
        }
        let info = FileTransferInfo(progress)
        transfers[Key(peer: peer.id, id: progress.id)] = progress
        await events.push(.offered(info))
        watch.yield(progress)  // its updates (a pause first, when the peer is out of reach) follow
        return info
    }

    /// Gives up a running transfer, in either direction.
    /// - Parameter id: the transfer.
    /// - Returns: whether a running transfer had that id.
    @discardableResult
    public func cancel(_ id: FileTransferID) async -> Bool {
        guard let progress = transfers.first(where: { $0.key.id == id && $0.value.outcome == nil })?.value else { return false }
        await progress.cancel()
        return true
    }

    /// Answers offers, follows every transfer and reports it, until cancelled; then ends ``events``.
    /// Transfers still running stay with the session (on disk) and resume at the next start.
    public func run() async {
        let resources = session.resourceEvents
        await withDiscardingTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { followers in
                    for await progress in self.watched { followers.addTask { await self.follow(progress) } }
                }
            }
            // Ends when the session stops (its resource events end) or when cancelled.
            await withTaskCancellationHandler {
                for await event in resources { await self.handle(event) }
            } onCancel: { [watch] in
                watch.finish()
            }
            watch.finish()
        }
        events.finish()
    }

    // MARK: Internals

    private func handle(_ event: ResourceEvent) async {
        switch event {
        case .offered(let offer):
            let accept = !blocked.contains(offer.sender.id) && offer.size <= maxFileSize
            if !accept {
                logger.notice(blocked.contains(offer.sender.id) ? "refused a file from a blocked peer" : "refused a file over the size limit",
                              metadata: ["mesh.peer": "\(offer.sender.id.shortHex)", "file.id": "\(offer.id.shortHex)"])
            }
            await session.answerResourceOffer(offer, accept: accept)
        case .startedReceiving(let progress):
            transfers[Key(peer: progress.peer.id, id: progress.id)] = progress
            await events.push(.offered(FileTransferInfo(progress)))
            watch.yield(progress)
        case .restored(let progress):
            transfers[Key(peer: progress.peer.id, id: progress.id)] = progress
            await events.push(.offered(FileTransferInfo(progress)))
            if let outcome = progress.outcome {
                await report(outcome, FileTransferInfo(progress))
            } else {
                watch.yield(progress)
            }
        case .finishedReceiving:
            break // Followed on the transfer's own updates.
        }
    }

    /// Reports one transfer's updates until it ends.
    private func follow(_ progress: ResourceProgress) async {
        let info = FileTransferInfo(progress)
        for await update in progress {
            await report(update, info)
        }
    }

    private func report(_ update: ResourceUpdate, _ info: FileTransferInfo) async {
        switch update {
        case .progress(let snapshot):
            _ = events.offer(.progress(info, bytes: snapshot.bytes))
        case .paused:
            await events.push(.paused(info))
        case .resumed:
            await events.push(.resumed(info))
        case .completed(let path):
            transfers[Key(peer: info.peer.id, id: info.id)] = nil
            guard let path else { return await events.push(.sent(info)) }
            do {
                try FilePlacement.makeDirectory(downloads)
                let placed = try FilePlacement.place(path, in: downloads, as: info.name)
                logger.info("received a file", metadata: ["mesh.peer": "\(info.peer.id.shortHex)", "file.id": "\(info.id.shortHex)"])
                await events.push(.received(info, path: placed))
            } catch {
                logger.error("cannot store a received file: \(error)", metadata: ["file.id": "\(info.id.shortHex)"])
                try? FileManager.default.removeItem(atPath: path)
                await events.push(.failed(info, FileTransferFailure(.storageFailed, "cannot store the file: \(error)")))
            }
        case .failed(let failure):
            transfers[Key(peer: info.peer.id, id: info.id)] = nil
            await events.push(.failed(info, failure))
        }
    }
}
