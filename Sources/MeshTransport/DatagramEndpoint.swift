import struct Foundation.Data
import Logging
import MeshLink
import MeshWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The UDP socket for unreliable sends (PROTOCOL.md §8).
///
/// Links register their datagram keys when they are established; the endpoint seals outgoing
/// payloads with the link's counter and opens incoming datagrams by their receiver tag, dropping
/// anything that does not authenticate or is replayed. Sends never wait: when the socket cannot
/// take more, the datagram is dropped and counted.
///
/// This type is thread-safe.
public final class DatagramEndpoint: Sendable {
    /// A datagram that authenticated.
    public struct Received: Sendable {
        /// The link's key: the peer's node id.
        public let from: NodeID
        /// The payload.
        public let payload: Data
    }

    /// Counters of dropped datagrams, for logs and tests.
    public struct Statistics: Sendable, Hashable {
        /// Datagrams sent.
        public var sent = 0
        /// Datagrams dropped at the sender because the socket was busy.
        public var droppedBusy = 0
        /// Datagrams received that authenticated.
        public var received = 0
        /// Datagrams dropped: malformed, unknown tag, failed authentication or replayed.
        public var droppedInvalid = 0
    }

    private let channel: any Channel
    private let state: NIOLockedValueBox<DatagramLinks>
    private let logger: Logger

    /// The local port.
    public var port: Int { channel.localAddress?.port ?? 0 }

    private init(channel: any Channel, state: NIOLockedValueBox<DatagramLinks>, logger: Logger) {
        self.channel = channel
        self.state = state
        self.logger = logger
    }

    /// Binds a UDP socket.
    /// - Parameters:
    ///   - group: the event loops.
    ///   - host: the address to bind.
    ///   - port: the port; by convention the TCP listener's, falling back to any free port.
    ///   - logger: for drop notices.
    ///   - onReceive: called on the event loop for every datagram that authenticated.
    /// - Returns: the endpoint.
    /// - Throws: when no port can be bound.
    public static func bind(
        group: any EventLoopGroup, host: String, port: Int, logger: Logger,
        onReceive: @escaping @Sendable (Received) -> Void
    ) async throws -> DatagramEndpoint {
        let state = NIOLockedValueBox(DatagramLinks())
        func attempt(_ port: Int) async throws -> any Channel {
            // No SO_REUSEADDR: two processes must not share a UDP port.
            try await DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            InboundDatagramHandler(state: state, logger: logger, onReceive: onReceive))
                    }
                }
                .bind(host: host, port: port).get()
        }
        let channel: any Channel
        do {
            channel = try await attempt(port)
        } catch where port != 0 {
            logger.debug("UDP port \(port) is taken; using any free port", metadata: ["error": "\(error)"])
            channel = try await attempt(0)
        }
        return DatagramEndpoint(channel: channel, state: state, logger: logger)
    }

    /// Registers an established link's keys; replaces an earlier registration of the same node.
    /// - Parameters:
    ///   - node: the peer.
    ///   - keys: the link's datagram keys.
    ///   - address: the peer's UDP address (its TCP address with its announced UDP port).
    public func register(node: NodeID, keys: DatagramKeys, address: SocketAddress) {
        state.withLockedValue { state in
            if let old = state.byNode[node] { state.nodeByTag[old.opener.tag] = nil }
            state.byNode[node] = DatagramLinks.Registration(sealer: DatagramSealer(keys: keys), opener: DatagramOpener(keys: keys), address: address)
            state.nodeByTag[keys.receiveTag] = node
        }
    }

    /// Forgets a node's link.
    /// - Parameter node: the peer.
    public func unregister(node: NodeID) {
        state.withLockedValue { state in
            if let old = state.byNode.removeValue(forKey: node) { state.nodeByTag[old.opener.tag] = nil }
        }
    }

    /// Whether a node has a registered UDP link.
    /// - Parameter node: the peer.
    public func isRegistered(_ node: NodeID) -> Bool {
        state.withLockedValue { $0.byNode[node] != nil }
    }

    /// Sends one unreliable payload; never waits.
    /// - Parameters:
    ///   - payload: at most ``WireLimits/maxUnreliablePayload`` bytes.
    ///   - node: the peer.
    /// - Returns: `false` when the datagram was dropped because the socket is busy.
    /// - Throws: ``LinkCloseReason`` for an oversized payload, or when the node has no UDP link.
    @discardableResult
    public func send(_ payload: Data, to node: NodeID) throws(LinkCloseReason) -> Bool {
        var buffer = channel.allocator.buffer(capacity: WireLimits.maxDatagramSize)
        let sealed: Result<SocketAddress, LinkCloseReason> = state.withLockedValue { state in
            guard var registration = state.byNode[node] else {
                return .failure(LinkCloseReason(.normal, "no UDP link to node \(node.shortHex)"))
            }
            do {
                try registration.sealer.seal(payload, into: &buffer)
            } catch let error as LinkCloseReason {
                return .failure(error)
            } catch {
                return .failure(LinkCloseReason(.protocolViolation, "\(error)"))
            }
            state.byNode[node] = registration
            return .success(registration.address)
        }
        let address = try sealed.get()
        guard channel.isWritable else {
            state.withLockedValue { $0.statistics.droppedBusy += 1 }
            return false
        }
        state.withLockedValue { $0.statistics.sent += 1 }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
        return true
    }

    /// The drop and traffic counters.
    public var statistics: Statistics { state.withLockedValue { $0.statistics } }

    /// Closes the socket.
    public func close() async {
        try? await channel.close()
    }
}

/// The registered links of a ``DatagramEndpoint``, guarded by its lock.
struct DatagramLinks {
    struct Registration {
        var sealer: DatagramSealer
        var opener: DatagramOpener
        var address: SocketAddress
    }

    var byNode: [NodeID: Registration] = [:]
    var nodeByTag: [UInt64: NodeID] = [:]
    var statistics = DatagramEndpoint.Statistics()

    /// Opens one received datagram; `nil` (and a count) when it is dropped.
    mutating func open(_ datagram: ByteBuffer) -> (DatagramEndpoint.Received?, String?) {
        var buffer = datagram
        let header: DatagramHeader
        do {
            header = try DatagramHeader(decoding: &buffer)
        } catch {
            statistics.droppedInvalid += 1
            return (nil, error.description)
        }
        guard let node = nodeByTag[header.tag], var registration = byNode[node] else {
            statistics.droppedInvalid += 1
            return (nil, "unknown receiver tag")
        }
        do {
            let payload = try registration.opener.open(header: header, box: buffer)
            byNode[node] = registration
            statistics.received += 1
            return (DatagramEndpoint.Received(from: node, payload: payload), nil)
        } catch {
            byNode[node] = registration
            statistics.droppedInvalid += 1
            return (nil, "\(error)")
        }
    }
}

/// Opens datagrams by tag on the UDP channel's event loop.
final class InboundDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let state: NIOLockedValueBox<DatagramLinks>
    private let logger: Logger
    private let onReceive: @Sendable (DatagramEndpoint.Received) -> Void
    private var lastDropLog: UInt64 = 0

    init(state: NIOLockedValueBox<DatagramLinks>, logger: Logger,
         onReceive: @escaping @Sendable (DatagramEndpoint.Received) -> Void) {
        self.state = state
        self.logger = logger
        self.onReceive = onReceive
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let (received, dropReason) = state.withLockedValue { $0.open(envelope.data) }
        if let received {
            onReceive(received)
        } else if let dropReason {
            // Rate-limited: at most one line a second (§8.4).
            let now = NIODeadline.now().uptimeNanoseconds
            if now - lastDropLog > 1_000_000_000 {
                lastDropLog = now
                logger.debug("dropped a datagram", metadata: ["udp.from": "\(envelope.remoteAddress)", "udp.reason": "\(dropReason)"])
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable and the like: UDP is unreliable by design; keep the socket.
        logger.debug("UDP socket error", metadata: ["error": "\(error)"])
    }
}

@available(*, unavailable)
extension InboundDatagramHandler: Sendable {}
