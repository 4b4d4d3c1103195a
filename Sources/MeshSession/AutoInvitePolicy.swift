import MeshWire

/// When to invite discovered peers and which invitations to accept, so that peers that find
/// each other connect by themselves and exactly once (pure; no I/O, no clocks).
///
/// The rule (PROTOCOL.md §12.4): of two peers that find each other, the one with the **lower
/// node id invites at once**; the higher one waits ``fallbackDelay`` for that invitation and
/// only then invites too (it may be the only one of the two that can see the other's
/// advertisement). Should both invitations complete anyway, the session's duplicate-link rule
/// (§4.7) keeps one link, so a pair never ends with two connections. Received invitations are
/// all accepted. A failed invitation is retried with exponential backoff (``retryDelay(after:)``)
/// while the peer is still found and not connected, except after a decline: a peer that said no
/// is asked again only when it is found anew, and so is a peer that closed its link with a
/// `normal` goodbye (it left on purpose). A peer whose link failed (keepalive, error) while it is
/// still found is invited again after ``retryDelay(after:)`` (1 s), unless it is lost meanwhile.
///
/// Feed it the browser's and session's events; carry out the ``Action``s; report each requested
/// timer with ``timerFired(for:generation:)``.
public struct AutoInvitePolicy: Sendable {
    /// What the shell must do.
    public enum Action: Sendable, Equatable {
        /// Invite this peer now.
        case invite(PeerID)
        /// Call ``timerFired(for:generation:)`` after `delay`.
        case startTimer(PeerID, delay: Duration, generation: Int)
    }

    private struct Candidate {
        var connected = false
        var inviting = false
        var declined = false
        var failures = 0
        var generation = 0
    }

    /// How long the higher node id waits for the other side's invitation: 2 s.
    public static let fallbackDelay = Duration.seconds(2)
    /// The longest wait between retries: 30 s.
    public static let maxRetryDelay = Duration.seconds(30)

    private let local: PeerID
    private var candidates: [PeerID: Candidate] = [:]
    private var connected: Set<PeerID> = []

    /// Creates the policy for this node.
    /// - Parameter local: this node.
    public init(local: PeerID) {
        self.local = local
    }

    /// The wait before the next attempt after `failures` failed invitations: 1 s, 2 s, 4 s, …
    /// up to ``maxRetryDelay``.
    /// - Parameter failures: failed attempts so far (at least 1).
    /// - Returns: the delay.
    public static func retryDelay(after failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 5)
        return min(.seconds(1 << exponent), maxRetryDelay)
    }

    /// The browser found a peer (or its advertisement changed).
    /// - Parameter peer: the peer.
    /// - Returns: the actions.
    public mutating func found(_ peer: PeerID) -> [Action] {
        var candidate = candidates[peer] ?? Candidate()
        candidate.connected = connected.contains(peer)
        candidate.declined = false
        candidate.failures = 0
        candidates[peer] = candidate
        return consider(peer)
    }

    /// The browser lost a peer: no more invitations to it.
    /// - Parameter peer: the peer.
    public mutating func lost(_ peer: PeerID) {
        candidates[peer] = nil
    }

    /// A peer's session state changed.
    /// - Parameters:
    ///   - peer: the peer.
    ///   - state: its new state.
    /// - Returns: the actions (an invitation again when a found peer disconnected).
    public mutating func peerChanged(_ peer: PeerID, _ state: PeerState) -> [Action] {
        switch state {
        case .connected:
            connected.insert(peer)
            candidates[peer]?.connected = true
            candidates[peer]?.inviting = false
            candidates[peer]?.failures = 0
            return []
        case .notConnected(let reason):
            connected.remove(peer)
            guard candidates[peer] != nil else { return [] }
            candidates[peer]?.connected = false
            if candidates[peer]?.inviting == true { return [] }
            if let reason, reason.isRemote, reason.code == "\(CloseCode.normal)" {
                // The peer said goodbye on purpose (its user left, or it is shutting down): like
                // a decline, it is invited again only once it is found anew.
                candidates[peer]?.declined = true
                return []
            }
            // Not at once: a peer that is shutting down disconnects before its advertisement
            // is withdrawn, and the withdrawal (lost) should win.
            let failures = candidates[peer]?.failures ?? 0
            candidates[peer]?.failures = max(failures, 1)
            return consider(peer)
        case .connecting:
            return []
        }
    }

    /// An invitation this node made failed.
    /// - Parameters:
    ///   - peer: the invited peer.
    ///   - failure: why.
    /// - Returns: a retry timer, unless the peer declined or is gone.
    public mutating func invitationFailed(_ peer: PeerID, _ failure: InvitationFailure) -> [Action] {
        guard var candidate = candidates[peer] else { return [] }
        candidate.inviting = false
        if failure.kind == .declined {
            candidate.declined = true
            candidates[peer] = candidate
            return []
        }
        candidate.failures += 1
        candidate.generation += 1
        candidates[peer] = candidate
        guard !candidate.connected else { return [] }
        return [.startTimer(peer, delay: Self.retryDelay(after: candidate.failures), generation: candidate.generation)]
    }

    /// A timer requested by ``Action/startTimer(_:delay:generation:)`` fired.
    /// - Parameters:
    ///   - peer: the peer.
    ///   - generation: the generation the action carried; stale timers do nothing.
    /// - Returns: the actions.
    public mutating func timerFired(for peer: PeerID, generation: Int) -> [Action] {
        guard var candidate = candidates[peer], candidate.generation == generation,
              !candidate.connected, !candidate.inviting, !candidate.declined else { return [] }
        candidate.inviting = true
        candidates[peer] = candidate
        return [.invite(peer)]
    }

    /// Whether to accept a received invitation: always (the tie-break keeps one link).
    /// - Parameter invitation: the invitation.
    /// - Returns: `true`.
    public func shouldAccept(_ invitation: Invitation) -> Bool { true }

    private mutating func consider(_ peer: PeerID) -> [Action] {
        guard var candidate = candidates[peer], !candidate.connected, !candidate.inviting, !candidate.declined else { return [] }
        candidate.generation += 1
        if local.id < peer.id && candidate.failures == 0 {
            candidate.inviting = true
            candidates[peer] = candidate
            return [.invite(peer)]
        }
        candidates[peer] = candidate
        let delay = candidate.failures == 0 ? Self.fallbackDelay : Self.retryDelay(after: candidate.failures)
        return [.startTimer(peer, delay: delay, generation: candidate.generation)]
    }
}
