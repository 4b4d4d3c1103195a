import Logging
import MeshTransport
import MeshWire
import NIOCore

/// The one delivery path of a link's messages, from its socket to the application (PROTOCOL.md
/// §13.2.7, §10): everything an admitted link receives — a neighbour's data and chat lines,
/// routed packets to relay, to open and to learn from — is handled here, on the link's event
/// loop, in the order it arrived, without a task hop.
///
/// Nothing here waits. When the application is behind (the session's event queue or a channel's
/// queue under the `wait` policy is full), when the neighbour's broadcasts are over their budget
/// (§13.11), or when this link has used its share of the event loop for this turn, the rest of
/// what it read waits in ``pending`` and the link's reads are held (``LinkHandler/HoldReads``): the
/// kernel's buffers fill and TCP slows that neighbour alone. What waits is bounded by what one
/// read of the socket brought.
///
/// A malformed packet closes the link (only it, with the reason logged, §13.1) and drops what it
/// still had waiting.
///
/// - Important: event-loop only: every method must be called on ``loop``.
final class LinkInbound: @unchecked Sendable {
    /// Work waiting its turn: an envelope not yet handled, or what handling one produced.
    enum Item {
        case envelope(Envelope)
        case event(SessionEvent)
        /// A channel message; `admitted` once it has passed the channel's limits.
        case channel(MeshNode.ChannelDelivery, admitted: Bool)
    }

    /// Why handling stopped.
    private enum Outcome {
        /// The item is handled.
        case done
        /// The item became these, handled next in order.
        case expanded([Item])
        /// Handling waits; the item (or what it became meanwhile) stays first.
        case blocked(Item)
        /// The link is closing: everything still waiting is dropped.
        case closed
    }

    /// How long one link may hold its event loop per turn before it lets other work go first.
    static let turnBudget = TimeAmount.milliseconds(2)

    /// The neighbour the link belongs to.
    let sender: PeerID
    /// The link's channel.
    let channel: any Channel
    /// The link's event loop.
    var loop: any EventLoop { channel.eventLoop }

    private weak let session: Session?
    private var pending: [Item] = []
    private var head = 0
    private var blocked = false
    private var closed = false
    private var turnStarted: NIODeadline?
    /// Channels given messages this turn whose consumers are woken at its end
    /// (``ChannelLimits/wakesOncePerRead``).
    private var unwoken: [ObjectIdentifier: MeshChannel] = [:]
    private var drained: [EventLoopPromise<Void>] = []
    /// The timer that ends a hold for room on a next hop's link (``holdForRelay(_:session:)``).
    private var relayHold: Scheduled<Void>? {
        didSet { oldValue?.cancel() }
    }

    init(sender: PeerID, channel: any Channel, session: Session) {
        self.sender = sender
        self.channel = channel
        self.session = session
    }

    // MARK: Inputs

    /// An envelope the link received, in order.
    func receive(_ envelope: Envelope) {
        loop.assertInEventLoop()
        guard !closed else { return }
        pending.append(.envelope(envelope))
        if !blocked { run() }
    }

    /// Completes when nothing waits any more (or the link closed): the link's end is reported
    /// after what it delivered.
    func drain() -> EventLoopFuture<Void> {
        loop.flatSubmit { [self] in
            if closed || head == pending.count { return loop.makeSucceededVoidFuture() }
            let promise = loop.makePromise(of: Void.self)
            drained.append(promise)
            return promise.futureResult
        }
    }

    // MARK: Running

    /// Handles what waits, in order, until it is all done or something blocks.
    private func run() {
        guard let session else { return close() }
        startTurn()
        while head < pending.count {
            if let started = turnStarted, NIODeadline.now() - started > Self.turnBudget {
                // Let the loop's other links and timers go first (control before bulk, §7.2).
                block()
                loop.execute { [self] in
                    turnStarted = nil
                    resume()
                }
                return
            }
            switch handle(pending[head], session: session) {
            case .done:
                advance()
            case .expanded(let items):
                advance()
                pending.insert(contentsOf: items, at: head)
            case .blocked(let item):
                pending[head] = item
                block()
                return
            case .closed:
                return close()
            }
        }
        pending.removeAll(keepingCapacity: pending.capacity <= 64)
        head = 0
        let waiting = drained
        drained = []
        waiting.forEach { $0.succeed() }
    }

    private func advance() {
        head += 1
        if head > 64, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    /// Starts this turn's budget; the loop's next turn starts a new one.
    private func startTurn() {
        guard turnStarted == nil else { return }
        turnStarted = .now()
        loop.execute { [self] in
            turnStarted = nil
            wakeConsumers()
        }
    }

    /// Wakes the consumers of the channels that were given messages this turn without waking
    /// them: the loop runs this after the turn's reads, so what they read arrives as one batch.
    private func wakeConsumers() {
        guard !unwoken.isEmpty else { return }
        let channels = unwoken.values
        unwoken.removeAll(keepingCapacity: true)
        for target in channels { target.messages.wakeConsumer() }
    }

    private func block() {
        guard !blocked else { return }
        blocked = true
        channel.triggerUserOutboundEvent(LinkHandler.HoldReads(true), promise: nil)
    }

    /// Called (on the loop) when what blocked the link may have cleared.
    private func resume() {
        loop.assertInEventLoop()
        guard blocked, !closed else { return }
        blocked = false
        run()
        if !blocked { channel.triggerUserOutboundEvent(LinkHandler.HoldReads(false), promise: nil) }
    }

    /// A callback for queues and timers: resume on the loop. Made once (it is passed with every
    /// event offered, and called only when a queue was full).
    private lazy var resumer: @Sendable () -> Void = { [loop, weak self] in
        loop.execute { self?.resume() }
    }

    /// Holds this link for room on the next hop's link (§13.11) for at most
    /// ``LinkWriter/relayHoldLimit`` (a hold already timing keeps its deadline): when it ends without
    /// room, the input's packets for that link are dropped until they drained, and reading resumes.
    private func holdForRelay(_ routed: RoutedPayload, session: Session) {
        guard relayHold == nil else { return }
        relayHold = loop.scheduleTask(in: LinkWriter.relayHoldLimit) { [weak self, weak session] in
            guard let self else { return }
            self.relayHold = nil
            session?.relayHoldExpired(routed, from: self.sender.id)
            self.resume()
        }
    }

    private func close() {
        relayHold = nil
        closed = true
        wakeConsumers()
        pending.removeAll()
        head = 0
        let waiting = drained
        drained = []
        waiting.forEach { $0.succeed() }
        if blocked { channel.triggerUserOutboundEvent(LinkHandler.HoldReads(false), promise: nil) }
    }

    // MARK: Handling one item

    private func handle(_ item: Item, session: Session) -> Outcome {
        switch item {
        case .envelope(let envelope):
            return handle(envelope, session: session)
        case .event(let event):
            switch session.events.offer(event, orWhenRoom: resumer) {
            case .queued, .finished:
                session.noteRoutes(event)
                return .done
            case .full: return .blocked(item)
            }
        case .channel(let delivery, let admitted):
            guard let target = session.channels.channel(delivery.channel) else {
                session.logger.debug("dropped a message for a channel nobody registered", metadata: [
                    "channel.id": "\(delivery.channel)", "mesh.origin": "\(delivery.message.sender.id.shortHex)",
                ])
                return .done
            }
            // Where the channel asks for it, its consumer is woken once per turn, after the
            // turn's reads (turnStarted is set while a turn runs; its end wakes them).
            let holdWake = target.limits.wakesOncePerRead && turnStarted != nil
            if holdWake { unwoken[ObjectIdentifier(target)] = target }
            if target.offer(delivery.message, skew: delivery.skew, now: session.mesh.now, admitted: admitted,
                            wakingConsumer: !holdWake, whenRoom: resumer) {
                return .done
            }
            // Admitted but not queued: offered again, without counting it twice.
            return .blocked(.channel(delivery, admitted: true))
        }
    }

    private func handle(_ envelope: Envelope, session: Session) -> Outcome {
        switch envelope.body {
        case .routed(let routed):
            if let wait = session.mesh.budgetWait(routed, from: sender.id) {
                // Over the neighbour's broadcast budget (§13.11): this link is not read meanwhile.
                let resume = resumer
                loop.scheduleTask(in: .nanoseconds(SessionClock.nanoseconds(min(wait, .seconds(1))))) { resume() }
                return .blocked(.envelope(envelope))
            }
            switch session.relayAdmission(routed, from: sender.id, whenRoom: resumer) {
            case .now:
                relayHold = nil
            case .wait:
                // This link's relayed packets fill its share of the next hop's link (§13.11): it is
                // not read until they drain, for at most the hold limit; other links' packets still go.
                holdForRelay(routed, session: session)
                return .blocked(.envelope(envelope))
            case .drop:
                relayHold = nil
                return .done
            }
            guard let step = session.receivedRouted(routed, from: sender.id, channel: channel) else { return .closed }
            session.transmit(step.sends, relayedFrom: sender.id)
            if step.events.isEmpty, step.channelMessages.isEmpty { return .done }
            session.armMeshTimer()
            return .expanded(step.events.map { .event($0) } + step.channelMessages.map { .channel($0, admitted: false) })
        case .data, .chat:
            if let violation = Session.violation(in: envelope) {
                session.logger.notice("closing a link: message over a receive limit", metadata: ["mesh.peer": "\(sender.id)", "error": "\(violation)"])
                channel.triggerUserOutboundEvent(LinkHandler.Close(code: .protocolViolation, reason: violation), promise: nil)
                return .closed
            }
            guard let message = Session.message(from: envelope, sender: sender) else { return .done }
            // Offered at once (no list of one to insert): blocked, the event waits in its place.
            return handle(.event(.received(message)), session: session)
        case .direct(let direct):
            if let violation = Session.violation(in: envelope) {
                session.logger.notice("closing a link: message over a receive limit", metadata: ["mesh.peer": "\(sender.id)", "error": "\(violation)"])
                channel.triggerUserOutboundEvent(LinkHandler.Close(code: .protocolViolation, reason: violation), promise: nil)
                return .closed
            }
            guard let delivery = Session.directDelivery(direct, from: sender, nowMilliseconds: session.mesh.wallMilliseconds) else {
                session.logger.debug("dropped a direct channel message for channel 0", metadata: ["mesh.peer": "\(sender.id.shortHex)"])
                return .done
            }
            return handle(.channel(delivery, admitted: false), session: session)
        default:
            // Handshake-time messages (an invitation's answer) mean nothing once admitted.
            return .done
        }
    }
}
