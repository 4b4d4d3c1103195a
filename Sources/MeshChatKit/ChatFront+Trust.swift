import Foundation
import MeshChat
import MeshSession

extension ChatFront {
    /// How often the name book is saved when only sightings changed it (PROTOCOL.md §20.3).
    static let nameBookSaveInterval: Duration = .seconds(5)

    /// `/verify @peer`: the safety number with a reachable peer whose identity key this node holds.
    func verify(_ target: String) {
        switch PeerLookup.match(target, in: session.reachablePeers.map(\.peer), noun: "reachable peer", names: trust.book) {
        case .failure(let message):
            emit(.error("/verify: \(message)"))
        case .success(let peer):
            guard let number = session.safetyNumber(with: peer),
                  let theirs = session.identityKey(of: peer).flatMap(SafetyNumber.half(rawKey:)),
                  let mine = session.identityKey(of: session.peer.peerID).flatMap(SafetyNumber.half(rawKey:)) else {
                emit(.error("/verify: \(peer.displayName)'s identity key has not arrived yet (its advert or a link brings it)"))
                return
            }
            emit(.verify(peer, number, mine: mine, theirs: theirs))
        }
    }

    /// `/trust @peer` (`verified`) and `/untrust @peer`: records whether the user compared the
    /// safety number, on disk before it is confirmed; `/trust` alone lists the verified peers.
    func trust(_ target: String, verified: Bool) async {
        let command = verified ? "/trust" : "/untrust"
        if target.isEmpty {
            emit(.trusted(await verifiedPeers()))
            return
        }
        // A verified peer out of sight is still found (to untrust it).
        var peers = await knownPeers()
        let known = Set(peers.map(\.id))
        peers += await verifiedPeers().filter { !known.contains($0.id) }
        switch PeerLookup.match(target, in: peers, noun: "peer", names: trust.book) {
        case .failure(let message):
            emit(.error("\(command): \(message)"))
        case .success(let peer):
            do {
                try await trust.setVerified(peer, verified, store: messenger.store)
                emit(.trust(peer, verified: verified))
            } catch {
                emit(.error("\(command): \(error)"))
            }
        }
    }

    /// The verified peers, by their latest name (else a name they hold, else their id prefix).
    func verifiedPeers() async -> [PeerID] {
        let book = trust.book
        let latest = Dictionary(await knownPeers().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return book.records.filter(\.value.verified).compactMap { node, record in
            latest[node] ?? (try? PeerID(id: node, displayName: record.names.sorted().first ?? node.shortHex))
        }.sorted { ($0.displayName, $0.id) < ($1.displayName, $1.id) }
    }

    /// Feeds the name book the names the session learnt with a key: a neighbour's handshake, a
    /// signed advert (reachability, renames). A key claiming a name another key holds is reported
    /// once (`nameConflict`).
    func learnName(from event: SessionEvent) {
        // A rotation is ChatFront.keyRotated's: it tells the user.
        if case .keyRotated = event { return }
        if case .keyRotationDisputed = event { return }
        guard let (claimant, holder) = trust.learn(from: event, me: session.peer.peerID.id) else { return }
        emit(.nameConflict(claimant, holder: name(of: holder)))
    }

    /// `/forget @name`: releases a name, on disk before it is confirmed; the next key seen under it
    /// holds it.
    func forget(_ name: String) async {
        do {
            guard let holder = try await trust.forget(name: name, store: messenger.store) else {
                emit(.error("/forget: nobody holds the name \"\(name)\"; nothing changed"))
                return
            }
            emit(.notice("the name \(name) is free: the next key seen under it holds it (it was \(holder.shortHex)'s)"))
        } catch {
            emit(.error("/forget: \(error)"))
        }
    }

    /// ``knownPeers()`` and the holder of `name` in the name book (§20.3), when it is not among them
    /// (not seen this run nor in the history): a line to `@bob` then waits in the outbox for the bob
    /// the book knows, never going to another key claiming the name, also after a restart.
    func knownPeers(holding name: String) async -> [PeerID] {
        var peers = await knownPeers()
        if let holder = trust.book.holder(of: name), !peers.contains(where: { $0.id == holder }),
           let peer = try? PeerID(id: holder, displayName: name) {
            peers.append(peer)
        }
        return peers
    }

    /// A peer rotated its key (§20.2; the session verified the statement, the messenger moved the
    /// conversation): the name book hands the old node's names and verification to the new one, saved
    /// before it is shown. Said once: only when the book knew the old node.
    func keyRotated(_ peer: PeerID, previous: NodeID) async {
        if memory.lastPrivateSender?.id == previous { memory.lastPrivateSender = peer }
        // The messenger carried a block over to the new key, saved before this event came: the
        // places service and file transfers hear of it too, before the next event is handled.
        await shareBlockedAfterRotation()
        guard let verified = trust.rotate(from: previous, to: peer.id) else { return }
        emit(.keyRotated(peer, previous: previous, verified: verified))
    }

    /// A retired key named a second successor (§20.2): its private key leaked, so either successor
    /// may be an impostor. The conversation and names stay where the first statement put them, the
    /// verification carried there is withdrawn, the claimant gets nothing (it stays a new, flagged
    /// peer) and the user is warned; a block of the retired key covers the claimant too.
    func keyRotationDisputed(_ claimant: PeerID, previous: NodeID, successor: NodeID) async {
        await shareBlockedAfterRotation()
        let withdrawn = trust.dispute(successor)
        emit(.keyDisputed(previous: previous, first: name(of: successor), claimant: claimant, unverified: withdrawn))
    }

    /// Hands the block list, which a rotation may have changed, to the places service and file
    /// transfers; a store that cannot be read is said as an error line.
    private func shareBlockedAfterRotation() async {
        do {
            try await shareBlocked()
        } catch {
            emit(.error("could not read the block list to share it after a key rotation: \(error)"))
        }
    }

    /// Saves the name book every ``nameBookSaveInterval`` while sightings changed it, until cancelled.
    func keepNameBook() async {
        while !Task.isCancelled {
            do { try await session.sleep(for: Self.nameBookSaveInterval) } catch { break }
            await trust.saveIfDirty(to: messenger.store)
        }
    }
}
