import Foundation
import Logging
import MeshChatKit
import MeshChat
import MeshSession
import MeshStore
import Synchronization

/// What `meshchat send` did with its line: the exit status, a sentence, and one JSON object.
struct SendReport: Sendable {
    /// The process's exit status (``ExitStatus``).
    var status: Int32
    /// `delivered`, `sent`, `queued`, `unknownPeer` or `error`.
    var outcome: String
    /// What happened, for people.
    var sentence: String
    /// The line's id, once it is stored.
    var id: String?
    /// The destination (private), or the peers it went to (to everyone).
    var to: [PeerID] = []
    /// A private line.
    var isPrivate = false

    static func failure(_ message: String, status: Int32) -> SendReport {
        SendReport(status: status, outcome: status == ExitStatus.unknownPeer ? "unknownPeer" : "error", sentence: message)
    }

    /// `{"status":…,"id":…,"to":[{"id":…,"name":…}],"private":…,"message":…,"exit":N}`.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [("status", .string(outcome))]
        if let id { members.append(("id", .string(id))) }
        if id != nil {
            members.append(("to", .array(to.map { .object([("id", .string($0.id.hex)), ("name", .string($0.displayName))]) })))
            members.append(("private", .bool(isPrivate)))
        }
        members.append(("message", .string(sentence)))
        members.append(("exit", .int(Int(status))))
        return .object(members)
    }
}

/// Runs a started node until one line is delivered (or sent, to everyone), the timeout passes,
/// or the peer turns out unknown; then says goodbye to every peer and returns the report.
///
/// Every wait is for the node's own events (a nudge per messenger event, and one at the
/// deadline), never a poll.
struct OneShotDelivery: Sendable {
    let node: ChatNode
    let finder: PeerFinder?
    /// The peer's name or id prefix, or `nil` for everyone.
    let target: String?
    let text: String
    let timeout: Duration
    let logger: Logger

    private enum Child: Sendable { case session, other }

    /// The latest status of each of this node's lines, as the messenger reports them.
    private final class Statuses: Sendable {
        private let statuses = Mutex<[String: DeliveryStatus]>([:])
        func note(_ message: StoredMessage) { statuses.withLock { $0[message.id] = message.status } }
        subscript(_ id: String) -> DeliveryStatus? { statuses.withLock { $0[id] } }
    }

    func run() async -> SendReport {
        let deadline = ContinuousClock.now + timeout
        let (nudges, nudge) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let statuses = Statuses()
        // Names are learnt as the chat learns them, and kept for it (PROTOCOL.md §20.3).
        let names = TrustBook()
        if let problem = await names.load(from: node.messenger.store) { logger.warning("\(problem)") }
        let (session, messenger, finder, me) = (node.session, node.messenger, self.finder, node.me.peerID.id)
        return await withTaskGroup(of: Child.self) { group in
            group.addTask {
                do { try await session.run() } catch { logger.error("\(error)") }
                nudge.yield()
                return .session
            }
            group.addTask {
                await messenger.run()
                return .other
            }
            if let finder {
                group.addTask {
                    await finder.run()
                    return .other
                }
            }
            group.addTask {
                for await event in messenger.events {
                    switch event {
                    case .session(let event):
                        finder?.sessionEvent(event)
                        if let (claimant, holder) = names.learn(from: event, me: me) {
                            logger.notice("\(claimant.displayName) (\(claimant.id.shortHex)) claims the name of \(holder.shortHex), whom this node knew first: another key")
                        }
                    case .status(let message):
                        statuses.note(message)
                    case .failure(let text):
                        logger.warning("\(text)")
                    case .message:
                        break
                    }
                    nudge.yield()
                }
                return .other
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                nudge.yield()
                return .other
            }
            var wake = nudges.makeAsyncIterator()
            let report = await deliver(deadline: deadline, statuses: statuses, names: names) { await wake.next() != nil }
            await names.saveChanges(to: messenger.store)
            await session.disconnect()
            // The session's run() ends after the goodbyes; then discovery and the timer stop too.
            while let child = await group.next() {
                if child == .session { group.cancelAll() }
            }
            return report
        }
    }

    /// The line's journey, as ``OneShotSend`` decides it; `wait` returns after the next event
    /// (false when there will be none).
    private func deliver(deadline: ContinuousClock.Instant, statuses: Statuses, names: TrustBook,
                         wait: () async -> Bool) async -> SendReport {
        let session = node.session
        var machine = OneShotSend(target: target, names: names.book)
        var id: String?
        var action = machine.observe(reachable: session.reachablePeers.map(\.peer), connected: session.connectedPeers, status: nil)
        while true {
            switch action {
            case .store(let peer):
                do {
                    let stored = try await node.messenger.send(text: text, to: peer)
                    id = stored.id
                    action = machine.stored(id: stored.id, status: statuses[stored.id] ?? stored.status, connected: session.connectedPeers)
                } catch {
                    return .failure("nothing was sent: \(error)", status: ExitStatus.cannotStart)
                }
            case .finish(let outcome):
                return report(outcome, id: id)
            case .wait:
                if ContinuousClock.now < deadline, await wait() {
                    machine.names = names.book
                    action = machine.observe(reachable: session.reachablePeers.map(\.peer), connected: session.connectedPeers,
                                             status: id.flatMap { statuses[$0] })
                } else {
                    machine.names = names.book
                    action = machine.deadlinePassed(known: await knownPeers(names: names.book))
                    // The machine never waits past its deadline; a wait here would spin.
                    guard action != .wait else { return .failure("nothing more to wait for", status: ExitStatus.timedOut) }
                }
            }
        }
    }

    /// The report of an outcome.
    private func report(_ outcome: OneShotSend.Outcome, id: String?) -> SendReport {
        let outbox = "the line stays in the outbox of \(node.settings.dataDirectory) and goes out the next time meshchat runs "
            + "with that data directory (do not send it again)"
        switch outcome {
        case .delivered(let peer):
            return SendReport(status: ExitStatus.ok, outcome: "delivered", sentence: "delivered to \(describe(peer))", id: id,
                              to: [peer], isPrivate: true)
        case .sent(let peers):
            return SendReport(status: ExitStatus.ok, outcome: "sent",
                              sentence: "sent to everyone: went to " + peers.map(describe).joined(separator: ", "), id: id, to: peers)
        case .queued(let peer, let reason):
            let why = switch reason {
            case .noReceipt: "no delivery receipt from \(peer.map(describe) ?? "anyone")"
            case .unreachable: "\(peer.map(describe) ?? "nobody") was not reachable"
            case .nobodyConnected: "no peer connected"
            }
            return SendReport(status: ExitStatus.timedOut, outcome: "queued", sentence: "\(why) within \(seconds(timeout)); \(outbox)",
                              id: id, to: peer.map { [$0] } ?? [], isPrivate: peer != nil)
        case .unknownPeer(let message):
            return .failure(message, status: ExitStatus.unknownPeer)
        }
    }

    /// Reachable peers, the authors of lines in the history (as `/msg` knows them), and the peers
    /// of private lines this node sent, by the name the name book holds for them when it is the
    /// target's (a peer you only ever wrote to, PROTOCOL.md §20.3).
    private func knownPeers(names: NameBook) async -> [PeerID] {
        var peers = await node.messenger.addressablePeers()
        guard let target, let holder = names.holder(of: target), !peers.contains(where: { $0.id == holder }) else { return peers }
        let sent = (try? await node.messenger.history(limit: 1000, conversation: .direct(holder))) ?? []
        if sent.contains(where: \.isOutgoing), let peer = try? PeerID(id: holder, displayName: target) {
            peers.append(peer)
        }
        return peers
    }

    private func describe(_ peer: PeerID) -> String { "\(peer.displayName) (\(peer.id.shortHex))" }

    private func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
