import Foundation
import Logging
import MeshWire

extension ResourceTransfers {
    // MARK: Restarts (PROTOCOL.md §16.4.2)

    /// Loads the transfers of an earlier run from the journal: each is paused until its peer is
    /// reachable, and reported as ``ResourceEvent/restored(_:)``. A source file that changed
    /// since it was offered (size or modification time) fails its transfer with `sourceFailed`.
    func load() async {
        guard let journal else { return }
        let (sent, badSent) = journal.loadOutgoing()
        let (received, badReceived) = journal.loadIncoming()
        for path in badSent + badReceived + journal.orphans(besides: received) {
            logger.notice("removed an unreadable resource record", metadata: ["resource.file": "\(path)"])
            ResourceStorage.remove(path)
            if path.hasSuffix(".json") { ResourceStorage.remove(String(path.dropLast(5)) + ".part") }
        }
        for record in sent { await restore(record, journal: journal) }
        for record in received { await restore(record, journal: journal) }
    }

    private func restore(_ record: ResourceJournal.Outgoing, journal: ResourceJournal) async {
        guard let id = ResourceID(hex: record.id), let node = try? NodeID(hex: record.peer),
              let hash = Data(hexDigits: record.sha256), hash.count == 32,
              let peer = try? PeerID(id: node, displayName: record.peerName), record.size <= ResourceLimits.maxSize,
              (1...ResourceLimits.maxOfferedNameBytes).contains(record.name.utf8.count),
              (ResourceLimits.minChunkSize...ResourceLimits.maxChunkSize).contains(record.chunkSize) else {
            ResourceStorage.remove(journal.outgoingDirectory + "/" + record.id + ".json")
            return
        }
        guard outgoing[id] == nil else { return }  // sent in this run before the journal was loaded
        let offer = ResourceOffer(name: record.name, size: record.size, sha256: hash, chunkSize: record.chunkSize)
        let progress = makeProgress(id, .outgoing, peer, offer, bytes: 0)
        let metadata: Logger.Metadata = ["mesh.peer": "\(node.shortHex)", "resource.id": "\(id.shortHex)"]
        let opened = try? ResourceStorage.openForReading(record.path)
        guard let (handle, size) = opened, size == record.size,
              let stamp = ResourceStorage.stamp(record.path), stamp.modified == record.modified else {
            ResourceStorage.remove(journal.outgoingPath(id))
            let failure = ResourceFailure(.sourceFailed, "\(record.path) changed or went away since it was offered")
            logger.notice("a resource transfer failed at restart: \(failure)", metadata: metadata)
            progress.end(.failed(failure))
            report(.restored(progress))
            return
        }
        var machine = ResourceSendStateMachine(id: id, offer: offer)
        let actions = machine.start(now: clock.now, reachable: false)
        outgoing[id] = Outgoing(machine: machine, peer: peer, handle: handle, modified: record.modified, progress: progress,
                                reachable: false)
        logger.info("restored a resource transfer to send", metadata: metadata)
        report(.restored(progress))
        await perform(actions, outgoing: id)
    }

    private func restore(_ record: ResourceJournal.Incoming, journal: ResourceJournal) async {
        // A record is untrusted input: every number is checked before it is converted.
        guard let id = ResourceID(hex: record.id), let node = try? NodeID(hex: record.sender),
              let hash = Data(hexDigits: record.sha256), hash.count == 32,
              let peer = try? PeerID(id: node, displayName: record.senderName),
              (ResourceLimits.minChunkSize...ResourceLimits.maxChunkSize).contains(record.chunkSize),
              let offer = try? ResourceOffer(validating: ResourceOffer(name: record.name, size: record.size, sha256: hash,
                                                                       chunkSize: record.chunkSize).payload) else {
            remove(record, journal: journal)
            return
        }
        let key = Key(peer: node, id: id)
        guard incoming[key] == nil else { return }
        let stem = journal.incomingStem(node, id)
        guard let handle = try? ResourceStorage.openExisting(stem + ".part") else {
            remove(record, journal: journal)
            return
        }
        let machine = ResourceReceiveStateMachine(restoring: id, offer: offer, next: record.next, stored: Set(record.stored),
                                                  incarnation: .random(in: 1...UInt64.max), now: clock.now)
        var resumed = machine
        let actions = resumed.resume()
        let progress = makeProgress(id, .incoming, peer, offer, bytes: machine.bytesStored)
        incoming[key] = Incoming(machine: resumed, peer: peer, handle: handle, record: record, progress: progress,
                                 reachable: false, checkpointedAt: clock.now)
        logger.info("restored a resource transfer to receive", metadata: ["mesh.peer": "\(node.shortHex)", "resource.id": "\(id.shortHex)",
                                                                          "resource.bytes": "\(machine.bytesStored)"])
        report(.restored(progress))
        progress.pause(true)
        await perform(actions, incoming: key, chunk: nil)
    }

    private func remove(_ record: ResourceJournal.Incoming, journal: ResourceJournal) {
        let stem = journal.incomingDirectory + "/" + record.sender + "-" + record.id
        ResourceStorage.remove(stem + ".json")
        ResourceStorage.remove(stem + ".part")
    }

    /// The session stops: received state is checkpointed, and every progress sequence ends
    /// without an outcome (the transfers resume at the next start on the same directory).
    func suspendAll() {
        checkpoints?.finish()
        checkpoints = nil
        for key in incoming.keys { checkpointNow(key) }
        for transfer in outgoing.values { transfer.progress.suspend() }
        for transfer in incoming.values { transfer.progress.suspend() }
        outgoing = [:]
        incoming = [:]
        pending = [:]
    }
}
