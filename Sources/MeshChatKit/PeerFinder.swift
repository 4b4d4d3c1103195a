import Foundation
import Logging
import MeshDiscovery
import MeshSession
import Synchronization

/// Discovery for the chat front: announces the session, browses for peers, and either invites
/// and accepts by itself (``AutoInvitePolicy``, the default) or leaves that to the user's
/// `/invite`, `/accept` and `/decline` (`--manual`, Multipeer's explicit model).
///
/// This type is thread-safe.
public final class PeerFinder: Sendable {
    /// How invitations are handled.
    public enum Mode: Sendable {
        /// Invite found peers and accept invitations by ``AutoInvitePolicy``.
        case automatic
        /// Only the user invites, accepts and declines.
        case manual
    }

    private struct State {
        var policy: AutoInvitePolicy
        var found: [PeerID: [String]] = [:]
        var pending: [Invitation] = []
    }

    /// The invitation timeout used for every invitation: 10 s.
    public static let invitationTimeout = Duration.seconds(10)

    private let session: Session
    private let advertiser: NearbyServiceAdvertiser
    private let browser: NearbyServiceBrowser
    private let mode: Mode
    private let emit: @Sendable (ChatOutput) -> Void
    private let logger: Logger
    private let state: Mutex<State>
    private let timers: AsyncStream<(PeerID, Int, Duration)>.Continuation
    private let timerRequests: AsyncStream<(PeerID, Int, Duration)>

    /// Creates the finder.
    /// - Parameters:
    ///   - session: the started session to announce and to invite peers into.
    ///   - advertiser: announces the session.
    ///   - browser: finds peers.
    ///   - mode: automatic or manual invitations.
    ///   - logger: for diagnostics.
    ///   - emit: shows an output.
    public init(session: Session, advertiser: NearbyServiceAdvertiser, browser: NearbyServiceBrowser, mode: Mode,
                logger: Logger, emit: @escaping @Sendable (ChatOutput) -> Void) {
        self.session = session
        self.advertiser = advertiser
        self.browser = browser
        self.mode = mode
        self.logger = logger
        self.emit = emit
        self.state = Mutex(State(policy: AutoInvitePolicy(local: session.peer.peerID)))
        (timerRequests, timers) = AsyncStream.makeStream(of: (PeerID, Int, Duration).self, bufferingPolicy: .unbounded)
    }

    /// Announces and browses until the calling task is cancelled; then withdraws both.
    public func run() async {
        advertiser.start(session: session)
        browser.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followAdvertiser() }
            group.addTask { await self.followBrowser() }
            group.addTask { await self.runTimers() }
            await withTaskCancellationHandler {
                await group.waitForAll()
            } onCancel: {
                self.advertiser.close()
                self.browser.close()
                self.timers.finish()
            }
        }
    }

    /// Announces the session under a new display name (after ``Session/rename(to:)``).
    /// - Parameter displayName: the new name (already accepted by the session).
    public func rename(to displayName: String) {
        do {
            try advertiser.rename(to: displayName)
        } catch {
            logger.warning("could not announce the new name", metadata: ["error": "\(error)"])
        }
    }

    /// Feeds a session event (the front owns the session's event stream).
    /// - Parameter event: the event.
    public func sessionEvent(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let peerState):
            perform(state.withLock { $0.policy.peerChanged(peer, peerState) })
        case .invitationFailed(let peer, let failure):
            perform(state.withLock { $0.policy.invitationFailed(peer, failure) })
        case .received, .connectFailed, .reachabilityChanged, .receipt, .places, .room, .peerRenamed:
            break
        }
    }

    /// The discovered peers with their first address, for `/peers`.
    public var discovered: [(peer: PeerID, address: String?)] {
        state.withLock { state in state.found.map { ($0.key, $0.value.first) } }.sorted { $0.peer.displayName < $1.peer.displayName }
    }

    /// Peers whose invitation waits for the user's answer.
    public var pendingInvitations: [PeerID] { state.withLock { $0.pending.map(\.peer) } }

    // MARK: User commands

    /// `/invite PEER`: invites a discovered peer named by display name or id prefix.
    /// - Parameter name: the name or id prefix.
    /// - Returns: an error sentence, or `nil` when the invitation went out.
    public func invite(_ name: String) -> String? {
        let candidates = state.withLock { Array($0.found.keys) }
        switch Self.match(name, in: candidates) {
        case .failure(let message): return message
        case .success(let peer):
            do {
                try sendInvitation(to: peer)
                return nil
            } catch {
                return "\(error)"
            }
        }
    }

    /// `/accept [PEER]` and `/decline [PEER]`.
    /// - Parameters:
    ///   - name: the inviter's name or id prefix; `nil` when exactly one invitation is pending.
    ///   - accept: accept or decline.
    /// - Returns: an error sentence, or `nil` when answered.
    public func answer(_ name: String?, accept: Bool) -> String? {
        let result: Choice<Invitation> = state.withLock { state in
            if state.pending.isEmpty { return .failure("no invitation is waiting for an answer") }
            let chosen: Invitation
            if let name {
                switch Self.match(name, in: state.pending.map(\.peer)) {
                case .failure(let message): return .failure(message)
                case .success(let peer): chosen = state.pending.first { $0.peer == peer }!
                }
            } else {
                guard state.pending.count == 1 else {
                    return .failure("\(state.pending.count) invitations are waiting; name the peer: "
                                    + state.pending.map(\.peer.displayName).joined(separator: ", "))
                }
                chosen = state.pending[0]
            }
            state.pending.removeAll { $0 === chosen }
            return .success(chosen)
        }
        switch result {
        case .failure(let message): return message
        case .success(let invitation):
            if accept { invitation.accept() } else { invitation.decline(reason: "declined by the user") }
            return nil
        }
    }

    /// Finds one peer by exact display name, or else by id prefix.
    static func match(_ name: String, in peers: [PeerID]) -> Choice<PeerID> {
        switch PeerLookup.match(name, in: peers, noun: "discovered peer") {
        case .success(let peer): .success(peer)
        case .failure(let message): .failure(message)
        }
    }

    /// A value the user picked, or why none could be picked.
    enum Choice<Value> {
        case success(Value)
        case failure(String)
    }

    // MARK: Following discovery

    private func followAdvertiser() async {
        for await event in advertiser.events {
            switch event {
            case .started(let name):
                emit(.advertising(name: name, service: advertiser.serviceType.name))
            case .didNotStart(let error):
                emit(.error("discovery: \(error.message)"))
            case .receivedInvitation(let invitation):
                // Pending before it is shown: a user who reacts to the line at once finds it.
                if mode == .manual { state.withLock { $0.pending.append(invitation) } }
                emit(.invitation(invitation.peer, direction: "received", contextBytes: invitation.context.count,
                                 awaitsAnswer: mode == .manual))
                if mode == .automatic {
                    let accept = state.withLock { $0.policy.shouldAccept(invitation) }
                    if accept { invitation.accept() } else { invitation.decline() }
                }
            case .invitationEnded(let invitation, let reason):
                state.withLock { $0.pending.removeAll { $0 === invitation } }
                emit(.invitationEnded(invitation.peer, reason: reason))
            }
        }
    }

    private func followBrowser() async {
        for await event in browser.events {
            switch event {
            case .foundPeer(let peer, let info):
                let addresses = browser.endpoints(of: peer).map(\.description)
                // Read after the event: a peer whose last address went meanwhile is about to be lost.
                guard !addresses.isEmpty else { continue }
                let isNew = state.withLock { state in
                    defer { state.found[peer] = addresses }
                    return state.found[peer] == nil
                }
                emit(.found(peer, addresses: addresses, info: info, isNew: isNew))
                if mode == .automatic { perform(state.withLock { $0.policy.found(peer) }) }
            case .lostPeer(let peer):
                state.withLock { state in
                    state.found[peer] = nil
                    state.policy.lost(peer)
                }
                emit(.lost(peer))
            case .didNotStart(let error):
                emit(.error("discovery: \(error.message)"))
            }
        }
    }

    /// Invites a found peer into the session and shows that the invitation went out.
    private func sendInvitation(to peer: PeerID) throws(DiscoveryError) {
        try browser.invitePeer(peer, to: session, withContext: nil, timeout: Self.invitationTimeout)
        logger.debug("inviting", metadata: ["mesh.peer": "\(peer.id)"])
        emit(.invitation(peer, direction: "sent", contextBytes: 0))
    }

    private func perform(_ actions: [AutoInvitePolicy.Action]) {
        guard mode == .automatic else { return }
        for action in actions {
            switch action {
            case .invite(let peer):
                do {
                    try sendInvitation(to: peer)
                } catch {
                    logger.debug("could not invite", metadata: ["mesh.peer": "\(peer.id)", "error": "\(error)"])
                    let failure = InvitationFailure(.unreachable, "\(error)")
                    perform(state.withLock { $0.policy.invitationFailed(peer, failure) })
                }
            case .startTimer(let peer, let delay, let generation):
                timers.yield((peer, generation, delay))
            }
        }
    }

    /// Runs the policy's timers: one child task per timer (timers are per peer and few).
    private func runTimers() async {
        await withDiscardingTaskGroup { group in
            for await (peer, generation, delay) in timerRequests {
                group.addTask {
                    try? await Task.sleep(for: delay)
                    if Task.isCancelled { return }
                    self.perform(self.state.withLock { $0.policy.timerFired(for: peer, generation: generation) })
                }
            }
            group.cancelAll()
        }
    }
}
