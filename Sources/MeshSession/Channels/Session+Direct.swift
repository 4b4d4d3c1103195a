import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers

extension Session {
    /// How a channel packet for one node left, or why it did not.
    enum ChannelSend {
        /// Handed to the link of its first hop.
        case sent
        /// Admitted by a neighbour's link and kept by its writer until
        /// ``LinkWriter/flushOffers()`` (a send with `deferringFlush`).
        case kept(LinkWriter)
        /// The first hop's link holds more than its high-water mark: nothing was sent, sealed or
        /// counted. `writer.whenRoom(_:)` says when to try again.
        case congested(LinkWriter)
    }

    /// Sends a channel payload to one node without suspending (PROTOCOL.md §13.12): with `direct`,
    /// as a `direct` envelope on the link when the node is a neighbour (§6.3: the link's
    /// encryption is the end-to-end encryption, and nothing is sealed twice), else sealed on its
    /// route (§13.6).
    ///
    /// When the first hop's link is congested nothing is sent and the ratchet does not advance
    /// (a dropped sealed packet would cost the receiver a skipped key): a caller that keeps its
    /// packets (a stream, a resource) sends them again once the writer has room, instead of
    /// losing them and waiting for its retransmission timeout.
    ///
    /// With `deferringFlush`, a direct envelope the link admits is kept by its writer
    /// (``ChannelSend/kept(_:)``) until the caller's ``LinkWriter/flushOffers()``: a shell that
    /// sends several packets in one turn hands them to the link's loop at once.
    /// - Throws: ``SessionError`` `notReachable`, `payloadTooLarge`.
    func sendChannelNow(_ message: ChannelMessagePayload, to peer: PeerID, direct: Bool,
                        deferringFlush: Bool = false) throws(SessionError) -> ChannelSend {
        if direct, let writer = neighbourWriter(peer.id) {
            let envelope = Envelope.direct(channel: message.channel, payload: message.payload, sentAtMilliseconds: mesh.wallMilliseconds)
            guard writer.offer(envelope, size: Self.directWireSize(message.payload.count), flush: !deferringFlush) else {
                return .congested(writer)
            }
            return deferringFlush ? .kept(writer) : .sent
        }
        if let hop = mesh.nextHop(to: peer.id), let writer = neighbourWriter(hop), !writer.hasRoom {
            return .congested(writer)
        }
        try sendSealedNow(.channel(message), to: peer)
        return .sent
    }

    /// Sends a channel payload to one node: with `direct`, on the link when it is a neighbour,
    /// else sealed on its route. Never waits for room: a congested first hop drops it (§13.2.7),
    /// as any channel message may be lost.
    /// - Throws: ``SessionError`` `notReachable`, `payloadTooLarge`.
    func sendChannel(_ message: ChannelMessagePayload, to peer: PeerID, direct: Bool) async throws(SessionError) {
        if direct, let writer = neighbourWriter(peer.id) {
            let envelope = Envelope.direct(channel: message.channel, payload: message.payload, sentAtMilliseconds: mesh.wallMilliseconds)
            if !writer.offer(envelope, size: Self.directWireSize(message.payload.count)) {
                logger.debug("dropped a direct channel message: the link is congested", metadata: ["mesh.peer": "\(peer.id.shortHex)"])
            }
            return
        }
        try await sendSealed(.channel(message), to: peer)
    }

    /// The writer of the admitted link to a neighbour.
    func neighbourWriter(_ node: NodeID) -> LinkWriter? {
        registry.withLockedValue { $0.entries[node]?.writer }
    }

    /// The bytes a direct envelope with a payload of `count` bytes takes on the wire, about.
    static func directWireSize(_ count: Int) -> Int { SecureChannel.wireSize(ofMessage: count + 24) }

    /// What a `direct` envelope from a neighbour delivers (§6.3): the channel message, or `nil`
    /// (logged at debug) for channel id 0. Its size was checked before it was decoded
    /// (``Envelope/maxBodyBytes``).
    static func directDelivery(_ direct: DirectPayload, from sender: PeerID, nowMilliseconds: Int64) -> MeshNode.ChannelDelivery? {
        guard direct.channel != 0 else { return nil }
        // The payload may be a slice of the decrypted message (Envelope(decoding:)); the channel
        // copies it for its consumer unless that reads slices (ChannelLimits.deliversSlices).
        let message = ChannelMessage(sender: sender, payload: direct.payload, delivery: .sealed, hops: 1,
                                     sentAt: Date(timeIntervalSince1970: Double(direct.sentAtMs) / 1000))
        return MeshNode.ChannelDelivery(channel: direct.channel,
                                        skew: MeshNodeStateMachine.skew(direct.sentAtMs, nowMilliseconds: nowMilliseconds),
                                        message: message)
    }
}
