import struct Foundation.Data
import Logging
import MeshDiscovery
import MeshLink
import MeshWire
import NIOConcurrencyHelpers

/// Finds peers that advertise a service type and invites them into a session, in the model of
/// Multipeer Connectivity's `MCNearbyServiceBrowser`.
///
/// It browses `_<serviceType>._tcp` through avahi-daemon (or another ``DiscoveryBackend``) on every
/// interface, IPv4 and IPv6, resolving each sighting on the interface and protocol it was seen
/// on (a link-local IPv6 address keeps its interface scope). A peer seen on several interfaces
/// or protocols is one peer with several ``endpoints(of:)``; this node's own advertisement is
/// never a found peer. An advertisement whose TXT record is invalid (no node id, oversized, not
/// UTF-8, a duplicate key, another protocol version) is ignored with a log line at notice level.
///
/// ``Event/foundPeer(_:discoveryInfo:)`` is reported when a peer first appears, and again when
/// its advertisement or addresses change (for instance after it restarted on a new port).
/// This type is thread-safe.
public final class NearbyServiceBrowser: Sendable {
    /// What the browser reports.
    public enum Event: Sendable {
        /// A peer advertises the service (again, when its advertisement or addresses changed).
        case foundPeer(PeerID, discoveryInfo: [String: String])
        /// A peer no longer advertises it (its goodbye arrived, or its records expired).
        case lostPeer(PeerID)
        /// Browsing failed or stopped working (e.g. avahi-daemon is not running); the reason says
        /// what to do.
        case didNotStart(DiscoveryError)
    }

    /// This node.
    public let peer: PeerID
    /// The service type.
    public let serviceType: ServiceType
    /// Everything the browser reports (bounded by the number of peers on the network).
    public let events: AsyncStream<Event>

    private let sink: AsyncStream<Event>.Continuation
    private let backend: LazyDiscoveryBackend
    private let directory: NIOLockedValueBox<PeerDirectory>
    private let handle = NIOLockedValueBox<(any DiscoveryHandle)?>(nil)
    private let logger: Logger

    /// The longest invitation timeout: 300 s (PROTOCOL.md §4.8); shorter than 1 s counts as 1 s.
    public static let maxInvitationTimeout = Duration.seconds(300)

    /// Creates a browser.
    /// - Parameters:
    ///   - peer: this node (its own advertisement is skipped).
    ///   - serviceType: 1–15 lowercase letters, digits and hyphens (see ``ServiceType``).
    ///   - backend: where to browse; `nil` uses avahi-daemon, connected at ``start()``.
    ///   - logger: where sightings and ignored advertisements are logged.
    /// - Throws: ``DiscoveryError`` `invalidServiceType`.
    public init(peer: PeerID, serviceType: String, backend: (any DiscoveryBackend)? = nil,
                logger: Logger = Logger(label: "meshchat.discovery", factory: { _ in SwiftLogNoOpLogHandler() })) throws(DiscoveryError) {
        self.serviceType = try ServiceType(serviceType)
        self.peer = peer
        self.backend = LazyDiscoveryBackend(backend, logger: logger)
        self.directory = NIOLockedValueBox(PeerDirectory(localNode: peer.id, protocolVersion: HandshakeStateMachine.protocolVersion))
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
    }

    /// Starts browsing. Failures arrive as ``Event/didNotStart(_:)``; calling it again while
    /// running does nothing.
    public func start() {
        if handle.withLockedValue({ $0 != nil }) { return }
        do {
            let backend = try backend.get()
            let started = try backend.browse(type: serviceType.dnsType) { [weak self] event in
                self?.handle(event)
            }
            handle.withLockedValue { $0 = started }
        } catch {
            sink.yield(.didNotStart(error))
        }
    }

    /// Stops browsing; every found peer is reported lost. Idempotent.
    public func stop() {
        guard let running = handle.withLockedValue({ current in
            defer { current = nil }
            return current
        }) else { return }
        running.stop()
        let changes = directory.withLockedValue { $0.removeAll() }
        report(changes)
    }

    /// Stops and ends ``events``.
    public func close() {
        stop()
        sink.finish()
    }

    /// The peers found now, by node id.
    public var foundPeers: [PeerID] {
        directory.withLockedValue { $0.all }.compactMap { Self.peerID($0.advertisement) }
    }

    /// Where a found peer can be reached, best first (IPv4, global IPv6, link-local IPv6).
    /// - Parameter peer: a found peer.
    /// - Returns: its endpoints; empty when it is not found.
    public func endpoints(of peer: PeerID) -> [Endpoint] {
        directory.withLockedValue { $0.peer(peer.id)?.endpoints } ?? []
    }

    /// The discoveryInfo a found peer announced.
    /// - Parameter peer: a found peer.
    /// - Returns: its pairs, or `nil` when it is not found.
    public func discoveryInfo(of peer: PeerID) -> [String: String]? {
        directory.withLockedValue { $0.peer(peer.id)?.advertisement.discoveryInfo }
    }

    /// Invites a found peer into a session (Multipeer's `invitePeer(_:to:withContext:timeout:)`).
    ///
    /// Returns at once. The peer becomes ``PeerState/connecting`` and then ``PeerState/connected``
    /// in `session` when it accepts; a decline, a timeout or an unreachable peer is
    /// ``SessionEvent/invitationFailed(_:_:)``.
    /// - Parameters:
    ///   - peer: a found peer.
    ///   - session: the session to join; it must be running.
    ///   - context: up to 4,096 bytes for the invited side (untrusted there).
    ///   - timeout: how long to wait for the answer, 1 s to 300 s (clamped).
    /// - Throws: ``DiscoveryError`` `notRunning` when the peer is not (or no longer) found, or
    ///   `invalidDiscoveryInfo` for an oversized context.
    public func invitePeer(_ peer: PeerID, to session: Session, withContext context: Data?,
                           timeout: Duration) throws(DiscoveryError) {
        let context = context ?? Data()
        guard context.count <= WireLimits.maxInvitationContext else {
            throw DiscoveryError(.invalidDiscoveryInfo,
                "invitation context of \(context.count) bytes exceeds the maximum \(WireLimits.maxInvitationContext)")
        }
        let endpoints = endpoints(of: peer)
        guard !endpoints.isEmpty else {
            throw DiscoveryError(.notRunning, "peer \(peer) is not found by this browser")
        }
        logger.debug("inviting", metadata: ["mesh.peer": "\(peer.id)", "link.remote": "\(endpoints.map(\.description).joined(separator: ","))"])
        let suiteIDs = directory.withLockedValue { $0.peer(peer.id)?.advertisement.suites } ?? []
        session.invite(peer, endpoints: endpoints, context: context, timeout: timeout, suiteIDs: suiteIDs)
    }

    // MARK: Events

    private func handle(_ event: BrowseEvent) {
        let changes: [PeerDirectory.Change]
        switch event {
        case .resolved(let service):
            logger.debug("resolved", metadata: ["dns.name": "\(service.instance.name)", "dns.interface": "\(service.instance.interfaceName)",
                                                "link.remote": "\(service.address):\(service.port)"])
            changes = directory.withLockedValue { $0.resolved(service) }
        case .removed(let instance):
            logger.debug("removed", metadata: ["dns.name": "\(instance.name)", "dns.interface": "\(instance.interfaceName)"])
            changes = directory.withLockedValue { $0.removed(instance) }
        case .resolveFailed(let instance, let reason):
            logger.notice("could not resolve an advertisement", metadata: ["dns.name": "\(instance)", "error": "\(reason)"])
            changes = []
        case .failed(let error):
            logger.warning("browsing failed", metadata: ["error": "\(error)"])
            handle.withLockedValue { $0 = nil }
            report(directory.withLockedValue { $0.removeAll() })
            sink.yield(.didNotStart(error))
            return
        }
        report(changes)
    }

    private func report(_ changes: [PeerDirectory.Change]) {
        for change in changes {
            switch change {
            case .found(let found), .updated(let found):
                if let peer = Self.peerID(found.advertisement) {
                    sink.yield(.foundPeer(peer, discoveryInfo: found.advertisement.discoveryInfo))
                }
            case .lost(let lost):
                if let peer = Self.peerID(lost.advertisement) { sink.yield(.lostPeer(peer)) }
            case .ignored(let instance, let reason):
                logger.notice("ignoring advertisement \(instance): \(reason)",
                              metadata: ["dns.name": "\(instance.name)", "dns.interface": "\(instance.interfaceName)"])
            }
        }
    }

    private static func peerID(_ advertisement: Advertisement) -> PeerID? {
        try? PeerID(id: advertisement.nodeID, displayName: advertisement.displayName)
    }
}
