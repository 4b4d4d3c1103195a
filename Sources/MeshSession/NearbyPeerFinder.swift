import struct Foundation.Data
import Logging
import MeshDiscovery
import Synchronization

/// Announces a session, browses for peers and connects to them by itself: an advertiser, a
/// browser and ``AutoInvitePolicy`` run together, so that peers that find each other link up
/// exactly once (PROTOCOL.md §12.4, §4.7). In ``Mode/manual`` it only reports what it finds and
/// receives, and the application invites and answers (Multipeer's explicit model).
///
/// Feed it the session's events (``sessionEvent(_:)``: the application owns ``Session/events``)
/// and read what it reports on ``events``.
///
/// ```swift
/// let finder = NearbyPeerFinder(session: session, advertiser: advertiser, browser: browser)
/// group.addTask { await finder.run() }
/// for await event in session.events { finder.sessionEvent(event); … }
/// ```
///
/// This type is thread-safe.
public final class NearbyPeerFinder: Sendable {
    /// How invitations are handled.
    public enum Mode: Sendable, Hashable {
        /// Invite found peers and accept invitations by ``AutoInvitePolicy``.
        case automatic
        /// Report found peers and received invitations; the application invites
        /// (``invite(_:)``) and answers (``answer(_:accept:)``).
        case manual
    }

    /// What the finder reports.
    public enum Event: Sendable {
        /// The session is announced under this service instance name.
        case advertising(name: String, serviceType: String)
        /// Announcing or browsing failed (for example, avahi-daemon is not running); it is tried
        /// again when the daemon returns.
        case discoveryFailed(DiscoveryError)
        /// A peer was found (`isNew`) or its addresses or discovery info changed.
        case found(PeerID, addresses: [String], discoveryInfo: [String: String], isNew: Bool)
        /// A peer is no longer announced.
        case lost(PeerID)
        /// An invitation went out to a peer.
        case invited(PeerID)
        /// An invitation came in; in ``Mode/manual`` it waits for ``answer(_:accept:)``.
        case invitationReceived(Invitation, awaitsAnswer: Bool)
        /// A received invitation ended (answered, expired or withdrawn).
        case invitationEnded(PeerID, reason: String)
    }

    private struct State {
        var policy: AutoInvitePolicy
        var found: [PeerID: [String]] = [:]
        var pending: [Invitation] = []
    }

    /// The invitation timeout of every invitation the finder sends: 10 s.
    public static let invitationTimeout = Duration.seconds(10)
    /// Events held for a consumer that is behind; older ones are dropped beyond this.
    public static let eventCapacity = 1_024

    /// What the finder reports, in order. One consumer; ends when ``run()`` returns.
    public let events: AsyncStream<Event>
    /// How invitations are handled.
    public let mode: Mode

    private let session: Session
    private let advertiser: NearbyServiceAdvertiser
    private let browser: NearbyServiceBrowser
    private let sink: AsyncStream<Event>.Continuation
    private let logger: Logger
    private let state: Mutex<State>
    private let timers: AsyncStream<(PeerID, Int, Duration)>.Continuation
    private let timerRequests: AsyncStream<(PeerID, Int, Duration)>

    /// Creates a finder.
    /// - Parameters:
    ///   - session: the started session to announce and to invite peers into.
    ///   - advertiser: announces the session.
    ///   - browser: finds peers.
    ///   - mode: automatic (the default) or manual invitations.
    ///   - logger: for diagnostics.
    public init(session: Session, advertiser: NearbyServiceAdvertiser, browser: NearbyServiceBrowser, mode: Mode = .automatic,
                logger: Logger = Logger(label: "meshchat.discovery", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.session = session
        self.advertiser = advertiser
        self.browser = browser
        self.mode = mode
        self.logger = logger
        self.state = Mutex(State(policy: AutoInvitePolicy(local: session.peer.peerID)))
        (events, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(Self.eventCapacity))
        (timerRequests, timers) = AsyncStream.makeStream(of: (PeerID, Int, Duration).self, bufferingPolicy: .unbounded)
    }

    /// Creates a finder on avahi-daemon for a session: its advertiser and browser share one
    /// daemon connection.
    /// - Parameters:
    ///   - session: the started session.
    ///   - serviceType: the DNS-SD service type, 1–15 lowercase letters, digits and hyphens.
    ///   - discoveryInfo: key/value pairs for browsers (see ``NearbyServiceAdvertiser``).
    ///   - mode: automatic (the default) or manual invitations.
    ///   - logger: for diagnostics.
    /// - Throws: ``DiscoveryError``: `daemonNotRunning` or `daemonFailure` when avahi-daemon cannot
    ///   be reached, `invalidServiceType`, `invalidDiscoveryInfo`.
    public convenience init(session: Session, serviceType: String, discoveryInfo: [String: String]? = nil, mode: Mode = .automatic,
                            logger: Logger = Logger(label: "meshchat.discovery", factory: { _ in SwiftLogNoOpLogHandler() })) throws(DiscoveryError) {
        let backend = try AvahiDiscovery(logger: logger)
        let me = session.peer.peerID
        let advertiser = try NearbyServiceAdvertiser(peer: me, discoveryInfo: discoveryInfo, serviceType: serviceType,
                                                     backend: backend, logger: logger)
        let browser = try NearbyServiceBrowser(peer: me, serviceType: serviceType, backend: backend, logger: logger)
        self.init(session: session, advertiser: advertiser, browser: browser, mode: mode, logger: logger)
    }

    /// Announces and browses until the calling task is cancelled; then withdraws both and ends
    /// ``events``.
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
        sink.finish()
    }

    /// Announces the session under a new display name (after ``Session/rename(to:)``).
    /// - Parameter displayName: the new name (already accepted by the session).
    /// - Throws: ``SessionError`` `invalidDisplayName`.
    public func rename(to displayName: String) throws(SessionError) {
        try advertiser.rename(to: displayName)
    }

    /// Feeds a session event: links that come and go, and failed invitations, steer the policy.
    /// - Parameter event: the event, as read from ``Session/events``.
    public func sessionEvent(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let peerState):
            perform(state.withLock { $0.policy.peerChanged(peer, peerState) })
        case .invitationFailed(let peer, let failure):
            perform(state.withLock { $0.policy.invitationFailed(peer, failure) })
        default:
            break
        }
    }

    /// The peers found now, with their addresses (best first), by display name.
    public var found: [(peer: PeerID, addresses: [String])] {
        state.withLock { state in state.found.map { ($0.key, $0.value) } }.sorted { ($0.peer.displayName, $0.peer.id) < ($1.peer.displayName, $1.peer.id) }
    }

    /// Received invitations waiting for ``answer(_:accept:)`` (``Mode/manual`` only), oldest first.
    public var pendingInvitations: [Invitation] { state.withLock { $0.pending } }

    /// Invites a found peer into the session now.
    /// - Parameter peer: a peer in ``found``.
    /// - Throws: ``DiscoveryError`` when the peer is not found or cannot be dialled.
    public func invite(_ peer: PeerID) throws(DiscoveryError) {
        try browser.invitePeer(peer, to: session, withContext: nil, timeout: Self.invitationTimeout)
        logger.debug("inviting", metadata: ["mesh.peer": "\(peer.id)"])
        sink.yield(.invited(peer))
    }

    /// Answers a pending invitation.
    /// - Parameters:
    ///   - invitation: one of ``pendingInvitations``.
    ///   - accept: accept or decline.
    /// - Returns: whether it was pending (and is now answered).
    @discardableResult
    public func answer(_ invitation: Invitation, accept: Bool) -> Bool {
        let wasPending = state.withLock { state in
            guard state.pending.contains(where: { $0 === invitation }) else { return false }
            state.pending.removeAll { $0 === invitation }
            return true
        }
        guard wasPending else { return false }
        if accept { invitation.accept() } else { invitation.decline(reason: "declined by the user") }
        return true
    }

    // MARK: Following discovery

    private func followAdvertiser() async {
        for await event in advertiser.events {
            switch event {
            case .started(let name):
                sink.yield(.advertising(name: name, serviceType: advertiser.serviceType.name))
            case .didNotStart(let error):
                sink.yield(.discoveryFailed(error))
            case .receivedInvitation(let invitation):
                // Pending before it is reported: an application that reacts at once finds it.
                if mode == .manual { state.withLock { $0.pending.append(invitation) } }
                sink.yield(.invitationReceived(invitation, awaitsAnswer: mode == .manual))
                if mode == .automatic {
                    let accept = state.withLock { $0.policy.shouldAccept(invitation) }
                    if accept { invitation.accept() } else { invitation.decline() }
                }
            case .invitationEnded(let invitation, let reason):
                state.withLock { $0.pending.removeAll { $0 === invitation } }
                sink.yield(.invitationEnded(invitation.peer, reason: reason))
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
                sink.yield(.found(peer, addresses: addresses, discoveryInfo: info, isNew: isNew))
                if mode == .automatic { perform(state.withLock { $0.policy.found(peer) }) }
            case .lostPeer(let peer):
                state.withLock { state in
                    state.found[peer] = nil
                    state.policy.lost(peer)
                }
                sink.yield(.lost(peer))
            case .didNotStart(let error):
                sink.yield(.discoveryFailed(error))
            }
        }
    }

    private func perform(_ actions: [AutoInvitePolicy.Action]) {
        guard mode == .automatic else { return }
        for action in actions {
            switch action {
            case .invite(let peer):
                do {
                    try invite(peer)
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
                    // On the session's clock: virtual on a test loop.
                    do { try await self.session.sleep(for: delay) } catch { return }
                    self.perform(self.state.withLock { $0.policy.timerFired(for: peer, generation: generation) })
                }
            }
            group.cancelAll()
        }
    }
}
