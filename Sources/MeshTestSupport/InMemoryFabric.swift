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
    /// Bytes each direction of a link carries that its reader has not read, at most (what the
    /// socket buffers of a TCP connection hold): a writer's further bytes wait with their write
    /// promises open.
    public let bufferBytes: Int

    private struct Pair: Hashable {
        let low: String, high: String
        init(_ a: String, _ b: String) { (low, high) = a < b ? (a, b) : (b, a) }
    }

    private struct Wire {
        let pair: Pair
        /// The address that dialled the link.
        let dialler: String
        /// The dialling end's channel, then the accepting end's.
        let ends: [NIOAsyncTestingChannel]
        /// Each direction's queues, by the address that sends on it.
        let queues: [String: Queued]
    }

    private struct State {
        var listeners: [String: (channel: NIOAsyncTestingChannel, initialize: LinkInitializer)] = [:]
        var cuts: Set<Pair> = []
        var wires: [Wire] = []
        var nextPort = 40_000
    }

    private let state = NIOLockedValueBox(State())

    /// Creates an empty fabric.
    /// - Parameters:
    ///   - loop: the test loop; a new one by default.
    ///   - bufferBytes: what each direction of a link holds unread (256 KiB by default).
    public init(loop: NIOAsyncTestingEventLoop = NIOAsyncTestingEventLoop(), bufferBytes: Int = 256 * 1024) {
        self.loop = loop
        self.bufferBytes = max(1, bufferBytes)
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

    /// What the links from one node to another hold now: bytes in the fabric that the reader has not
    /// read (`buffered`, at most ``bufferBytes`` a link, beyond one write), and bytes the writer
    /// wrote that wait for room (`held`, their write promises open).
    /// - Parameters:
    ///   - source: the writing node's address.
    ///   - destination: the reading node's address.
    public func queued(from source: String, to destination: String) -> (buffered: Int, held: Int) {
        let queues = state.withLockedValue { $0.wires.filter { $0.pair == Pair(source, destination) }.compactMap { $0.queues[source] } }
        return queues.reduce((0, 0)) { total, queue in
            (total.0 + queue.buffered.withLockedValue { $0 }, total.1 + queue.held.withLockedValue { $0 })
        }
    }

    /// Holds back what `source` sends to `destination` on the links between them that `dialler`
    /// dialled (those open now): the bytes wait in the fabric with their write promises open, as
    /// on a congested path, until ``release(from:to:)``. Other links between the two, and the
    /// other direction, go on. For races between two links of one pair of nodes.
    /// - Parameters:
    ///   - source: the sending node's address.
    ///   - destination: the receiving node's address.
    ///   - dialler: the address that dialled the links to stall.
    public func stall(from source: String, to destination: String, dialledBy dialler: String) {
        let queues = state.withLockedValue { state in
            state.wires.filter { $0.pair == Pair(source, destination) && $0.dialler == dialler }.compactMap { $0.queues[source] }
        }
        for queue in queues { queue.stalled.withLockedValue { $0 = true } }
    }

    /// Lets the stalled bytes from `source` to `destination` go on (``stall(from:to:dialledBy:)``).
    /// - Parameters:
    ///   - source: the sending node's address.
    ///   - destination: the receiving node's address.
    public func release(from source: String, to destination: String) async {
        let ends = state.withLockedValue { state -> [NIOAsyncTestingChannel] in
            state.wires.filter { $0.pair == Pair(source, destination) }.compactMap { wire in
                guard let queue = wire.queues[source], queue.stalled.withLockedValue({ $0 }) else { return nil }
                queue.stalled.withLockedValue { $0 = false }
                return wire.dialler == source ? wire.ends[0] : wire.ends[1]
            }
        }
        guard !ends.isEmpty else { return }
        try? await loop.submit {
            for channel in ends { try? channel.pipeline.syncOperations.handler(type: Pipe.self).resume() }
        }.get()
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
        let (up, down, capacity) = (Queued(), Queued(), bufferBytes)
        state.withLockedValue {
            $0.wires.append(Wire(pair: Pair(source, host), dialler: source, ends: [client, server], queues: [source: up, host: down]))
        }
        return try await loop.flatSubmit { () -> EventLoopFuture<LinkChannel> in
            // As a bootstrap does: addresses, then the initializer, then registration and activity;
            // the accepting side is ready before the dialling side writes its first byte.
            (client.localAddress, client.remoteAddress) = (local, remote)
            (server.localAddress, server.remoteAddress) = (remote, local)
            let clientEnd = Pipe(capacity: capacity, outgoing: up, incoming: down)
            let serverEnd = Pipe(capacity: capacity, outgoing: down, incoming: up)
            (clientEnd.partner, serverEnd.partner) = (serverEnd, clientEnd)
            do {
                try client.pipeline.syncOperations.addHandler(clientEnd)
                try server.pipeline.syncOperations.addHandler(serverEnd)
            } catch {
                return client.eventLoop.makeFailedFuture(error)
            }
            return listener.initialize(server)
                .flatMap { accepted in
                    Self.activate(server, at: local).map {
                        // Auto-read, as a socket channel does once active.
                        server.pipeline.syncOperations.read()
                        // An async channel hands on what it read at the end of a read burst.
                        listener.channel.pipeline.fireChannelRead(NIOAny(accepted))
                        listener.channel.pipeline.fireChannelReadComplete()
                    }
                }
                .flatMap { initialize(client) }
                .flatMap { link in
                    Self.activate(client, at: remote).map {
                        client.pipeline.syncOperations.read()
                        return link
                    }
                }
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

    /// Bytes one direction of a link holds, readable from any thread.
    final class Queued: Sendable {
        /// Bytes the fabric carries towards the reader and it has not read.
        let buffered = NIOLockedValueBox(0)
        /// Bytes the writer wrote and flushed that the fabric has not taken yet (its buffer was full).
        let held = NIOLockedValueBox(0)
        /// The direction is stalled (``InMemoryFabric/stall(from:to:dialledBy:)``): nothing moves.
        let stalled = NIOLockedValueBox(false)
    }

    /// One end of a link, modelled on a TCP socket with finite buffers and reads on demand.
    ///
    /// Writing: what its channel flushes goes to the other end's buffer while that holds less than
    /// ``InMemoryFabric/bufferBytes``; the rest waits here with its write promise open, as bytes
    /// wait in a full socket (a ``MeshTransport/LinkWriter`` counts them in flight and its writers
    /// wait). Reading: bytes reach the channel only while a `read()` came down its pipeline (as on
    /// a socket with auto-read: one after activation and after each read burst), so a handler that
    /// withholds reads (``MeshTransport/LinkHandler/HoldReads``, an async channel that is full) stops
    /// delivery, and the bytes wait in the fabric. When the other end closes, this end reads what
    /// was sent before the end, then ends.
    final class Pipe: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let capacity: Int
        /// The other end.
        weak var partner: Pipe?
        /// This end's outgoing direction (writes held here) and incoming one (its inbox).
        let outgoing: Queued, incoming: Queued
        private var unflushed: [(bytes: ByteBuffer, promise: EventLoopPromise<Void>?)] = []
        private var held: [(bytes: ByteBuffer, promise: EventLoopPromise<Void>?)] = []
        private var inbox: [ByteBuffer] = []
        private var inboxBytes = 0
        private var readRequested = false
        private var deliveryScheduled = false
        private var partnerEnded = false
        private var dropped = false
        private var context: ChannelHandlerContext?

        init(capacity: Int, outgoing: Queued, incoming: Queued) {
            self.capacity = capacity
            self.outgoing = outgoing
            self.incoming = incoming
        }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
        func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

        // MARK: Writing side

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard !dropped else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            unflushed.append((unwrapOutboundIn(data), promise))
        }

        func flush(context: ChannelHandlerContext) {
            guard !dropped, !unflushed.isEmpty else { return }
            let bytes = unflushed.reduce(0) { $0 + $1.bytes.readableBytes }
            held += unflushed
            unflushed.removeAll()
            outgoing.held.withLockedValue { $0 += bytes }
            // On the next turn of the loop, as a socket's peer reads after this write returns.
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.transfer(force: false) }
        }

        /// Hands held writes to the other end while its buffer has room (all of them when `force`:
        /// this end is closing and the bytes were sent before the end), completing their promises.
        private func transfer(force: Bool) {
            guard let partner, !partner.dropped, force || !outgoing.stalled.withLockedValue({ $0 }) else { return }
            var moved: [ByteBuffer] = []
            var bytes = 0
            while let first = held.first, force || partner.inboxBytes + bytes == 0 || partner.inboxBytes + bytes + first.bytes.readableBytes <= capacity {
                held.removeFirst()
                moved.append(first.bytes)
                bytes += first.bytes.readableBytes
                first.promise?.succeed()
            }
            guard !moved.isEmpty else { return }
            outgoing.held.withLockedValue { $0 -= bytes }
            partner.arrived(moved, bytes: bytes)
        }

        /// A stalled direction was released: what waits moves on.
        func resume() { transfer(force: false) }

        // MARK: Reading side

        private func arrived(_ buffers: [ByteBuffer], bytes: Int) {
            inbox += buffers
            inboxBytes += bytes
            incoming.buffered.withLockedValue { $0 += bytes }
            scheduleDelivery()
        }

        /// A read reached the head of the pipeline: nothing above withholds it.
        func read(context: ChannelHandlerContext) {
            readRequested = true
            scheduleDelivery()
        }

        private func scheduleDelivery() {
            guard !deliveryScheduled, readRequested, !inbox.isEmpty, let context else { return }
            deliveryScheduled = true
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.deliver() }
        }

        /// One read burst: everything waiting, then the read-complete, then the next read.
        private func deliver() {
            deliveryScheduled = false
            guard readRequested, !inbox.isEmpty, !dropped, let context, context.channel.isActive else { return }
            readRequested = false
            let burst = inbox
            let bytes = inboxBytes
            inbox.removeAll()
            inboxBytes = 0
            incoming.buffered.withLockedValue { $0 -= bytes }
            for buffer in burst { context.fireChannelRead(NIOAny(buffer)) }
            context.fireChannelReadComplete()
            if partnerEnded {
                // Everything sent before the other end closed is read: now the end.
                drop()
                return
            }
            // The buffer has room again: the writer's held bytes move on.
            partner?.transfer(force: false)
            // Auto-read: the next read goes down the whole pipeline, where a handler may withhold it.
            if !dropped, context.channel.isActive { context.channel.pipeline.syncOperations.read() }
        }

        // MARK: Ends

        func channelInactive(context: ChannelHandlerContext) {
            // What was written before the end still reaches the other end, then the end does.
            transfer(force: true)
            failWrites()
            if let partner {
                let bound = NIOLoopBound(partner, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.otherEndClosed() }
            }
            context.fireChannelInactive()
        }

        private func otherEndClosed() {
            partnerEnded = true
            // The end comes after the bytes still waiting here, once they are read.
            if inbox.isEmpty { drop() }
        }

        /// Fails the writes this end still holds.
        private func failWrites() {
            let heldBytes = held.reduce(0) { $0 + $1.bytes.readableBytes }
            outgoing.held.withLockedValue { $0 -= heldBytes }
            let writes = unflushed + held
            unflushed.removeAll()
            held.removeAll()
            for write in writes { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        }

        /// Ends this side as a lost connection: nothing more is carried, and the channel closes from
        /// its head (the link's handlers see it end; they write no goodbye through it).
        func drop() {
            guard !dropped else { return }
            dropped = true
            incoming.buffered.withLockedValue { $0 -= inboxBytes }
            inbox.removeAll()
            inboxBytes = 0
            failWrites()
            context?.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension InMemoryFabric.Pipe: Sendable {}
