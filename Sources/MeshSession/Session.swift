import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshRouting
import MeshTransport
import MeshDiscovery
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// A set of encrypted links to peers, in the model of Multipeer Connectivity's `MCSession`.
///
/// A session listens for links on a TCP port (and the same UDP port for unreliable sends), opens
/// links with ``connect(host:port:)``, and reports every change and every received message as a
/// ``SessionEvent`` on ``events``. Each link is authenticated and encrypted (Noise XX, see
/// `Protocol/PROTOCOL.md`); a peer is ``PeerState/connected`` once its identity has been proved.
///
/// ```swift
/// let me = try LocalPeer(displayName: "alice", dataDirectory: "/home/alice/.local/share/meshchat")
/// let session = Session(peer: me)
/// let port = try await session.start()
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await session.run() }
///     session.connect(host: "192.0.2.7", port: 7000)
///     for await event in session.events { … }
/// }
/// ```
///
/// Lifecycle: ``start()`` binds the sockets; ``run()`` serves links until ``disconnect()`` (or until
/// its task is cancelled) and must be running for anything to happen; ``events`` ends after
/// ``disconnect()``. When two links to the same peer complete at once, one survives (the one the
/// lower node id initiated, PROTOCOL.md §4.7), so a peer is connected at most once.
///
/// This type is thread-safe: every method may be called from any task.
public final class Session: Sendable {
    /// Settings of a session.
    public struct Configuration: Sendable {
        /// The service type bound into every handshake (peers with another one are refused).
        public var serviceType = "meshchat"
        /// The address to listen on: `::` (all IPv6 and IPv4 addresses) by default.
        public var host = "::"
        /// The TCP (and UDP) port; 0 picks any free port.
        public var port = 0
        /// Whether to bind a UDP socket for unreliable sends.
        public var enableUnreliable = true
        /// Events held for the application before links stop reading (PROTOCOL.md §10).
        public var eventCapacity = 1024
        /// Socket, buffering and timer settings.
        public var transport = TCPTransport.Settings()
        /// Mesh routing settings: hop limit, advert timers, cache bounds (PROTOCOL.md §13).
        public var routing = RoutingConfiguration()
        /// Resources (PROTOCOL.md §16): where transfers are kept, and what offers are accepted.
        public var resources = ResourceConfiguration()
        /// The event loops to run the sockets on; `nil` uses the process-wide group
        /// (SwiftNIO's singleton). The session never shuts a group down.
        public var eventLoopGroup: (any EventLoopGroup)?
        /// The trust hook (Multipeer's `didReceiveCertificate`): asked about every peer that has
        /// proved its identity, before its link is established, before ``SessionEvent/peerChanged(_:_:)``
        /// reports it and before the mesh learns of it (PROTOCOL.md §4.9). Return `false` to refuse:
        /// the link closes on both ends with `notAdmitted` and neither side reports it connected.
        /// `nil` (the default) admits every peer. Called on no event loop, possibly for several
        /// links at once; a hook that has not returned within ``admissionTimeout`` refuses the link
        /// (its task is cancelled).
        public var admitPeer: (@Sendable (PeerIdentity) async -> Bool)?
        /// How long ``admitPeer`` may take: default 4 s, clamped to 1 ms…``Session/maxAdmissionTimeout``
        /// (4.5 s) so that both ends' decisions fit in the handshake deadline (PROTOCOL.md §4.5).
        public var admissionTimeout: Duration = .seconds(4)
        /// Creates the defaults.
        public init() {}
    }

    /// The largest payload of one ``SendMode/unreliable`` send: 1,198 bytes (PROTOCOL.md §8.3).
    public static let maxUnreliablePayload = WireLimits.maxUnreliablePayload
    /// The largest payload of one ``SendMode/reliable`` send (16 MiB less envelope framing).
    public static let maxReliablePayload = WireLimits.maxMessageSize - 16

    /// This node, under its current display name (``rename(to:)`` changes it; the id stays).
    public var peer: LocalPeer { localPeer.withLockedValue { $0 } }
    /// The settings.
    public let configuration: Configuration
    /// Everything the session reports. One consumer; ends after ``disconnect()``.
    public let events: EventQueue<SessionEvent>

    let logger: Logger
    private let localPeer: NIOLockedValueBox<LocalPeer>
    /// This node's id (fixed for the session's life; read on every packet in transit).
    let localID: NodeID
    private let group: any EventLoopGroup
    let registry = NIOLockedValueBox(LinkRegistry())
    /// The addresses kept with ``connect(host:port:redial:)``.
    let redials = NIOLockedValueBox(RedialTable())
    /// Who hears about received invitations (the advertiser); `nil` declines them all.
    let invitationObserver = NIOLockedValueBox<(@Sendable (InvitationNotice) -> Void)?>(nil)
    /// Received invitations not yet answered.
    let pendingInvitations = NIOLockedValueBox(0)
    /// The most received invitations held unanswered at once; more are declined at once.
    public static let maxPendingInvitations = 32
    private let commands: AsyncStream<Command>
    let commandSink: AsyncStream<Command>.Continuation
    let sockets = NIOLockedValueBox<Sockets?>(nil)
    /// The mesh shell around the router (PROTOCOL.md §13).
    let mesh: MeshNode
    /// The application channels registered (PROTOCOL.md §13.12).
    let channels = ChannelRegistry()
    /// The streams' shell, made on first use (PROTOCOL.md §18).
    let streamShell = NIOLockedValueBox<StreamShell?>(nil)
    /// The router's pending timer, if armed.
    let meshTimer = NIOLockedValueBox<(due: Duration, task: Scheduled<Void>)?>(nil)
    /// The event loop that runs the router's timer.
    let timerLoop: any EventLoop
    /// The resource shell (PROTOCOL.md §16), run by ``run()``.
    let resourceShell: ResourceTransfers

    enum Command: Sendable {
        case accepted(LinkChannel)
        case dial(host: String, port: Int)
        case redial(host: String, port: Int, token: UInt64)
        case nearby(NearbyConnectionData)
        case invite(PeerID, endpoints: [Endpoint], InvitationRequest, peerSuites: [CipherSuite]?)
        case meshTimer
        case stop
    }

    struct Sockets: Sendable {
        var server: NIOAsyncChannel<LinkChannel, Never>
        var udp: DatagramEndpoint?
        var port: Int
    }

    /// Creates a session; nothing is bound until ``start()``.
    /// - Parameters:
    ///   - peer: this node.
    ///   - configuration: settings.
    ///   - logger: where link and session events are logged (library levels: debug and below,
    ///     notice for links closed by a local decision).
    public init(peer: LocalPeer, configuration: Configuration = Configuration(),
                logger: Logger = Logger(label: "meshchat.session", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.localPeer = NIOLockedValueBox(peer)
        self.localID = peer.peerID.id
        self.configuration = configuration
        self.events = EventQueue(capacity: configuration.eventCapacity)
        var logger = logger
        logger[metadataKey: "mesh.node"] = "\(peer.peerID.id.shortHex)"
        self.logger = logger
        self.group = configuration.eventLoopGroup ?? EventLoops.shared
        self.timerLoop = group.next()
        self.mesh = MeshNode(peer: peer, configuration: configuration.routing, logger: logger, clock: timerLoop)
        (self.commands, self.commandSink) = AsyncStream.makeStream(of: Command.self, bufferingPolicy: .bufferingOldest(4096))
        self.resourceShell = ResourceTransfers(directory: configuration.resources.directory ?? peer.dataDirectory.map { $0 + "/resources" },
                                               configuration: configuration.resources, clock: SessionClock(loop: timerLoop), logger: logger)
        installStreams()
    }

    // MARK: Lifecycle

    /// The transport settings with the mesh's fast path for packets in transit.
    private var transportSettings: TCPTransport.Settings {
        var settings = configuration.transport
        settings.displayName = { [weak self] in self?.peer.peerID.displayName }
        settings.admission = linkAdmission
        settings.interceptor = { [weak self] envelope, node, channel in
            self?.intercept(envelope, from: node, channel: channel) ?? false
        }
        return settings
    }

    /// Binds the TCP listener and the UDP socket.
    ///
    /// The default host `::` takes IPv6 and IPv4 alike; on a host without IPv6 (the kernel refuses
    /// the address family) the session binds `0.0.0.0` instead, so IPv4-only and IPv6-only hosts
    /// both start.
    /// - Returns: the TCP port (the chosen one when the configuration says 0).
    /// - Throws: ``SessionError`` `bindFailed` naming the address and the system's reason.
    @discardableResult
    public func start() async throws(SessionError) -> Int {
        if let port = sockets.withLockedValue({ $0?.port }) { return port }
        var firstError: SessionError?
        for host in Self.bindHosts(for: configuration.host) {
            do {
                return try await start(on: host)
            } catch {
                logger.debug("could not bind", metadata: ["net.host": "\(host)", "error": "\(error)"])
                firstError = firstError ?? error
            }
        }
        throw firstError ?? SessionError.notRunning()
    }

    /// The hosts to try binding in turn: `::`, then `0.0.0.0` for a host without IPv6.
    static func bindHosts(for host: String) -> [String] {
        host == "::" ? ["::", "0.0.0.0"] : [host]
    }

    private func start(on host: String) async throws(SessionError) -> Int {
        let udpPortHolder = NIOLockedValueBox<UInt16>(0)
        let server: NIOAsyncChannel<LinkChannel, Never>
        var handshake = HandshakeStateMachine.Configuration(
            identity: peer.identity, displayName: peer.peerID.displayName,
            serviceType: configuration.serviceType, udpPort: 0,
            capabilities: configuration.enableUnreliable ? ["udp"] : [])
        handshake.signedPrekey = mesh.endToEnd.signedPrekey
        // The UDP port is announced in handshakes; bind UDP first on the requested port so that TCP
        // and UDP share a number when the port is free for both.
        var udp: DatagramEndpoint?
        if configuration.enableUnreliable {
            do {
                udp = try await DatagramEndpoint.bind(
                    group: group, host: host, port: configuration.port, logger: logger
                ) { [weak self] datagram in
                    self?.receivedDatagram(datagram)
                }
            } catch {
                throw .bindFailed("UDP \(host) port \(configuration.port)", error)
            }
            udpPortHolder.withLockedValue { $0 = UInt16(udp!.port) }
            handshake.udpPort = UInt16(udp!.port)
        }
        let tcpPort = configuration.port != 0 ? configuration.port : (udp?.port ?? 0)
        do {
            server = try await TCPTransport(group: group, handshake: handshake, settings: transportSettings, logger: logger)
                .listen(host: host, port: tcpPort)
        } catch {
            if configuration.port == 0, tcpPort != 0 {
                // The UDP port's number is taken for TCP: any TCP port will do.
                do {
                    server = try await TCPTransport(group: group, handshake: handshake, settings: transportSettings, logger: logger)
                        .listen(host: host, port: 0)
                } catch {
                    await udp?.close()
                    throw .bindFailed("TCP \(host) port 0", error)
                }
            } else {
                await udp?.close()
                throw .bindFailed("TCP \(host) port \(tcpPort)", error)
            }
        }
        let port = server.channel.localAddress?.port ?? 0
        sockets.withLockedValue { $0 = Sockets(server: server, udp: udp, port: port) }
        logger.debug("session listening", metadata: ["tcp.port": "\(port)", "udp.port": "\(udp?.port ?? 0)"])
        return port
    }

    /// Changes this node's display name (IRC's `/nick`); the node id stays, so peers keep
    /// recognising it and private lines keep their order.
    ///
    /// A new link-state advert carries the name across the mesh at once (or within
    /// ``RoutingConfiguration/minAdvertInterval``), so every node reports
    /// ``SessionEvent/peerRenamed(_:previousName:)``; later handshakes, broadcasts and sealed packets
    /// use it, and other nodes' ``connectedPeers`` and ``reachablePeers`` show it. Announcing the
    /// name on the local network is the advertiser's: ``NearbyServiceAdvertiser/rename(to:)``.
    /// - Parameter displayName: 1–63 bytes of UTF-8.
    /// - Throws: ``SessionError`` `invalidDisplayName`; nothing changes then.
    public func rename(to displayName: String) async throws(SessionError) {
        let renamed = try peer.renamed(to: displayName)
        localPeer.withLockedValue { $0 = renamed }
        await perform(mesh.rename(renamed.peerID))
    }

    /// The TCP port, once started.
    public var port: Int? { sockets.withLockedValue { $0?.port } }

    /// Serves links until ``disconnect()`` is called or the calling task is cancelled.
    ///
    /// Accepts incoming links, makes outgoing ones, and delivers their events. Run it in its own
    /// child task; it returns after every link has closed.
    /// - Throws: ``SessionError`` `notRunning` when ``start()`` was not called.
    public func run() async throws {
        guard let sockets = sockets.withLockedValue({ $0 }) else { throw SessionError.notRunning() }
        let transport = makeTransport()
        let sink = commandSink
        // The listener runs outside the task group and is never cancelled: a cancelled iteration of
        // the server's inbound stream drops the links accepted but not yet taken from it, and an
        // NIOAsyncChannel dropped unused traps (swift-nio #2637, #3481). It ends once the server
        // channel is closed, after handing on every link already accepted.
        let listener = Task {
            do {
                try await sockets.server.executeThenClose { inbound in
                    for try await link in inbound {
                        if case .terminated = sink.yield(.accepted(link)) {
                            // Stopping: close it here (an NIOAsyncChannel must not be dropped unused).
                            try? await link.executeThenClose { _, _ in }
                        }
                    }
                }
            } catch {
                // The listener closed (disconnect) or failed; links already open carry on.
            }
        }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.resourceShell.run(session: self) }
                group.addTask { await self.tendEndToEnd() }
                for await command in commands {
                    switch command {
                    case .accepted(let link):
                        group.addTask { await self.serve(link, purpose: .accepted) }
                    case .dial(let host, let port):
                        group.addTask { await self.dial(host: host, port: port, transport: transport) }
                    case .redial(let host, let port, let token):
                        group.addTask { await self.redial(host: host, port: port, token: token, transport: transport) }
                    case .nearby(let data):
                        group.addTask { await self.dial(data, transport: transport) }
                    case .invite(let peer, let endpoints, let request, let peerSuites):
                        group.addTask {
                            await self.invite(peer, endpoints: endpoints, request: request, peerSuites: peerSuites, transport: transport)
                        }
                    case .meshTimer:
                        group.addTask { await self.perform(self.mesh.timerFired()) }
                    case .stop:
                        meshTimer.withLockedValue { $0?.task.cancel(); $0 = nil }
                        stopAllRedials()
                        try? await sockets.server.channel.close()
                        await listener.value
                        group.cancelAll()
                        await closeEverything(sockets)
                        _ = try? await Self.runBlocking { [mesh] in mesh.endToEnd.flush() }
                        // Links accepted but not served yet must still be closed: an NIOAsyncChannel
                        // that is dropped unused traps.
                        for await case .accepted(let link) in commands {
                            try? await link.executeThenClose { _, _ in }
                        }
                        return
                    }
                }
            }
        } onCancel: {
            sockets.server.channel.close(promise: nil)
        }
        // Cancelled from outside: the listener ends once the server channel has closed.
        sockets.server.channel.close(promise: nil)
        await listener.value
        events.finish()
        channels.closeAll()
    }

    /// Closes every link (peers are told, with a goodbye), stops ``run()`` and ends ``events``.
    public func disconnect() async {
        commandSink.yield(.stop)
        commandSink.finish()
    }

    private func closeEverything(_ sockets: Sockets) async {
        let links = registry.withLockedValue { $0.allChannels() }
        for channel in links { channel.close(promise: nil) }
        // Each link shuts its side after the goodbye and reads until the peer's end (at most the
        // linger, §4.7): a process that exits once this returns leaves no unread bytes behind,
        // whose reset would make peers lose the last messages sent to them.
        for channel in links { try? await channel.closeFuture.get() }
        try? await sockets.server.channel.close()
        await sockets.udp?.close()
    }

    // MARK: Connecting

    /// Opens a link to a peer at an address. Returns at once; the outcome is an event:
    /// ``SessionEvent/peerChanged(_:_:)`` with ``PeerState/connected``, or
    /// ``SessionEvent/connectFailed(address:reason:)``.
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address.
    ///   - port: the peer's TCP port.
    public func connect(host: String, port: Int) {
        commandSink.yield(.dial(host: host, port: port))
    }

    private func makeTransport() -> TCPTransport {
        let udpPort = sockets.withLockedValue { $0?.udp?.port } ?? 0
        var handshake = HandshakeStateMachine.Configuration(
            identity: peer.identity, displayName: peer.peerID.displayName,
            serviceType: configuration.serviceType, udpPort: UInt16(udpPort),
            capabilities: udpPort != 0 ? ["udp"] : [])
        handshake.signedPrekey = mesh.endToEnd.signedPrekey
        return TCPTransport(group: group, handshake: handshake, settings: transportSettings, logger: logger)
    }

    /// Dials once and serves the link.
    /// - Parameters:
    ///   - quiet: report no ``SessionEvent/connectFailed(address:reason:)`` (a redial).
    ///   - redial: the kept address's token (``connect(host:port:redial:)``).
    /// - Returns: the peer, when the link was established (it has ended by now).
    @discardableResult
    func dial(host: String, port: Int, transport: TCPTransport, quiet: Bool = false, redial: UInt64? = nil) async -> PeerID? {
        let address = Self.format(host: host, port: port)
        let link: LinkChannel
        do {
            link = try await transport.connect(host: host, port: port)
        } catch {
            logger.debug("connect failed", metadata: ["link.remote": "\(address)", "error": "\(error)"])
            if !quiet { await events.push(.connectFailed(address: address, reason: Self.describe(error))) }
            return nil
        }
        return await serve(link, purpose: .dialed(address: address, quiet: quiet, redial: redial))
    }

    /// Opens an invitation link to a discovered peer (PROTOCOL.md §4.8); the outcome is an event.
    /// `suiteIDs` is the cipher suite offer the peer advertised (TXT `_s`, §12.2), a hint for the
    /// handshake's first message (§4.11); empty when it gave none.
    func invite(_ peer: PeerID, endpoints: [Endpoint], context: Data, timeout: Duration, suiteIDs: [UInt8] = []) {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let clamped = min(max(milliseconds, Int64(WireLimits.invitationTimeoutMilliseconds.lowerBound)),
                          Int64(WireLimits.invitationTimeoutMilliseconds.upperBound))
        let known = suiteIDs.compactMap(CipherSuite.init(rawValue:))
        commandSink.yield(.invite(peer, endpoints: endpoints, InvitationRequest(context: context, timeoutMilliseconds: UInt32(clamped)),
                                  peerSuites: known.isEmpty ? nil : known))
    }

    private func invite(_ peer: PeerID, endpoints: [Endpoint], request: InvitationRequest, peerSuites: [CipherSuite]?,
                        transport: TCPTransport) async {
        let deadline = loopNow + .milliseconds(Int64(request.timeoutMilliseconds))
        var failures: [String] = []
        for endpoint in endpoints {
            if loopNow >= deadline { break }
            let link: LinkChannel
            do {
                link = try await transport.connect(host: endpoint.address, port: endpoint.port, invitation: request,
                                                   peerSuites: peerSuites)
            } catch {
                failures.append("\(endpoint): \(Self.describe(error))")
                logger.debug("invitation connect failed", metadata: ["mesh.peer": "\(peer.id)", "link.remote": "\(endpoint)", "error": "\(error)"])
                continue
            }
            await serve(link, purpose: .invitation(peer, deadline: deadline, timeoutMilliseconds: request.timeoutMilliseconds))
            return
        }
        let why = failures.isEmpty ? "no address to connect to" : failures.joined(separator: "; ")
        await events.push(.invitationFailed(peer, InvitationFailure(.unreachable, why)))
    }

    private func receivedDatagram(_ datagram: DatagramEndpoint.Received) {
        guard let peer = registry.withLockedValue({ $0.entries[datagram.from]?.peer }) else { return }
        events.offer(.received(ReceivedMessage(sender: peer, mode: .unreliable, content: .data(datagram.payload))))
    }

    // MARK: Sending

    /// The peers connected now, under their latest names (a rename after the handshake counts).
    public var connectedPeers: [PeerID] {
        registry.withLockedValue { $0.entries.values.map(\.peer) }
            .map { mesh.peer($0.id) ?? $0 }
            .sorted { $0.id < $1.id }
    }

    /// Sends bytes to peers (Multipeer's `send(_:toPeers:with:)`), connected or reachable across
    /// the mesh.
    ///
    /// To a connected peer: ``SendMode/reliable`` sends wait while the link's outbound buffer is
    /// full and return once the data is queued, in order; ``SendMode/unreliable`` sends go as UDP
    /// datagrams and never wait. To a peer reachable only through relays (``reachablePeers``), the
    /// data is sealed end to end (PROTOCOL.md §13.6) and routed hop by hop in either mode, at most
    /// ``WireLimits/maxRelayedPayload`` bytes; such sends wait while the link to the first hop is
    /// full, and relays slow a sender above their budget (§13.11), but they may still be lost when a
    /// link further on is congested or breaks (acknowledge at the application level when it matters).
    /// - Parameters:
    ///   - data: the payload.
    ///   - peers: connected or reachable peers.
    ///   - mode: reliable (TCP) or unreliable (UDP).
    /// - Throws: ``SessionError``: `payloadTooLarge`, `notConnected` (a peer is neither connected
    ///   nor reachable; the others still get the data), `noUnreliableLink`.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): a send from a task on the
    /// link's event loop (``runTasksOnEventLoops()``) is queued without a task hop, and a burst of
    /// such sends leaves in one write.
    public nonisolated(nonsending) func send(_ data: Data, to peers: [PeerID], mode: SendMode) async throws(SessionError) {
        // The usual case, one connected peer over its reliable link: one look-up, nothing built.
        if mode == .reliable, peers.count == 1, data.count <= Self.maxReliablePayload,
           let writer = registry.withLockedValue({ $0.entries[peers[0].id]?.writer }) {
            do {
                try await writer.write(.data(data), size: SecureChannel.wireSize(ofMessage: data.count + 8))
            } catch {
                throw .notConnected(peers[0])
            }
            return
        }
        let connected = registry.withLockedValue { registry in Set(peers.map(\.id).filter { registry.entries[$0] != nil }) }
        let direct = peers.filter { connected.contains($0.id) }
        var firstError: SessionError?
        for peer in peers where !connected.contains(peer.id) {
            do {
                try await sendRelayed(data, to: peer)
            } catch {
                firstError = firstError ?? (error.code == .notReachable ? .notConnected(peer) : error)
            }
        }
        switch mode {
        case .reliable:
            guard data.count <= Self.maxReliablePayload else {
                throw .payloadTooLarge(data.count, limit: Self.maxReliablePayload, mode: mode)
            }
            do {
                try await sendReliable(.data(data), size: data.count + 8, to: direct)
            } catch {
                firstError = firstError ?? error
            }
        case .unreliable:
            guard data.count <= Self.maxUnreliablePayload else {
                throw .payloadTooLarge(data.count, limit: Self.maxUnreliablePayload, mode: mode)
            }
            guard let udp = sockets.withLockedValue({ $0?.udp }) else { throw .notRunning() }
            for peer in direct {
                do {
                    try udp.send(data, to: peer.id)
                } catch {
                    let connected = registry.withLockedValue { $0.entries[peer.id] != nil }
                    firstError = firstError ?? (connected ? .noUnreliableLink(peer) : .notConnected(peer))
                }
            }
        }
        if let firstError { throw firstError }
    }

    /// Sends a line of text to neighbours over their reliable links (PROTOCOL.md §6.1): a
    /// neighbour-only message, like Multipeer's between connected peers. It does not cross
    /// relays and is not the meshchat chat application (that runs on channel 1, §17).
    /// - Parameters:
    ///   - text: at most 64 KiB of UTF-8.
    ///   - peers: connected peers.
    /// - Returns: the message id (32 hex digits), as the receivers see it.
    /// - Throws: ``SessionError`` as ``send(_:to:mode:)``.
    @discardableResult
    public func send(text: String, to peers: [PeerID]) async throws(SessionError) -> String {
        guard text.utf8.count <= WireLimits.maxChatTextBytes else {
            throw .payloadTooLarge(text.utf8.count, limit: WireLimits.maxChatTextBytes, mode: .reliable)
        }
        let id = NodeID.random()
        let millis = Int64(Date().timeIntervalSince1970 * 1000)
        try await sendReliable(.chat(id: Data(id.bytes), text: text, sentAtMilliseconds: millis), size: text.utf8.count + 40, to: peers)
        return id.hex
    }

    nonisolated(nonsending) func sendReliable(_ envelope: Envelope, size: Int, to peers: [PeerID]) async throws(SessionError) {
        var firstError: SessionError?
        for peer in peers {
            guard let writer = registry.withLockedValue({ $0.entries[peer.id]?.writer }) else {
                firstError = firstError ?? .notConnected(peer)
                continue
            }
            do {
                try await writer.write(envelope, size: SecureChannel.wireSize(ofMessage: size))
            } catch {
                firstError = firstError ?? .notConnected(peer)
            }
        }
        if let firstError { throw firstError }
    }

    /// The address of a connected peer's link, e.g. `127.0.0.1:7000` or `[fe80::1%eth0]:7000`.
    /// - Parameter peer: a peer.
    /// - Returns: the address, or `nil` when the peer is not connected.
    public func remoteAddress(of peer: PeerID) -> String? {
        guard let address = registry.withLockedValue({ $0.entries[peer.id]?.channel.remoteAddress }) else { return nil }
        return Self.format(address)
    }

    /// The cipher suite of a connected peer's link (PROTOCOL.md §4.11): `.aesGCM` when both ends
    /// have hardware AES, else `.chaChaPoly`; its `noiseProtocol` names it in full.
    /// - Parameter peer: a peer.
    /// - Returns: the suite, or `nil` when the peer is not connected.
    public func cipherSuite(of peer: PeerID) -> CipherSuite? {
        registry.withLockedValue { $0.entries[peer.id]?.suite }
    }

    static func format(_ address: SocketAddress) -> String {
        let ip = address.ipAddress ?? "?"
        if ip.hasPrefix("::ffff:"), ip.contains(".") { return "\(ip.dropFirst(7)):\(address.port ?? 0)" }
        let port = address.port ?? 0
        return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// Closes the link to one peer (it is told, with a goodbye).
    /// - Parameter peer: a connected peer.
    public func disconnect(_ peer: PeerID) {
        registry.withLockedValue { $0.entries[peer.id]?.channel }?.close(promise: nil)
    }

    static func describe(_ error: any Error) -> String { EventLoops.describe(error) }
}

/// The links of a session by peer, guarded by the session's lock.
struct LinkRegistry {
    struct Entry {
        let peer: PeerID
        let channel: any Channel
        let writer: LinkWriter
        let initiator: NodeID
        /// The suite the link's handshake negotiated.
        let suite: CipherSuite
        /// The link's inbound path, once envelopes may take it directly: set once the application
        /// has been told the peer is connected, so nothing from it can arrive before that event.
        var inbound: LinkInbound?
    }

    var entries: [NodeID: Entry] = [:]
    /// Peers whose current link the peer itself retired for another (a remote `duplicateConnection`
    /// goodbye, §4.7), not reported gone while that other link may still be admitted here.
    var handingOver: Set<NodeID> = []
    /// Per link: envelopes passed up its async stream and not yet handed on by its serving task
    /// (from the first one, until the task ends). Envelopes take the inbound path directly only while this is 0, so that a
    /// link's messages are handled in order (see `Session.intercept`).
    var passedUp: [ObjectIdentifier: Int] = [:]

    /// Removes the entry if it is still this channel's; `true` when it was.
    mutating func remove(_ node: NodeID, channel: any Channel) -> Bool {
        guard let entry = entries[node], entry.channel === channel else { return false }
        entries[node] = nil
        return true
    }

    func allChannels() -> [any Channel] { entries.values.map(\.channel) }
}
