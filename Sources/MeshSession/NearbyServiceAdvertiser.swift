import Logging
import MeshDiscovery
import MeshLink
import NIOConcurrencyHelpers

/// Announces a session on the local network and receives invitations to it, in the model of
/// Multipeer Connectivity's `MCNearbyServiceAdvertiser`.
///
/// It publishes `_<serviceType>._tcp` through avahi-daemon (or another ``DiscoveryBackend``)
/// under the peer's display name — Avahi picks an alternative such as `alice #2` when the name is
/// taken — with a TXT record holding the node id, the protocol version, the display name and the
/// caller's `discoveryInfo` (PROTOCOL.md §12). Invitations that browsing peers send arrive as
/// ``Event/receivedInvitation(_:)``; answer each with ``Invitation/accept()`` or
/// ``Invitation/decline(reason:)``. A session without a running advertiser declines every
/// invitation.
///
/// On Linux an advertiser announces the listening port of one ``Session``, so an accepted
/// invitation joins that session (Multipeer lets the handler pick a session at accept time).
///
/// ```swift
/// let advertiser = try NearbyServiceAdvertiser(peer: me.peerID, discoveryInfo: ["room": "blue"], serviceType: "meshchat")
/// advertiser.start(session: session)
/// for await event in advertiser.events {
///     if case .receivedInvitation(let invitation) = event { invitation.accept() }
/// }
/// ```
/// This type is thread-safe.
public final class NearbyServiceAdvertiser: Sendable {
    /// What the advertiser reports.
    public enum Event: Sendable {
        /// The service is announced under this instance name (again after a rename).
        case started(name: String)
        /// Publishing failed or stopped working (e.g. avahi-daemon is not running); the reason says
        /// what to do.
        case didNotStart(DiscoveryError)
        /// A peer invites this node into the session.
        case receivedInvitation(Invitation)
        /// An invitation ended without an answer taking effect: the inviter gave up, or it expired.
        case invitationEnded(Invitation, reason: String)
    }

    /// This node, under the name it is announced with (``rename(to:)`` changes it).
    public var peer: PeerID { current.withLockedValue { $0 } }
    /// The caller's key/value pairs, validated.
    public let discoveryInfo: [String: String]
    /// The service type.
    public let serviceType: ServiceType
    /// Everything the advertiser reports (unbounded: at most
    /// ``Session/maxPendingInvitations`` invitations are pending at once).
    public let events: AsyncStream<Event>

    private let sink: AsyncStream<Event>.Continuation
    private let current: NIOLockedValueBox<PeerID>
    private let backend: LazyDiscoveryBackend
    private let running = NIOLockedValueBox<(handle: any DiscoveryHandle, session: Session)?>(nil)
    private let logger: Logger

    /// Creates an advertiser, validating its arguments as Multipeer does.
    /// - Parameters:
    ///   - peer: this node.
    ///   - discoveryInfo: key/value pairs for browsers: keys printable ASCII without `=`, not
    ///     starting with `_`, each `key=value` at most 255 bytes, all of them at most 1,024 bytes.
    ///   - serviceType: 1–15 lowercase letters, digits and hyphens (see ``ServiceType``).
    ///   - backend: where to publish; `nil` uses avahi-daemon, connected at ``start(session:)``.
    ///   - logger: where publication events are logged.
    /// - Throws: ``DiscoveryError`` `invalidServiceType` or `invalidDiscoveryInfo`.
    public init(peer: PeerID, discoveryInfo: [String: String]? = nil, serviceType: String,
                backend: (any DiscoveryBackend)? = nil,
                logger: Logger = Logger(label: "meshchat.discovery", factory: { _ in SwiftLogNoOpLogHandler() })) throws(DiscoveryError) {
        self.serviceType = try ServiceType(serviceType)
        let info = discoveryInfo ?? [:]
        try Advertisement.validate(info)
        self.current = NIOLockedValueBox(peer)
        self.discoveryInfo = info
        self.backend = LazyDiscoveryBackend(backend, logger: logger)
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
    }

    /// Starts announcing `session` (which must be started: its port is published) and taking
    /// invitations for it. Failures arrive as ``Event/didNotStart(_:)``. Calling it again while
    /// running does nothing.
    /// - Parameter session: the session to announce; its service type must be ``serviceType``.
    public func start(session: Session) {
        if running.withLockedValue({ $0 != nil }) { return }
        guard session.configuration.serviceType == serviceType.name else {
            sink.yield(.didNotStart(DiscoveryError(.invalidServiceType,
                "the session uses service type \"\(session.configuration.serviceType)\" but the advertiser \"\(serviceType)\"")))
            return
        }
        guard let port = session.port else {
            sink.yield(.didNotStart(DiscoveryError(.notRunning, "the session is not started: call session.start() before advertising it")))
            return
        }
        let peer = self.peer
        do {
            let backend = try self.backend.get()
            var advertisement = try Advertisement(nodeID: peer.id, displayName: peer.displayName,
                                                  protocolVersion: HandshakeStateMachine.protocolVersion,
                                                  discoveryInfo: discoveryInfo)
            // The offer its links make (§4.11), so that browsers write message 1 with the right suite.
            advertisement.suites = CipherSuite.normalizedOffer(CipherSuite.localOffer).map(\.rawValue)
            let registration = ServiceRegistration(name: peer.displayName, type: serviceType.dnsType, port: port,
                                                   txt: advertisement.txt)
            let sink = self.sink
            let logger = self.logger
            session.invitationObserver.withLockedValue { observer in
                observer = { notice in
                    switch notice {
                    case .received(let invitation): sink.yield(.receivedInvitation(invitation))
                    case .ended(let invitation, let reason): sink.yield(.invitationEnded(invitation, reason: reason))
                    }
                }
            }
            let handle = try backend.publish(registration) { event in
                switch event {
                case .established(let name):
                    logger.debug("advertising", metadata: ["dns.name": "\(name)", "dns.type": "\(registration.type)", "dns.port": "\(port)"])
                    sink.yield(.started(name: name))
                case .collision(let name, let newName):
                    logger.notice("service name taken, renamed", metadata: ["dns.name": "\(name)", "dns.new_name": "\(newName)"])
                case .failed(let error):
                    logger.warning("advertising failed", metadata: ["error": "\(error)"])
                    sink.yield(.didNotStart(error))
                }
            }
            running.withLockedValue { $0 = (handle, session) }
        } catch {
            session.invitationObserver.withLockedValue { $0 = nil }
            sink.yield(.didNotStart(error))
        }
    }

    /// Announces this node under another display name (after ``Session/rename(to:)``): while
    /// running, the service is withdrawn and published again with the new instance name and TXT
    /// record, and ``Event/started(name:)`` follows; browsers see the old name lost and the new one
    /// found, with the same node id. Invitations that arrive in between are declined.
    /// - Parameter displayName: 1–63 bytes of UTF-8.
    /// - Throws: ``SessionError`` `invalidDisplayName`; nothing changes then.
    public func rename(to displayName: String) throws(SessionError) {
        let renamed = try PeerID(checking: displayName, for: peer.id)
        current.withLockedValue { $0 = renamed }
        guard let session = running.withLockedValue({ $0?.session }) else { return }
        stop()
        start(session: session)
    }

    /// Withdraws the announcement; invitations are declined from now on. Idempotent.
    public func stop() {
        guard let (handle, session) = running.withLockedValue({ state in
            defer { state = nil }
            return state
        }) else { return }
        session.invitationObserver.withLockedValue { $0 = nil }
        handle.stop()
    }

    /// Stops and ends ``events``.
    public func close() {
        stop()
        sink.finish()
    }
}
