import Logging
import MeshLink
import MeshWire
import NIOCore
import NIOPosix

/// An established or handshaking TCP link as seen by async code: events in, envelopes out.
public typealias LinkChannel = NIOAsyncChannel<LinkEvent, Envelope>

/// Opens TCP listeners and outgoing connections whose pipelines run the meshchat link protocol.
///
/// Each channel's pipeline is ``ReceivedBytesHandler`` → `ByteToMessageHandler(FrameDecoder)` → ``LinkHandler`` →
/// `NIOAsyncChannel`. The async channel's inbound buffer is bounded, so a slow application stops
/// the socket being read and TCP flow control pushes back on the sender. Outbound, write through a
/// ``LinkWriter``, which suspends while more than the high water mark of bytes is in flight
/// (PROTOCOL.md §10); the async channel's own outbound writer is not used.
///
/// This type is thread-safe.
public struct TCPTransport: Sendable {
    /// Socket and buffering settings.
    public struct Settings: Sendable {
        /// Outbound bytes queued per link before writers wait (§10): 4 MiB.
        public var writeHighWaterMark = 4 * 1024 * 1024
        /// Outbound bytes at which waiting writers resume: 1 MiB.
        public var writeLowWaterMark = 1024 * 1024
        /// Inbound events buffered per link before the socket stops being read.
        public var inboundHighWatermark = 64
        /// Inbound events at which reading resumes.
        public var inboundLowWatermark = 16
        /// How long an outgoing TCP connect may take.
        public var connectTimeout: TimeAmount = .seconds(5)
        /// Handshake and keepalive timers.
        public var timing = LinkHandler.Timing()
        /// Sees application envelopes on the event loop first (``LinkHandler/Interceptor``).
        public var interceptor: LinkHandler.Interceptor?
        /// Decides whether each link's proved peer is admitted before the link is established
        /// (PROTOCOL.md §4.9); `nil` admits every peer.
        public var admission: LinkAdmission?
        /// The display name for each new link's handshake, asked when the link starts (a node that
        /// renames itself); `nil`, or a `nil` answer, keeps ``TCPTransport/handshake``'s.
        public var displayName: (@Sendable () -> String?)?
        /// Where links come from instead of sockets (an in-memory fabric in tests); `nil` uses TCP.
        package var fabric: (any LinkFabric)?
        /// Creates the defaults.
        public init() {}
    }

    /// The event loops the sockets run on.
    public let group: any EventLoopGroup
    /// What this node says about itself in handshakes.
    public let handshake: HandshakeStateMachine.Configuration
    /// Socket and buffering settings.
    public let settings: Settings
    /// The listener's handshake budget (§4.5).
    public let budget: HandshakeBudget
    private let logger: Logger

    /// Creates a transport.
    /// - Parameters:
    ///   - group: the event loops to use.
    ///   - handshake: the handshake configuration.
    ///   - settings: socket and buffering settings.
    ///   - budget: the handshake budget for the listener.
    ///   - logger: the logger for link events.
    public init(
        group: any EventLoopGroup,
        handshake: HandshakeStateMachine.Configuration,
        settings: Settings = Settings(),
        budget: HandshakeBudget = HandshakeBudget(),
        logger: Logger
    ) {
        self.group = group
        self.handshake = handshake
        self.settings = settings
        self.budget = budget
        self.logger = logger
    }

    /// Listens for incoming links.
    /// - Parameters:
    ///   - host: the address to bind, e.g. `0.0.0.0` or `::`.
    ///   - port: the port; 0 picks any free port (read it from `localAddress`).
    /// - Returns: the server channel whose inbound sequence yields each accepted link.
    /// - Throws: when the address cannot be bound.
    public func listen(host: String, port: Int) async throws -> NIOAsyncChannel<LinkChannel, Never> {
        let settings = self.settings
        let handshake = self.handshake
        let budget = self.budget
        let logger = self.logger
        let initialize: LinkInitializer = { channel in
            channel.eventLoop.makeCompletedFuture {
                guard budget.acquire() else {
                    logger.notice("refused a connection: too many handshakes in progress",
                                  metadata: ["link.remote": "\(channel.remoteAddress.map { "\($0)" } ?? "?")",
                                             "limit": "\(budget.limit)"])
                    channel.close(promise: nil)
                    return try Self.wrap(channel, handler: nil, settings: settings)
                }
                let machine = try HandshakeStateMachine(role: .responder, configuration: settings.current(handshake))
                let handler = LinkHandler(handshake: machine, budget: budget, timing: settings.timing,
                                          interceptor: settings.interceptor, admission: settings.admission,
                                          logger: logger)
                return try Self.wrap(channel, handler: handler, settings: settings)
            }
        }
        if let fabric = settings.fabric {
            return try await fabric.listen(host: host, port: port, group: group, initialize: initialize)
        }
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.writeBufferWaterMark,
                                value: .init(low: settings.writeLowWaterMark, high: settings.writeHighWaterMark))
            .bind(host: host, port: port, childChannelInitializer: initialize)
    }

    /// Opens a link to a peer.
    /// - Parameters:
    ///   - host: the peer's host name or address.
    ///   - port: the peer's TCP port.
    ///   - invitation: makes the link an invitation (PROTOCOL.md §4.8); `nil` for a plain link.
    ///   - expecting: the node id the peer must prove; a peer with another one is refused with
    ///     `invalidIdentity` before message 3 (PROTOCOL.md §4.10). `nil` takes any peer.
    ///   - peerSuites: the peer's cipher suite offer as learnt before dialling (its DNS-SD TXT,
    ///     PROTOCOL.md §12.2), so that message 1 is written with the suite the offers select;
    ///   `nil` when unknown (see ``HandshakeStateMachine/Configuration/peerSuites``).
    /// - Returns: the link; its first event is ``LinkEvent/established(_:)`` or ``LinkEvent/closed(_:)``.
    /// - Throws: when the TCP connection cannot be made.
    public func connect(host: String, port: Int, invitation: InvitationRequest? = nil,
                        expecting: NodeID? = nil, peerSuites: [CipherSuite]? = nil) async throws -> LinkChannel {
        let settings = self.settings
        let handshake = {
            var configuration = self.handshake
            configuration.invitation = invitation
            configuration.peerSuites = peerSuites
            return configuration
        }()
        let logger = self.logger
        let initialize: LinkInitializer = { channel in
            channel.eventLoop.makeCompletedFuture {
                let machine = try HandshakeStateMachine(role: .initiator, configuration: settings.current(handshake))
                let handler = LinkHandler(handshake: machine, budget: nil, timing: settings.timing,
                                          interceptor: settings.interceptor, admission: settings.admission,
                                          expectedPeer: expecting, logger: logger)
                return try Self.wrap(channel, handler: handler, settings: settings)
            }
        }
        if let fabric = settings.fabric {
            return try await fabric.connect(host: host, port: port, group: group, initialize: initialize)
        }
        return try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.writeBufferWaterMark,
                           value: .init(low: settings.writeLowWaterMark, high: settings.writeHighWaterMark))
            .connectTimeout(settings.connectTimeout)
            .connect(host: host, port: port, channelInitializer: initialize)
    }

    private static func wrap(_ channel: any Channel, handler: LinkHandler?, settings: Settings) throws -> LinkChannel {
        if let handler {
            try channel.pipeline.syncOperations.addHandler(ReceivedBytesHandler())
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
            try channel.pipeline.syncOperations.addHandler(handler)
        }
        let link = try LinkChannel(
            wrappingChannelSynchronously: channel,
            configuration: .init(
                backPressureStrategy: .init(lowWatermark: settings.inboundLowWatermark,
                                            highWatermark: settings.inboundHighWatermark),
                isOutboundHalfClosureEnabled: false))
        // An NIOAsyncChannel dropped before anyone called executeThenClose on it traps on deinit
        // (its writer was never finished). NIO drops some it made: links accepted while the
        // listener closes, or still buffered when the accept loop stops (swift-nio #2813, #3481).
        // Holding the link until its channel closes, then closing it once more (a no-op for a link
        // already served), finishes the writer whatever happened to the link above.
        channel.closeFuture.whenComplete { _ in
            Task { try? await link.executeThenClose { _, _ in } }
        }
        return link
    }
}

extension TCPTransport.Settings {
    /// `handshake` with the current display name, when ``displayName`` gives one.
    func current(_ handshake: HandshakeStateMachine.Configuration) -> HandshakeStateMachine.Configuration {
        guard let name = displayName?() else { return handshake }
        var configuration = handshake
        configuration.displayName = name
        return configuration
    }
}
