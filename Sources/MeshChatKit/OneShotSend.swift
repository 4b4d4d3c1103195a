import MeshSession
import MeshStore

/// The decisions of `meshchat send` as a state machine (pure; no I/O, no clock): which peer the
/// line goes to, when to hand it to the messenger, and when the command is done.
///
/// The shell feeds it what it sees: ``observe(reachable:connected:status:)`` at start and after
/// every event of the node (peers, reachability, the line's status), and
/// ``deadlinePassed(known:)`` once the timeout has passed. Each input returns an ``Action``.
///
/// States:
/// - *resolving* (with a target): waiting until exactly one reachable peer goes by the target
///   name (display name, then any case, then id prefix, as `/msg` matches). Several reachable
///   matches finish at once with ``Outcome/unknownPeer(_:)`` (ambiguous). At the deadline a
///   peer known from the history gets the line queued; a name nobody has finishes as unknown.
/// - *storing*: ``Action/store(to:)`` was returned; the shell stores the line and calls
///   ``stored(id:status:connected:)``.
/// - *waiting*: for the receipt (private: status `delivered`) or for the first transmission
///   (to everyone: status `sent`). The deadline finishes it as ``Outcome/queued(_:reason:)``.
/// - *done*: every input returns ``Action/wait`` (the shell stops at ``Action/finish(_:)``).
public struct OneShotSend: Sendable {
    /// What became of the line.
    public enum Outcome: Sendable, Hashable {
        /// The peer's receipt came back.
        case delivered(PeerID)
        /// The line to everyone went to these connected peers.
        case sent([PeerID])
        /// The deadline passed first; the line is in the outbox (`nil`: to everyone).
        case queued(PeerID?, reason: QueueReason)
        /// No peer, or several, go by the name: the sentence to show; nothing was stored.
        case unknownPeer(String)
    }

    /// Why a line is still queued at the deadline.
    public enum QueueReason: Sendable, Hashable {
        /// The peer was reachable and the line sent, but no receipt came back.
        case noReceipt
        /// The peer, known from the history, was never reachable.
        case unreachable
        /// Nobody was connected (a line to everyone).
        case nobodyConnected
    }

    /// What the shell does next.
    public enum Action: Sendable, Hashable {
        /// Wait for the next event (or the deadline).
        case wait
        /// Store the line through the messenger, to this peer (`nil`: to everyone), then call
        /// ``stored(id:status:connected:)``.
        case store(to: PeerID?)
        /// Done: report the outcome.
        case finish(Outcome)
    }

    private enum State: Sendable {
        /// Finding the target (`nil`: everyone, nothing to find).
        case resolving(String?)
        /// ``Action/store(to:)`` was returned once; never again (no line is stored twice).
        case storing(PeerID?, unreachable: Bool)
        case waiting(id: String, to: PeerID?)
        case done
    }

    private var state: State
    /// Which key holds each name: a name goes only to its holder (PROTOCOL.md §20.3). The caller
    /// keeps it current as the node learns names.
    public var names: NameBook

    /// Creates the machine.
    /// - Parameters:
    ///   - target: the peer's name or id prefix (without `@`), or `nil` for everyone.
    ///   - names: the node's name book (a key claiming a name another key holds is reached by id only).
    public init(target: String?, names: NameBook = NameBook()) {
        state = .resolving(target)
        self.names = names
    }

    // MARK: Inputs

    /// What the node sees now: at start, and after each of its events.
    /// - Parameters:
    ///   - reachable: the peers reachable across the mesh.
    ///   - connected: the neighbours.
    ///   - status: the stored line's latest status, once stored.
    /// - Returns: what to do.
    public mutating func observe(reachable: [PeerID], connected: [PeerID], status: DeliveryStatus?) -> Action {
        switch state {
        case .resolving(nil):
            state = .storing(nil, unreachable: false)
            return .store(to: nil)
        case .resolving(let target?):
            let candidates = PeerLookup.candidates(target, in: reachable, names: names)
            if candidates.count > 1, case .failure(let message) = PeerLookup.match(target, in: reachable, noun: "reachable peer", names: names) {
                return finish(.unknownPeer("\(message); nothing was sent"))
            }
            guard let peer = candidates.first else { return .wait }
            state = .storing(peer, unreachable: false)
            return .store(to: peer)
        case .storing:
            return .wait
        case .waiting(_, let peer?):
            return status == .delivered ? finish(.delivered(peer)) : .wait
        case .waiting(_, nil):
            return status == .sent ? finish(.sent(connected)) : .wait
        case .done:
            return .wait
        }
    }

    /// The messenger stored the line.
    /// - Parameters:
    ///   - id: the line's id.
    ///   - status: its status right after storing (`sent` when it went out at once).
    ///   - connected: the neighbours now.
    /// - Returns: what to do.
    public mutating func stored(id: String, status: DeliveryStatus, connected: [PeerID]) -> Action {
        guard case .storing(let peer, let unreachable) = state else { return .wait }
        if unreachable { return finish(.queued(peer, reason: peer == nil ? .nobodyConnected : .unreachable)) }
        state = .waiting(id: id, to: peer)
        return observe(reachable: [], connected: connected, status: status)
    }

    /// The timeout passed.
    /// - Parameter known: peers known from the history (and reachable ones), for a target that
    ///   never became reachable.
    /// - Returns: what to do: store the line for a known peer (it stays queued), or finish.
    public mutating func deadlinePassed(known: [PeerID]) -> Action {
        switch state {
        case .resolving(nil):
            state = .storing(nil, unreachable: true)
            return .store(to: nil)
        case .resolving(let target?):
            let candidates = PeerLookup.candidates(target, in: known, names: names)
            if candidates.count > 1, case .failure(let message) = PeerLookup.match(target, in: known, noun: "peer", names: names) {
                return finish(.unknownPeer("\(message); nothing was sent"))
            }
            guard let peer = candidates.first else {
                if let problem = PeerLookup.claimantProblem(target, in: known, noun: "known peer", names: names) {
                    return finish(.unknownPeer("\(problem); nothing was sent"))
                }
                return finish(.unknownPeer("no peer called \"\(target)\" was reachable, and none is in the history; nothing was sent"))
            }
            state = .storing(peer, unreachable: true)
            return .store(to: peer)
        case .storing:
            return .wait
        case .waiting(_, let peer):
            return finish(.queued(peer, reason: peer == nil ? .nobodyConnected : .noReceipt))
        case .done:
            return .wait
        }
    }

    private mutating func finish(_ outcome: Outcome) -> Action {
        state = .done
        return .finish(outcome)
    }
}
