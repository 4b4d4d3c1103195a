import MeshCore
import MeshSession

/// How the text front shows peers coming and going (the configuration's `presence`).
public enum PresenceMode: String, Sendable, CaseIterable {
    /// A burst of changes within ``PresenceSummary/window`` is one line (the default).
    case summary
    /// Every change is its own line, as it comes.
    case all
    /// No line for peers coming and going (`/peers` still lists them).
    case none
}

/// Presence changes summarised for people, as a value with virtual time (pure).
///
/// The text front hands every output to ``take(_:at:)``. Presence outputs (a peer connected,
/// disconnected, reachable across the mesh or out of reach, found or lost by discovery, an automatic
/// invitation) are held: the first opens a window of ``window``, and ``flush(at:)`` at its end
/// returns one output for all of them: the changes of one peer as its last line unchanged
/// (`* bob (1a2b3c4d) connected at 10.0.0.2:7000`), those of several as one notice
/// (`bob, carol and 3 others joined; dave left`). Each peer counts once, with its last change;
/// a link or route change wins over discovery's found and lost.
///
/// With `--manual`, an invitation sent (the user's `/invite`) is shown at once. An invitation that
/// waits for the user's answer is never held either, but is shown once
/// per peer per appearance: the inviter asks again every 10 s, and those repeats (with the
/// expiry of the previous one) are dropped until the peer connects, disconnects or is lost.
///
/// `--json` does not use it: scripts get every event.
public struct PresenceSummary: Sendable {
    /// How long a burst of changes is gathered before its line is shown.
    public static let window = Duration.seconds(2)
    /// Names a summary spells out before "and N others".
    static let namesShown = 2

    /// What happened to a peer, from the user's point of view.
    enum Change: Sendable {
        /// Discovery found it (or an automatic invitation is under way); not linked yet.
        case found
        /// Discovery lost it.
        case gone
        /// Linked, or reachable across the mesh.
        case joined
        /// Disconnected, or out of reach.
        case left

        /// A link or route change outranks discovery.
        var isMajor: Bool { self == .joined || self == .left }

        var verb: String {
            switch self {
            case .found: "found nearby"
            case .gone: "no longer seen nearby"
            case .joined: "joined"
            case .left: "left"
            }
        }
    }

    /// What ``take(_:at:)`` did with an output.
    public enum Taken: Sendable, Equatable {
        /// Not held: show it now.
        case show
        /// Dropped (mode `none`, or a repeated invitation).
        case dropped
        /// Held; a window opened that ends at this instant: call ``flush(at:)`` then.
        case held(until: ContinuousClock.Instant)
        /// Held in the window already open.
        case heldInWindow
    }

    private struct Pending: Sendable {
        var peer: PeerID
        var change: Change
        var line: ChatOutput
    }

    /// The mode.
    public let mode: PresenceMode
    /// Invitations go out by the user's `/invite` (`--manual`): each is the answer to a command, shown at once.
    public let invitesByHand: Bool
    private var pending: [Pending] = []
    private var deadline: ContinuousClock.Instant?
    /// Peers whose waiting invitation was shown in this appearance.
    private var invitedBy: Set<NodeID> = []

    /// Creates an empty summary.
    /// - Parameters:
    ///   - mode: summarise, show all, or show none.
    ///   - invitesByHand: `--manual`: an invitation sent answers the user's `/invite`, so it is not held.
    public init(mode: PresenceMode = .summary, invitesByHand: Bool = false) {
        self.mode = mode
        self.invitesByHand = invitesByHand
    }

    /// Takes one output the front is about to show.
    /// - Parameters:
    ///   - output: the output.
    ///   - now: the time now.
    /// - Returns: whether to show it now, drop it, or wait for ``flush(at:)``.
    public mutating func take(_ output: ChatOutput, at now: ContinuousClock.Instant) -> Taken {
        if let taken = invitation(output) { return taken }
        if invitesByHand, case .invitation(_, "sent", _, _) = output { return .show }
        guard let (peer, change) = Self.change(of: output) else { return .show }
        if change.isMajor || change == .gone { invitedBy.remove(peer.id) }
        switch mode {
        case .all: return .show
        case .none: return .dropped
        case .summary: break
        }
        if let index = pending.firstIndex(where: { $0.peer.id == peer.id }) {
            if change.isMajor || !pending[index].change.isMajor {
                pending[index] = Pending(peer: peer, change: change, line: output)
            }
        } else {
            pending.append(Pending(peer: peer, change: change, line: output))
        }
        if deadline != nil { return .heldInWindow }
        let end = now + Self.window
        deadline = end
        return .held(until: end)
    }

    /// Ends the window when its time has come.
    /// - Parameter now: the time now.
    /// - Returns: the one output for the burst; `nil` before the window's end or when nothing is held.
    public mutating func flush(at now: ContinuousClock.Instant) -> ChatOutput? {
        guard let deadline, now >= deadline else { return nil }
        defer {
            pending = []
            self.deadline = nil
        }
        if pending.count == 1, let only = pending.first { return only.line }
        return pending.isEmpty ? nil : .notice(Self.sentence(pending.map { ($0.peer.shownName, $0.change) }))
    }

    /// A line from a peer whose presence change is held comes after that change: the held change
    /// of that peer is taken out of the window and returned, to be shown first (the others stay).
    /// - Parameter output: an output about to be shown.
    /// - Returns: the held presence line of the output's author, or `nil`.
    public mutating func release(before output: ChatOutput) -> ChatOutput? {
        let author: PeerID
        switch output {
        case .message(_, let from, _, _, _, _, _, _, _): author = from
        case .data(let from, _, _): author = from
        default: return nil
        }
        guard let index = pending.firstIndex(where: { $0.peer.id == author.id }) else { return nil }
        return pending.remove(at: index).line
    }

    /// `bob, carol and 3 others joined; dave left`: one clause a change, in the order each first came.
    static func sentence(_ changes: [(name: String, change: Change)]) -> String {
        var order: [Change] = []
        var names: [Change: [String]] = [:]
        for (name, change) in changes {
            if names[change] == nil { order.append(change) }
            names[change, default: []].append(name)
        }
        return order.map { change in
            let all = names[change] ?? []
            return "\(list(all)) \(change.verb)"
        }.joined(separator: "; ")
    }

    /// `bob`, `bob and carol`, `bob, carol and dave`, `bob, carol and 3 others`.
    static func list(_ names: [String]) -> String {
        switch names.count {
        case 0: return ""
        case 1: return names[0]
        case 2...namesShown + 1:
            return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        default:
            return names.prefix(namesShown).joined(separator: ", ") + " and \(names.count - namesShown) others"
        }
    }

    /// A waiting invitation once per appearance; its repeats and their expiries dropped.
    private mutating func invitation(_ output: ChatOutput) -> Taken? {
        switch output {
        case .invitation(let peer, "received", _, true):
            return invitedBy.insert(peer.id).inserted ? .show : .dropped
        case .invitationEnded(let peer, _):
            return invitedBy.contains(peer.id) ? .dropped : .show
        default:
            return nil
        }
    }

    /// The presence change an output tells of, if it is one.
    private static func change(of output: ChatOutput) -> (PeerID, Change)? {
        switch output {
        case .peer(let peer, "connected", _, _): (peer, .joined)
        case .peer(let peer, "notConnected", _, _): (peer, .left)
        case .peer(let peer, _, _, _): (peer, .found)
        case .reachability(let peer, nil, _): (peer, .left)
        case .reachability(let peer, let hops?, _) where hops > 1: (peer, .joined)
        case .found(let peer, _, _, true): (peer, .found)
        case .lost(let peer): (peer, .gone)
        case .invitation(let peer, "sent", _, _): (peer, .found)
        case .invitation(let peer, "received", _, false): (peer, .found)
        default: nil
        }
    }
}
