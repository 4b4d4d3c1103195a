import struct Foundation.Data
import Logging
import MeshLink
import MeshWire
import NIOCore

/// Drives one TCP link: the handshake, encryption, keepalives and closing (PROTOCOL.md §4–§7).
///
/// It sits after a `ByteToMessageHandler(FrameDecoder())` and before the link's `NIOAsyncChannel`.
/// Inbound it takes ``Frame``s and emits ``LinkEvent``s; outbound it takes ``Envelope``s and writes
/// encrypted frames. All protocol decisions are made by the pure ``HandshakeStateMachine``,
/// ``SecureChannel`` and ``Liveness`` values it owns; this class only carries out their actions.
///
/// Liveness pauses while the application applies back-pressure: the handler sees the outbound
/// `read()` calls that the async channel withholds when its buffer is full, so time spent not
/// reading does not count as the peer's silence (§7.2).
///
/// - Important: event-loop only; not thread-safe.
public final class LinkHandler: ChannelDuplexHandler, RemovableChannelHandler {
    /// Frames from the decoder.
    public typealias InboundIn = Frame
    /// Events for the async channel.
    public typealias InboundOut = LinkEvent
    /// Envelopes from the application.
    public typealias OutboundIn = Envelope
    /// Encrypted frames to the socket.
    public typealias OutboundOut = ByteBuffer

    private enum State {
        case handshaking(HandshakeStateMachine)
        /// Initiator only: message 3 was sent; the link is established once the responder's
        /// first transport message authenticates (key confirmation, §4.6).
        case confirming(EstablishedLink)
        /// The peer proved its identity; the handshake waits for the admission decision (§4.9)
        /// before `send` (initiator: message 3) or the key confirmation (responder) goes out.
        case admitting(EstablishedLink, send: Frame?)
        case established(EstablishedLink)
        case closed
        /// Held only while an established link is being changed: the link is moved out of the
        /// state so that its buffers (a partly reassembled message) are not shared with the
        /// enum's copy, which would make every record copy the whole message so far.
        case modifying
    }

    /// Asks the handler to close its link with a goodbye carrying this code and reason (send with
    /// `channel.triggerUserOutboundEvent`); the link's last event is ``LinkEvent/closed(_:)`` with them.
    public struct Close: Sendable {
        /// The close code for the goodbye.
        public var code: CloseCode
        /// The reason for the goodbye.
        public var reason: String
        /// Creates a close command.
        public init(code: CloseCode, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    /// Asks the handler to put ``LinkEvent/marker(_:)`` into the link's inbound events, after
    /// everything already read (send with `channel.triggerUserOutboundEvent`). The code above uses
    /// it to act on a local decision or timer in order with what the peer sent.
    public struct Marker: Sendable {
        /// The value the event carries.
        public var value: Int
        /// Creates a marker command.
        public init(_ value: Int) { self.value = value }
    }

    /// Asks the handler to retire its link (send with `channel.triggerUserOutboundEvent`).
    ///
    /// A retired link sends a goodbye with the code, accepts no more writes, and keeps reading (and
    /// delivering) until the peer's goodbye or end of stream, so that nothing the peer wrote before it
    /// learned of the retirement is lost (PROTOCOL.md §4.7). It closes by itself at the latest after
    /// the handshake timeout.
    public struct Retire: Sendable {
        /// The close code for the goodbye (usually `duplicateConnection`).
        public var code: CloseCode
        /// The reason for the goodbye.
        public var reason: String
        /// Creates a retire command.
        public init(code: CloseCode, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    /// Asks the handler to pass its sealed frames to the socket and flush (send with
    /// `channel.triggerUserOutboundEvent`); the promise completes once the socket has taken every
    /// byte written before it: one completion for a whole burst of writes (``LinkWriter``).
    public struct Flush: Sendable {
        /// Creates the command.
        public init() {}
    }

    /// Asks the handler to withhold `read()` from the socket, or to pass it on again (send with
    /// `channel.triggerUserOutboundEvent`). The layer above holds reads while it cannot take more
    /// of this link's messages (a full queue, a neighbour over its budget, its share of the event
    /// loop used up): the kernel's buffers fill and TCP slows that peer alone. Reading resumes
    /// only when neither this hold nor the async channel's own back-pressure withholds it; held
    /// time does not count as the peer's silence (§7.2).
    public struct HoldReads: Sendable {
        /// Whether reads are held from now on.
        public var held: Bool
        /// Creates the command.
        public init(_ held: Bool) { self.held = held }
    }

    /// Tells the handler that bytes arrived on its socket, before they make a whole frame (fired by
    /// ``ReceivedBytesHandler`` as a user inbound event): any received byte is life (PROTOCOL.md §7.2),
    /// so a peer sending a large message slowly, or a loop busy reassembling one, is not dead.
    public struct BytesReceived: Sendable {
        /// Creates the event.
        public init() {}
    }

    /// Sees every application envelope of an established link on its event loop before it is passed
    /// up, with the peer's node id and the channel; returns `true` when it consumed the envelope.
    /// The session delivers an admitted link's messages this way, without a task hop; when it
    /// cannot take more, it holds reads (``HoldReads``) (PROTOCOL.md §13.2.7).
    public typealias Interceptor = @Sendable (Envelope, NodeID, any Channel) -> Bool

    private var state: State
    private let interceptor: Interceptor?
    private let admission: LinkAdmission?
    private let expectedPeer: NodeID?
    private var retired = false
    /// Whether the layer above holds reads (``HoldReads``), and whether a `read()` came meanwhile.
    private var readsHeld = false
    private var readWithheld = false
    private var liveness: Liveness
    private var budget: HandshakeBudget?
    private var logger: Logger
    private var handshakeTimeout: Scheduled<Void>?
    /// When this side last wrote a handshake message, and the shortest time to the peer's next one:
    /// the link's first round-trip estimate (it includes the peer's handshake computation).
    private var handshakeWrittenAt: UInt64?
    private var handshakeRoundTrip: UInt64?
    private var ticker: RepeatedTask?
    private var context: ChannelHandlerContext?
    /// Frames sealed and not yet passed to the socket.
    private var outgoing = OutgoingFrames()
    /// Bytes passed to the socket that liveness has counted as accepted.
    private var bytesCounted = 0
    private let timing: Timing

    /// The link's timers, in nanoseconds; protocol defaults unless a test shortens them.
    public struct Timing: Sendable {
        /// Handshake deadline (§4.5).
        public var handshakeTimeout: Int64 = Int64(HandshakeStateMachine.timeoutSeconds * 1e9)
        /// Idle time before a ping (§7.1).
        public var pingInterval: UInt64 = Liveness.defaultPingInterval
        /// Silence before the peer is dead (§7.2).
        public var deadAfter: UInt64 = Liveness.defaultDeadAfter
        /// Liveness check period.
        public var checkInterval: Int64 = Int64(Liveness.checkInterval)
        /// How long a link that said goodbye keeps reading, waiting for the peer's end (§6.1).
        public var closeLinger: Int64 = 2_000_000_000
        /// Creates the protocol's default timing.
        public init() {}
    }

    /// Creates a handler.
    /// - Parameters:
    ///   - handshake: the handshake state machine for this side's role.
    ///   - budget: the listener's handshake budget (responders), or `nil`.
    ///   - timing: timers; defaults to the protocol's.
    ///   - interceptor: sees application envelopes first (see ``Interceptor``), or `nil`.
    ///   - admission: decides whether the proved peer is admitted before the link is established
    ///     (§4.9); `nil` admits every peer.
    ///   - expectedPeer: initiator only: the node id the responder must prove; another one is
    ///     refused with `invalidIdentity` before message 3 is sent (§4.10).
    ///   - logger: a logger; the handler adds `link.remote` metadata.
    public init(handshake: HandshakeStateMachine, budget: HandshakeBudget?, timing: Timing = Timing(),
                interceptor: Interceptor? = nil, admission: LinkAdmission? = nil, expectedPeer: NodeID? = nil,
                logger: Logger) {
        self.state = .handshaking(handshake)
        self.interceptor = interceptor
        self.admission = admission
        self.expectedPeer = expectedPeer
        self.budget = budget
        self.timing = timing
        self.logger = logger
        self.liveness = Liveness(now: 0, pingInterval: timing.pingInterval, deadAfter: timing.deadAfter)
    }

    /// The link's clock: its event loop's (virtual time under `EmbeddedEventLoop`).
    private func now() -> UInt64 { (context?.eventLoop.now ?? .now()).uptimeNanoseconds }

    // MARK: Lifecycle

    /// Remembers the context and starts the handshake if the channel is already active.
    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        liveness = Liveness(now: now(), pingInterval: timing.pingInterval, deadAfter: timing.deadAfter)
        if let address = context.channel.remoteAddress {
            logger[metadataKey: "link.remote"] = "\(address)"
        }
        if context.channel.isActive { start(context: context) }
    }

    /// Starts the handshake (the initiator writes message 1) and its deadline.
    public func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard handshakeTimeout == nil, case .handshaking(var machine) = state else { return }
        if logger[metadataKey: "link.remote"] == nil, let address = context.channel.remoteAddress {
            logger[metadataKey: "link.remote"] = "\(address)"
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        handshakeTimeout = context.eventLoop.scheduleTask(in: .nanoseconds(timing.handshakeTimeout)) {
            bound.value.handshakeTimedOut()
        }
        logger.debug("handshake started", metadata: ["link.role": "\(machine.role)"])
        let action = machine.start()
        state = .handshaking(machine)
        perform(action, context: context)
    }

    /// Cancels timers and returns the handshake budget slot.
    public func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        releaseBudget()
        self.context = nil
    }

    /// Reports ``LinkEvent/closed(_:)`` when the connection ended without a reason of its own.
    public func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .handshaking, .confirming, .admitting:
            let reason = LinkCloseReason(.handshakeFailed, "the connection closed during the handshake", isRemote: true)
            logger.debug("link closed", metadata: ["link.reason": "\(reason)"])
            context.fireChannelRead(wrapInboundOut(.closed(reason)))
        case .established:
            // No goodbye came: the peer was killed, crashed or was cut off (§9 `connectionLost`).
            let reason = LinkCloseReason(.connectionLost, "the connection ended without a goodbye")
            logger.debug("link closed", metadata: ["link.reason": "\(reason)"])
            context.fireChannelRead(wrapInboundOut(.closed(reason)))
        case .closed, .modifying:
            break
        }
        state = .closed
        cancelTimers()
        releaseBudget()
        context.fireChannelInactive()
    }

    /// Closes the link with a reason derived from a decoding or socket error.
    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason: LinkCloseReason
        if let wire = error as? WireError {
            reason = LinkCloseReason(wire)
        } else if let io = error as? IOError {
            reason = LinkCloseReason(.connectionLost, "connection error: \(io.description)")
        } else {
            reason = LinkCloseReason(.protocolViolation, "\(error)")
        }
        close(context: context, reason: reason, tellPeer: reason.code != .normal && reason.code != .connectionLost)
    }

    // MARK: Inbound

    /// Feeds a frame to the handshake, the key confirmation or the secure channel.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        liveness.frameReceived(now: self.now())
        if let written = handshakeWrittenAt {
            let now = self.now()
            let sample = now >= written ? now - written : 0
            handshakeRoundTrip = min(handshakeRoundTrip ?? .max, sample)
            handshakeWrittenAt = nil
        }
        switch state {
        case .handshaking(var machine):
            if frame.type == .retry {
                // Message 1's suite was not the one the offers select (§4.11): one round trip lost.
                logger.debug("cipher suite RETRY received", metadata: ["link.first_suite": "\(machine.suite)"])
            }
            let action = machine.receivedFrame(frame)
            state = .handshaking(machine)
            perform(action, context: context)
        case .confirming(var link):
            if frame.type == .abort {
                let (code, text) = (try? frame.abortContents()) ?? (.protocolViolation, "")
                close(context: context, reason: LinkCloseReason(code, text.isEmpty ? "peer refused handshake message 3" : text, isRemote: true), tellPeer: false)
                return
            }
            // Key confirmation: the responder's first transport message must authenticate.
            do {
                let message = try link.channel.open(frame)
                handshakeFinished()
                state = .established(link)
                becameEstablished(link, context: context)
                if let message { received(message, context: context) }
            } catch {
                close(context: context, reason: error, tellPeer: true)
            }
        case .admitting:
            // The peer waits for this side's next message: only an ABORT may come meanwhile.
            if frame.type == .abort {
                let (code, text) = (try? frame.abortContents()) ?? (.protocolViolation, "")
                close(context: context, reason: LinkCloseReason(code, text.isEmpty ? "peer aborted the handshake" : text, isRemote: true), tellPeer: false)
            } else {
                close(context: context, reason: LinkCloseReason(.protocolViolation, "a frame arrived while this node decided whether to admit the peer"), tellPeer: true)
            }
        case .established(var link):
            state = .modifying
            let opened: Result<Data?, LinkCloseReason>
            do {
                opened = .success(try link.channel.open(frame))
            } catch {
                opened = .failure(error)
            }
            state = .established(link)
            switch opened {
            case .success(let message):
                if let message { received(message, context: context) }
            case .failure(let reason):
                close(context: context, reason: reason, tellPeer: true)
            }
        case .closed, .modifying:
            break
        }
    }

    /// Counts ``BytesReceived`` as life; passes other events on.
    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is BytesReceived else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        liveness.frameReceived(now: self.now())
    }

    /// Marks reading as paused until the next `read()` (liveness does not count paused time).
    public func channelReadComplete(context: ChannelHandlerContext) {
        liveness.readingPaused(now: self.now())
        context.fireChannelReadComplete()
    }

    private func received(_ message: Data, context: ChannelHandlerContext) {
        // Receive limits first, from the length prefixes: decoding an oversized body is the cost (§6.1).
        if let violation = Envelope.receiveLimitViolation(in: message) {
            close(context: context, reason: LinkCloseReason(.protocolViolation, violation), tellPeer: true)
            return
        }
        let envelope: Envelope
        do {
            envelope = try Envelope(decoding: message)
        } catch {
            close(context: context, reason: LinkCloseReason(error), tellPeer: true)
            return
        }
        switch envelope.body {
        case .ping(let ping):
            logger.trace("answering ping", metadata: ["ping.nonce": "\(ping.nonce)"])
            writeControl(.pong(nonce: ping.nonce), context: context, flush: true)
        case .pong(let pong):
            if let roundTrip = liveness.pongReceived(nonce: pong.nonce, now: self.now()) {
                context.fireChannelRead(wrapInboundOut(.roundTrip(nanoseconds: roundTrip)))
            }
        case .goodbye(let goodbye):
            if retired {
                close(context: context, reason: LinkCloseReason(.duplicateConnection, "retired link drained"), tellPeer: false)
                return
            }
            let code = CloseCode(wireValue: goodbye.code)
            let text = goodbye.reason.isEmpty ? "peer closed the link" : String(goodbye.reason.prefix(256))
            close(context: context, reason: LinkCloseReason(code, text, isRemote: true), tellPeer: false)
        case nil:
            logger.debug("ignored an envelope with an unknown body (a newer peer's message type)")
        case .some:
            // Keepalives and goodbyes are the link's own; every other body is the layer above's.
            if let interceptor, case .established(let link) = state, interceptor(envelope, link.peer.nodeID, context.channel) {
                return
            }
            context.fireChannelRead(wrapInboundOut(.envelope(envelope)))
        }
    }

    // MARK: Outbound

    /// Encrypts an application envelope into TRANSPORT frames; fails before establishment or after retirement.
    ///
    /// The frames join the link's ``OutgoingFrames``, passed to the socket as one buffer at the next
    /// flush (``flush(context:)`` or ``Flush``): a burst of small messages costs one write and one
    /// syscall, and no promise unless the caller gave one.
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let envelope = unwrapOutboundIn(data)
        guard !retired, case .established(var link) = state else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let (first, mark) = outgoing.prepare(forMessageOf: envelope.plainDataPayload?.count ?? envelope.plainDirect?.payload.count ?? 0)
        if let first { context.write(wrapOutboundOut(first.bytes), promise: first.promise) }
        state = .modifying
        do {
            try link.channel.seal(envelope, into: &outgoing.buffer)
            state = .established(link)
        } catch {
            state = .established(link)
            outgoing.rollBack(to: mark)
            promise?.fail(error)
            return
        }
        liveness.frameSent(now: self.now())
        outgoing.sealed(promise: promise)
    }

    /// Passes the sealed frames to the socket, then flushes.
    public func flush(context: ChannelHandlerContext) {
        passDown(context: context, promise: nil)
        context.flush()
    }

    /// Passes the sealed frames down (no flush), with `promise` after them.
    private func passDown(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        guard let write = outgoing.take(promise: promise) else { return }
        context.write(wrapOutboundOut(write.bytes), promise: write.promise)
    }

    /// Handles ``Flush``, ``Retire``, ``Close``, ``Marker`` and ``HoldReads``; passes other events on.
    public func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is Flush {
            passDown(context: context, promise: promise)
            context.flush()
            return
        }
        if let hold = event as? HoldReads {
            promise?.succeed()
            // A closing link reads on regardless (its bytes are discarded, see lingerThenClose).
            if case .closed = state { return }
            readsHeld = hold.held
            if !hold.held, readWithheld {
                readWithheld = false
                read(context: context)
            }
            return
        }
        if let marker = event as? Marker {
            promise?.succeed()
            if case .closed = state { return }
            context.fireChannelRead(wrapInboundOut(.marker(marker.value)))
            context.fireChannelReadComplete()
            return
        }
        if let command = event as? Close {
            promise?.succeed()
            close(context: context, reason: LinkCloseReason(command.code, command.reason), tellPeer: true)
            return
        }
        guard let retire = event as? Retire else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed()
        guard !retired, case .established = state else { return }
        writeControl(.goodbye(retire.code, reason: retire.reason), context: context, flush: true)
        retired = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .nanoseconds(timing.handshakeTimeout)) {
            guard let context = bound.value.context else { return }
            bound.value.close(context: context, reason: LinkCloseReason(.duplicateConnection, "retired link closed"), tellPeer: false)
        }
    }

    /// Marks reading as resumed and passes the read on, unless reads are held (``HoldReads``).
    public func read(context: ChannelHandlerContext) {
        if readsHeld {
            readWithheld = true
            return
        }
        liveness.readingResumed(now: self.now())
        context.read()
    }

    /// Closes with a goodbye when the application closes the channel, without losing what is in
    /// flight (see ``lingerThenClose(context:promise:)``).
    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, !retired, case .established = state {
            writeControl(.goodbye(.normal, reason: "the peer disconnected"), context: context, flush: true)
            state = .closed
            cancelTimers()
            lingerThenClose(context: context, promise: promise)
            return
        }
        context.close(mode: mode, promise: promise)
    }

    /// Ends a link after this side's goodbye without losing bytes in flight (PROTOCOL.md §6.1): the
    /// write side is shut, so the peer reads everything up to the goodbye and then the end; this
    /// side reads on (discarding) until the peer's end, at most ``Timing/closeLinger``, then closes.
    /// Closing a socket with unread bytes makes the kernel reset the connection, and a reset makes
    /// the peer's kernel drop what the peer had not read yet — the goodbye and the last messages
    /// before it. Where the transport cannot shut one direction (in-memory links), it closes at once.
    private func lingerThenClose(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let channel = context.channel
        readsHeld = false
        let linger = context.eventLoop.scheduleTask(in: .nanoseconds(timing.closeLinger)) {
            channel.close(promise: nil)
        }
        channel.closeFuture.whenComplete { _ in linger.cancel() }
        // The caller's close completes once nothing more can be written (the peer has all of it);
        // `closeFuture` completes at the full close.
        let halfClosed = context.eventLoop.makePromise(of: Void.self)
        halfClosed.futureResult.whenComplete { result in
            switch result {
            case .success: promise?.succeed()
            case .failure: channel.close(promise: promise)
            }
        }
        context.close(mode: .output, promise: halfClosed)
        context.read()
    }

    // MARK: Actions

    private func perform(_ action: HandshakeStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .send(let frame):
            writeFrame(frame, context: context)
            handshakeWrittenAt = now()
        case .established(let link, let frame):
            admit(link, send: frame, context: context)
        case .abort(let reason, let frame):
            if let frame { writeFrame(frame, context: context) }
            close(context: context, reason: reason, tellPeer: false)
        }
    }

    // MARK: Admission (§4.9, §4.10)

    /// The peer proved its identity: check the expected one, then ask the admission decider.
    private func admit(_ link: EstablishedLink, send frame: Frame?, context: ChannelHandlerContext) {
        if let expected = expectedPeer, link.peer.nodeID != expected {
            refuse(LinkCloseReason(.invalidIdentity, "identity differs: expected node \(expected.shortHex), this is node \(link.peer.nodeID.shortHex)"),
                   tellPeer: "this is not the node the initiator expected", context: context)
            return
        }
        guard let admission else { return proceed(link, send: frame, context: context) }
        state = .admitting(link, send: frame)
        let request = AdmissionRequest(peer: link.peer, role: link.role, remoteAddress: context.channel.remoteAddress)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        admission(request, context.eventLoop).hop(to: context.eventLoop).whenComplete { result in
            bound.value.decided((try? result.get()) ?? .refuse(.normal, reason: "the admission decision failed"))
        }
    }

    private func decided(_ decision: AdmissionDecision) {
        guard let context, case .admitting(let link, let frame) = state else { return }
        switch decision {
        case .admit:
            proceed(link, send: frame, context: context)
        case .refuse(let code, let reason):
            refuse(LinkCloseReason(code, reason), tellPeer: reason, context: context)
        }
    }

    /// Refuses a peer before the link is established: ABORT (with `message` for the peer), close.
    private func refuse(_ reason: LinkCloseReason, tellPeer message: String, context: ChannelHandlerContext) {
        writeFrame(.abort(reason.code, reason: message), context: context)
        close(context: context, reason: reason, tellPeer: false)
    }

    /// Completes an admitted handshake: message 3 or the key confirmation.
    private func proceed(_ link: EstablishedLink, send frame: Frame?, context: ChannelHandlerContext) {
        if let frame {
            writeFrame(frame, context: context)
            handshakeWrittenAt = now()
        }
        releaseBudget()
        switch link.role {
        case .initiator:
            // The deadline keeps running until the key confirmation arrives (§4.5, §4.6).
            state = .confirming(link)
            context.fireChannelRead(wrapInboundOut(.connecting(link.peer)))
            context.fireChannelReadComplete()
        case .responder:
            handshakeFinished()
            state = .established(link)
            // Key confirmation for the initiator (§4.6): our first transport message.
            writeControl(.ping(nonce: 0), context: context, flush: true)
            becameEstablished(link, context: context)
        }
    }

    private func becameEstablished(_ link: EstablishedLink, context: ChannelHandlerContext) {
        logger.debug("link established", metadata: [
            "mesh.peer": "\(link.peer.nodeID)", "link.role": "\(link.role)", "link.suite": "\(link.suite)",
        ])
        liveness = Liveness(now: self.now(), pingInterval: timing.pingInterval, deadAfter: timing.deadAfter)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        ticker = context.eventLoop.scheduleRepeatedTask(
            initialDelay: .nanoseconds(timing.checkInterval), delay: .nanoseconds(timing.checkInterval)
        ) { _ in
            bound.value.tick()
        }
        let info = LinkInfo(peer: link.peer, role: link.role, remoteAddress: context.channel.remoteAddress, suite: link.suite,
                            datagramKeys: link.datagramKeys, invitation: link.invitation,
                            handshakeRoundTrip: handshakeRoundTrip)
        context.fireChannelRead(wrapInboundOut(.established(info)))
        context.fireChannelReadComplete()
    }

    private func tick() {
        guard let context, case .established = state else { return }
        countAcceptedBytes(context: context)
        switch liveness.tick(now: self.now()) {
        case .none:
            break
        case .sendPing(let nonce):
            logger.trace("sending keepalive ping", metadata: ["ping.nonce": "\(nonce)"])
            writeControl(.ping(nonce: nonce), context: context, flush: true)
        case .peerDead(let silence):
            let seconds = Double(silence) / 1e9
            close(context: context, reason: LinkCloseReason(.keepaliveTimeout,
                "nothing received for \(String(format: "%.1f", seconds)) s (limit \(timing.deadAfter / 1_000_000_000) s)"), tellPeer: false)
        }
    }

    /// Tells liveness how many bytes the socket took since the last tick: those passed down less
    /// those the channel still holds (no promise per write; see ``Liveness/bytesAccepted(_:now:)``).
    private func countAcceptedBytes(context: ChannelHandlerContext) {
        let passed = outgoing.bytesPassedDown
        let held = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        let accepted = passed - max(0, min(held, passed))
        guard accepted > bytesCounted else { return }
        liveness.bytesAccepted(accepted - bytesCounted, now: self.now())
        bytesCounted = accepted
    }

    private func handshakeTimedOut() {
        guard let context else { return }
        if case .admitting = state {
            close(context: context, reason: LinkCloseReason(.handshakeTimeout,
                "no admission decision within the handshake's \(Int(HandshakeStateMachine.timeoutSeconds)) s"), tellPeer: true)
            return
        }
        if case .confirming = state {
            close(context: context, reason: LinkCloseReason(.handshakeTimeout,
                "the peer did not confirm the keys within \(Int(HandshakeStateMachine.timeoutSeconds)) s"), tellPeer: false)
            return
        }
        guard case .handshaking(var machine) = state else { return }
        let action = machine.timedOut()
        state = .handshaking(machine)
        perform(action, context: context)
    }

    private func writeFrame(_ frame: Frame, context: ChannelHandlerContext) {
        passDown(context: context, promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: WireLimits.frameHeaderSize + frame.body.readableBytes)
        frame.encode(into: &buffer)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    /// Writes a keepalive or goodbye straight to the socket, bypassing the application's queue
    /// (after the frames already sealed: the nonces keep their order).
    private func writeControl(_ envelope: Envelope, context: ChannelHandlerContext, flush: Bool) {
        guard case .established(var link) = state else { return }
        let (first, mark) = outgoing.prepare(forMessageOf: 0)
        if let first { context.write(wrapOutboundOut(first.bytes), promise: first.promise) }
        state = .modifying
        do {
            try link.channel.seal(envelope, into: &outgoing.buffer)
        } catch {
            state = .established(link)
            outgoing.rollBack(to: mark)
            return
        }
        state = .established(link)
        liveness.frameSent(now: self.now())
        if flush {
            passDown(context: context, promise: nil)
            context.flush()
        }
    }

    /// Closes the link once, emitting ``LinkEvent/closed(_:)`` with the reason.
    private func close(context: ChannelHandlerContext, reason: LinkCloseReason, tellPeer: Bool) {
        if case .closed = state { return }
        if tellPeer {
            switch state {
            case .handshaking, .admitting:
                writeFrame(.abort(reason.code, reason: reason.message), context: context)
            case .established:
                writeControl(.goodbye(reason.code, reason: reason.message), context: context, flush: true)
            case .confirming, .closed, .modifying:
                break
            }
        }
        let level: Logger.Level = reason.code == .normal || reason.code == .connectionLost || reason.isRemote ? .debug : .notice
        logger.log(level: level, "link closed", metadata: ["link.reason": "\(reason)"])
        let saidGoodbye: Bool
        if tellPeer, case .established = state { saidGoodbye = true } else { saidGoodbye = false }
        state = .closed
        cancelTimers()
        releaseBudget()
        context.fireChannelRead(wrapInboundOut(.closed(reason)))
        context.fireChannelReadComplete()
        if saidGoodbye {
            lingerThenClose(context: context, promise: nil)
        } else {
            context.close(promise: nil)
        }
    }

    private func handshakeFinished() {
        handshakeTimeout?.cancel()
        handshakeTimeout = nil
        releaseBudget()
    }

    private func releaseBudget() {
        budget?.release()
        budget = nil
    }

    private func cancelTimers() {
        // Frames sealed but never passed down go with the link; their writes fail.
        outgoing.fail(ChannelError.ioOnClosedChannel)
        handshakeTimeout?.cancel()
        handshakeTimeout = nil
        ticker?.cancel()
        ticker = nil
    }
}

@available(*, unavailable)
extension LinkHandler: Sendable {}
