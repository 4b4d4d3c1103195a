import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshRouting
import MeshWire
import NIOConcurrencyHelpers

/// An application channel registered with a ``Session`` (PROTOCOL.md §13.12): the way an
/// application talks to the mesh without the mesh knowing anything about it.
///
/// A channel can seal a payload to one node anywhere in the mesh (``send(_:to:)``: relays see only
/// sizes), sign one and flood it to every node (``broadcast(_:)``), and publish a small attachment
/// in this node's signed advert (``setAttachment(_:)``; others read theirs with
/// ``attachment(of:)``). Messages other nodes send on the channel arrive on ``messages``, within
/// the channel's ``limits``.
///
/// ```swift
/// let channel = try session.register(channel: ChannelID(rawValue: 0x5EED_0001)!)
/// try await channel.broadcast(Data("hello".utf8))
/// for await message in channel.messages { print(message.sender, message.payload) }
/// ```
///
/// This type is thread-safe.
public final class MeshChannel: Sendable {
    /// The channel's id.
    public let id: ChannelID
    /// The channel's limits.
    public let limits: ChannelLimits
    /// Messages other nodes sent on this channel, in arrival order, at most
    /// ``ChannelLimits/inboundCapacity`` held. One consumer; ends after ``close()`` or when the
    /// session disconnects.
    public let messages: EventQueue<ChannelMessage>

    private weak let session: Session?
    private let admission: NIOLockedValueBox<ChannelAdmission>
    private let counters = NIOLockedValueBox(Counters())
    private let logger: Logger

    /// Messages refused or dropped, by reason (for logs and tests).
    struct Counters: Sendable {
        var refused: [ChannelAdmission.Refusal: Int] = [:]
        var overflowed = 0
        var loggedAt: ContinuousClock.Instant?
    }

    init(id: ChannelID, limits: ChannelLimits, session: Session, logger: Logger) {
        self.id = id
        self.limits = limits
        self.messages = EventQueue(capacity: limits.inboundCapacity)
        self.session = session
        self.admission = NIOLockedValueBox(ChannelAdmission(limits: limits))
        var logger = logger
        logger[metadataKey: "channel.id"] = "\(id.rawValue)"
        self.logger = logger
    }

    /// Sends a payload to one node, anywhere in the mesh, that only that node can read
    /// (PROTOCOL.md §13.12): sealed end to end on its route (§13.6), so that relays see only the
    /// routing header and the packet's size; or, when the channel's
    /// ``ChannelLimits/directToNeighbours`` is set and the node is a neighbour, on the link
    /// itself, whose encryption is end to end between the two nodes (§6.3).
    ///
    /// There is no acknowledgement: the packet may be lost on a congested or broken route.
    /// Applications that need delivery acknowledge in their own payloads and retransmit.
    /// - Parameters:
    ///   - payload: at most ``ChannelLimits/maxMessageSize`` bytes.
    ///   - peer: a reachable node (a neighbour, or one the mesh has a route to).
    /// - Throws: ``SessionError`` `payloadTooLarge`, `notReachable`, `channelClosed`.
    public func send(_ payload: Data, to peer: PeerID) async throws(SessionError) {
        guard payload.count <= limits.maxMessageSize else {
            throw .payloadTooLarge(payload.count, limit: limits.maxMessageSize, mode: .reliable)
        }
        let session = try openSession()
        try await session.sendChannel(wire(payload), to: peer, direct: limits.directToNeighbours)
    }

    /// ``send(_:to:)`` without suspending: the packet is handed to the mesh before this returns
    /// (for the library's own shells, which keep their packets in order inside an actor), or not
    /// at all when the first hop's link is congested (then the caller sends it again when that
    /// link has room, ``Session/ChannelSend/congested(_:)``). With `deferringFlush`, a packet
    /// for a neighbour's link waits for the caller's ``LinkWriter/flushOffers()``
    /// (``Session/ChannelSend/kept(_:)``).
    @discardableResult
    func sendNow(_ payload: Data, to peer: PeerID, deferringFlush: Bool = false) throws(SessionError) -> Session.ChannelSend {
        guard payload.count <= limits.maxMessageSize else {
            throw .payloadTooLarge(payload.count, limit: limits.maxMessageSize, mode: .reliable)
        }
        let session = try openSession()
        return try session.sendChannelNow(wire(payload), to: peer, direct: limits.directToNeighbours, deferringFlush: deferringFlush)
    }

    /// Signs a payload and floods it to every node within the hop limit (PROTOCOL.md §13.5,
    /// §13.12). There is no acknowledgement.
    /// - Parameter payload: at most ``ChannelLimits/maxBroadcastSize`` bytes.
    /// - Returns: whether no neighbour was there to take it (then nothing was sent).
    /// - Throws: ``SessionError`` `payloadTooLarge`, `channelClosed`.
    @discardableResult
    public func broadcast(_ payload: Data) async throws(SessionError) -> Bool {
        guard payload.count <= limits.maxBroadcastSize else {
            throw .payloadTooLarge(payload.count, limit: limits.maxBroadcastSize, mode: .reliable)
        }
        let session = try openSession()
        let step = session.mesh.broadcast(.channel(wire(payload)), sentAt: session.mesh.wallMilliseconds)
        await session.perform(step)
        return step.sends.isEmpty
    }

    /// Sets this node's attachment for the channel, or removes it, and re-advertises
    /// (PROTOCOL.md §13.12): every node learns it from this node's next signed advert (at once, or
    /// when the advert rate limit allows).
    /// - Parameter data: at most ``ChannelLimits/maxAttachmentSize`` bytes; `nil` or empty removes it.
    /// - Throws: ``SessionError`` `payloadTooLarge`, `channelClosed`.
    public func setAttachment(_ data: Data?) async throws(SessionError) {
        if let data, data.count > limits.maxAttachmentSize {
            throw .payloadTooLarge(data.count, limit: limits.maxAttachmentSize, mode: .reliable)
        }
        let session = try openSession()
        await session.perform(session.mesh.setAttachment(data.flatMap { $0.isEmpty ? nil : $0 }, channel: id.rawValue))
    }

    /// The attachment a node's latest verified advert carries for this channel.
    ///
    /// The data is that node's claim: validate it before use.
    /// - Parameter peer: the node (this node's own attachment is returned too).
    /// - Returns: the data, or `nil` when it carries none, is larger than
    ///   ``ChannelLimits/maxAttachmentSize``, or no advert of it has arrived.
    public func attachment(of peer: PeerID) -> Data? {
        guard let data = session?.mesh.attachment(of: peer.id, channel: id.rawValue),
              data.count <= limits.maxAttachmentSize else { return nil }
        return data
    }

    /// Unregisters the channel: messages for it are dropped from now on, ``messages`` ends, this
    /// node's attachment is withdrawn, and the id may be registered again.
    public func close() {
        guard let session, session.channels.remove(self) else { return }
        messages.finish()
        Task { await session.perform(session.mesh.setAttachment(nil, channel: id.rawValue)) }
    }

    // MARK: Internals

    private func openSession() throws(SessionError) -> Session {
        guard let session, session.channels.channel(id.rawValue) === self else { throw .channelClosed(id) }
        return session
    }

    private func wire(_ payload: Data) -> ChannelMessagePayload {
        var message = ChannelMessagePayload()
        message.channel = id.rawValue
        message.payload = payload
        return message
    }

    /// Hands an arriving message to the consumer if the channel's limits admit it.
    func deliver(_ message: ChannelMessage, skew: Duration, now: RouterInstant) async {
        if let refusal = admission.withLockedValue({
            $0.admit(size: message.payload.count, delivery: message.delivery, sender: message.sender.id, skew: skew, now: now)
        }) {
            count { $0.refused[refusal, default: 0] += 1 }
            return
        }
        switch limits.overflow {
        case .wait:
            await messages.push(message)
        case .drop:
            if !messages.offer(message) { count { $0.overflowed += 1 } }
        }
    }

    /// Hands an arriving message to the consumer without waiting, for the link's event loop
    /// (PROTOCOL.md §13.12): like ``deliver(_:skew:now:)``, but a full queue under the
    /// ``ChannelLimits/Overflow/wait`` policy calls `whenRoom` once there is room instead of
    /// waiting, so that the link stops reading meanwhile and offers the message again.
    /// - Parameters:
    ///   - admitted: whether an earlier offer of this message passed the channel's limits
    ///     already (then it is not counted against the rate and replay window again).
    ///   - whenRoom: called once when the queue has room, only when the result is `false`.
    ///   - wakingConsumer: `false` queues the message without resuming a waiting consumer; the
    ///     caller wakes it (``EventQueue/wakeConsumer()``) after the rest of its burst.
    /// - Returns: `false` when the message was admitted but not queued and must be offered again
    ///   (with `admitted` set) after `whenRoom`; `true` when it was queued, refused or dropped.
    func offer(_ message: ChannelMessage, skew: Duration, now: RouterInstant, admitted: Bool,
               wakingConsumer: Bool = true, whenRoom: @escaping @Sendable () -> Void) -> Bool {
        if !admitted, let refusal = admission.withLockedValue({
            $0.admit(size: message.payload.count, delivery: message.delivery, sender: message.sender.id, skew: skew, now: now)
        }) {
            count { $0.refused[refusal, default: 0] += 1 }
            return true
        }
        // A direct message's payload is a slice of its record (PROTOCOL.md §6.3): a copy with
        // indices from 0, unless this channel's consumer reads slices.
        let message = limits.deliversSlices || message.payload.startIndex == 0 ? message
            : ChannelMessage(sender: message.sender, payload: Data(message.payload), delivery: message.delivery,
                             hops: message.hops, sentAt: message.sentAt)
        switch limits.overflow {
        case .wait:
            if case .full = messages.offer(message, orWhenRoom: whenRoom, wakingConsumer: wakingConsumer) { return false }
        case .drop:
            if !messages.offer(message) { count { $0.overflowed += 1 } }
        }
        return true
    }

    /// Counts a refusal and logs the counts at most once a second.
    private func count(_ update: (inout Counters) -> Void) {
        let now = ContinuousClock.now
        let log: Counters? = counters.withLockedValue { counters in
            update(&counters)
            if let last = counters.loggedAt, now - last < .seconds(1) { return nil }
            counters.loggedAt = now
            return counters
        }
        if let log {
            logger.debug("dropped channel messages over the channel's limits", metadata: [
                "channel.refused": "\(log.refused.map { "\($0.key.rawValue)=\($0.value)" }.sorted())",
                "channel.overflowed": "\(log.overflowed)",
            ])
        }
    }

    /// Messages refused so far, by reason, and dropped for a full queue.
    var refusals: Counters { counters.withLockedValue { $0 } }
}
