import Logging
import MeshWire

extension Session {
    // MARK: Application channels (PROTOCOL.md §13.12)

    /// The largest payload of a channel message: 64,000 bytes (it must fit, sealed or signed, in
    /// one Noise message).
    public static let maxChannelPayload = WireLimits.maxRelayedPayload
    /// The largest attachment of a channel in this node's advert: 1,024 bytes.
    public static let maxChannelAttachment = WireLimits.maxChannelAttachmentBytes

    /// Registers an application channel: from now on, messages other nodes send on it arrive on
    /// the returned channel's ``MeshChannel/messages``, and it can send, broadcast and attach.
    ///
    /// Messages on a channel that nobody registered are dropped (logged at debug); they never
    /// close the link they came on.
    /// - Parameters:
    ///   - id: the channel's id, in ``ChannelID/projectRange`` or ``ChannelID/thirdPartyRange``.
    ///   - limits: its limits, binding what this node accepts.
    /// - Returns: the channel.
    /// - Throws: ``SessionError`` `channelInUse` when the id is registered already (until that
    ///   channel is closed), `invalidChannel` for an id in the reserved range or limits out of range.
    public func register(channel id: ChannelID, limits: ChannelLimits = ChannelLimits()) throws(SessionError) -> MeshChannel {
        guard id.isRegistrable else {
            throw .invalidChannel(id, "ids 1,024–65,535 are reserved; use one from 65,536 up")
        }
        if let problem = limits.problem { throw .invalidChannel(id, problem) }
        let channel = MeshChannel(id: id, limits: limits, session: self, logger: logger)
        guard channels.add(channel) else { throw .channelInUse(id) }
        return channel
    }

    /// Hands channel messages a step opened to their channels, in order.
    func deliver(_ deliveries: [MeshNode.ChannelDelivery]) async {
        guard !deliveries.isEmpty else { return }
        let now = mesh.now
        for delivery in deliveries {
            guard let channel = channels.channel(delivery.channel) else {
                logger.debug("dropped a message for a channel nobody registered", metadata: [
                    "channel.id": "\(delivery.channel)", "mesh.origin": "\(delivery.message.sender.id.shortHex)",
                ])
                continue
            }
            await channel.deliver(delivery.message, skew: delivery.skew, now: now)
        }
    }
}
