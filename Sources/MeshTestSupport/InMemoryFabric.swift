import MeshTransport
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded

/// Links between sessions without sockets: `NIOAsyncTestingChannel`s on one
/// `NIOAsyncTestingEventLoop`, the two ends of each link joined by a ``Pipe`` handler at the head
/// of both pipelines. Everything above it is the real code (the transport's own pipeline, Noise,
/// admission, the session), and every NIO timer runs on the loop's virtual clock.
///
/// Each node reaches the fabric through an ``Attachment`` (its address); a session uses it as
/// its transport's ``MeshTransport/LinkFabric``. Any node may dial any listener unless the pair was
/// ``cut(_:_:)``; cutting also drops their links at once, without a goodbye, as a lost connection.
///
/// This type is thread-safe.
public final class InMemoryFabric: Sendable {
    /// The loop every link (and every session on the fabric) runs on.
    public let loop: NIOAsyncTestingEventLoop

    private struct Pair: Hashable {
        let low: String, high: String
        init(_ a: String, _ b: String) { (low, high) = a < b ? (a, b) : (b, a) }
    }

    private struct Wire {
        let pair: Pair
        let ends: [NIOAsyncTestingChannel]
    }

    private struct State {
        var listeners: [String: (channel: NIOAsyncTestingChannel, initialize: LinkInitializer)] = [:]
        var cuts: Set<Pair> = []
        var wires: [Wire] = []
        var nextPort = 40_000
    }

    private let state = NIOLockedValueBox(State())

    /// Creates an empty fabric.
    /// - Parameter loop: the test loop; a new one by default.
    public init(loop: NIOAsyncTestingEventLoop = NIOAsyncTestingEventLoop()) {
        self.loop = loop
    }

    /// One node's place on the fabric: the address it listens on and dials from.
    public struct Attachment: LinkFabric {
        /// The fabric.
        public let fabric: InMemoryFabric
        /// The node's address (an IP literal, so that it parses as a `SocketAddress`).
        public let host: String

        package func listen(host: String, port: Int, group: any EventLoopGroup,
                            initialize: @escaping LinkInitializer) async throws -> NIOAsyncChannel<LinkChannel, Never> {
            try await fabric.listen(host: self.host, port: port, initialize: initialize)
        }

        package func connect(host: String, port: Int, group: any EventLoopGroup,
                             initialize: @escaping LinkInitializer) async throws -> LinkChannel {
            try await fabric.connect(from: self.host, to: host, port: port, initialize: initialize)
        }
    }

    /// A node's attachment at `host`.
    /// - Parameter host: an IPv4 or IPv6 literal, e.g. `10.0.0.1`.
    /// - Returns: the attachment, for ``MeshTransport/TCPTransport/Settings/fabric``.
    public func attach(_ host: String) -> Attachment { Attachment(fabric: self, host: host) }

    /// Why a connect failed.
    public struct Refused: Error, CustomStringConvertible {
        /// The reason.
        public let description: String
    }

    // MARK: Adjacency

    /// Stops links between two nodes: their links drop now (no goodbye, as a lost connection) and
    /// new connects between them fail until ``heal(_:_:)``.
    /// - Parameters:
    ///   - a: one node's address.
    ///   - b: the other's.
    public func cut(_ a: String, _ b: String) async {
        let pair = Pair(a, b)
        let dropped = state.withLockedValue { state -> [NIOAsyncTestingChannel] in
            state.cuts.insert(pair)
            let (gone, kept) = (state.wires.filter { $0.pair == pair }, state.wires.filter { $0.pair != pair })
            state.wires = kept
            return gone.flatMap(\.ends)
        }
        guard !dropped.isEmpty else { return }
        try? await loop.submit {
            for channel in dropped { try? channel.pipeline.syncOperations.handler(type: Pipe.self).drop() }
        }.get()
    }

    /// Lets two nodes connect again (links are not remade: dial them).
    /// - Parameters:
    ///   - a: one node's address.
    ///   - b: the other's.
    public func heal(_ a: String, _ b: String) {
        state.withLockedValue { _ = $0.cuts.remove(Pair(a, b)) }
    }

    /// Whether a link between two nodes is open now.
    public func isLinked(_ a: String, _ b: String) -> Bool {
        state.withLockedValue { $0.wires.contains { $0.pair == Pair(a, b) && $0.ends.allSatisfy(\.isActive) } }
    }

    // MARK: Links

    private func listen(host: String, port: Int, initialize: @escaping LinkInitializer) async throws -> NIOAsyncChannel<LinkChannel, Never> {
        let chosen = try state.withLockedValue { state -> Int in
            let chosen = port != 0 ? port : state.nextPort
            if port == 0 { state.nextPort += 1 }
            guard state.listeners["\(host) \(chosen)"].map({ !$0.channel.isActive }) ?? true else {
                throw Refused(description: "\(host) port \(chosen) is in use")
            }
            return chosen
        }
        let address = try SocketAddress(ipAddress: host, port: chosen)
        let channel = NIOAsyncTestingChannel(loop: loop)
        let listener = try await loop.flatSubmit { () -> EventLoopFuture<NIOAsyncChannel<LinkChannel, Never>> in
            channel.localAddress = address
            let listener: NIOAsyncChannel<LinkChannel, Never>
            do {
                listener = try NIOAsyncChannel(wrappingChannelSynchronously: channel)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return Self.activate(channel, at: address).map { listener }
        }.get()
        state.withLockedValue { $0.listeners["\(host) \(chosen)"] = (channel, initialize) }
        return listener
    }

    private func connect(from source: String, to host: String, port: Int, initialize: @escaping LinkInitializer) async throws -> LinkChannel {
        let (listener, ephemeral) = try state.withLockedValue { state -> ((channel: NIOAsyncTestingChannel, initialize: LinkInitializer), Int) in
            if state.cuts.contains(Pair(source, host)) {
                throw Refused(description: "no path from \(source) to \(host) (cut)")
            }
            guard let listener = state.listeners["\(host) \(port)"], listener.channel.isActive else {
                throw Refused(description: "connection refused by \(host) port \(port)")
            }
            state.nextPort += 1
            return (listener, state.nextPort)
        }
        let local = try SocketAddress(ipAddress: source, port: ephemeral)
        let remote = try SocketAddress(ipAddress: host, port: port)
        let client = NIOAsyncTestingChannel(loop: loop)
        let server = NIOAsyncTestingChannel(loop: loop)
        state.withLockedValue { $0.wires.append(Wire(pair: Pair(source, host), ends: [client, server])) }
        return try await loop.flatSubmit { () -> EventLoopFuture<LinkChannel> in
            // As a bootstrap does: addresses, then the initializer, then registration and activity;
            // the accepting side is ready before the dialling side writes its first byte.
            (client.localAddress, client.remoteAddress) = (local, remote)
            (server.localAddress, server.remoteAddress) = (remote, local)
            do {
                try client.pipeline.syncOperations.addHandler(Pipe(peer: server))
                try server.pipeline.syncOperations.addHandler(Pipe(peer: client))
            } catch {
                return client.eventLoop.makeFailedFuture(error)
            }
            return listener.initialize(server)
                .flatMap { accepted in
                    Self.activate(server, at: local).map {
                        // An async channel hands on what it read at the end of a read burst.
                        listener.channel.pipeline.fireChannelRead(NIOAny(accepted))
                        listener.channel.pipeline.fireChannelReadComplete()
                    }
                }
                .flatMap { initialize(client) }
                .flatMap { link in Self.activate(client, at: remote).map { link } }
        }.get()
    }

    /// Registers a testing channel and makes it active ("connected" to `address`).
    private static func activate(_ channel: NIOAsyncTestingChannel, at address: SocketAddress) -> EventLoopFuture<Void> {
        let registered = channel.eventLoop.makePromise(of: Void.self)
        channel.register(promise: registered)
        return registered.futureResult.flatMap {
            let connected = channel.eventLoop.makePromise(of: Void.self)
            channel.connect(to: address, promise: connected)
            return connected.futureResult
        }
    }

    /// One end of a link: sends what its channel writes to the other end (on the next turn of the
    /// loop, in order, one read burst per flush) and closes the other end when its own closes.
    final class Pipe: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let peer: NIOAsyncTestingChannel
        private var pending: [ByteBuffer] = []
        private var dropped = false
        private var context: ChannelHandlerContext?

        init(peer: NIOAsyncTestingChannel) { self.peer = peer }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
        func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard !dropped else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            pending.append(unwrapOutboundIn(data))
            promise?.succeed()
        }

        func flush(context: ChannelHandlerContext) {
            guard !dropped, !pending.isEmpty else { return }
            let burst = pending
            pending.removeAll()
            let peer = self.peer
            context.eventLoop.execute {
                guard peer.isActive else { return }
                for bytes in burst { peer.pipeline.syncOperations.fireChannelRead(NIOAny(bytes)) }
                peer.pipeline.syncOperations.fireChannelReadComplete()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            // The other end sees the connection end after every byte written before it.
            let peer = self.peer
            context.eventLoop.execute {
                try? peer.pipeline.syncOperations.handler(type: Pipe.self).drop()
            }
            context.fireChannelInactive()
        }

        /// Ends this side as a lost connection: nothing more is carried, and the channel closes from
        /// its head (the link's handlers see it end; they write no goodbye through it).
        func drop() {
            guard !dropped else { return }
            dropped = true
            pending.removeAll()
            context?.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension InMemoryFabric.Pipe: Sendable {}
