import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshWire

extension MeshNodeStateMachine {
    // MARK: Application channels (PROTOCOL.md §13.12)

    /// The delivery of an opened channel message, or `nil` (logged at debug) for channel id 0.
    static func channelDelivery(_ message: ChannelMessagePayload, sender: PeerID, delivery: ChannelMessage.Delivery,
                                hops: Int, sentAtMs: Int64, nowMilliseconds: Int64, logger: Logger) -> Opened? {
        guard message.channel != 0 else {
            logger.debug("dropped a channel message for channel 0", metadata: ["mesh.origin": "\(sender.id.shortHex)"])
            return nil
        }
        let sentAt = Date(timeIntervalSince1970: Double(sentAtMs) / 1000)
        return .channel(ChannelDelivery(channel: message.channel, skew: skew(sentAtMs, nowMilliseconds: nowMilliseconds), message: ChannelMessage(
            sender: sender, payload: message.payload, delivery: delivery, hops: hops, sentAt: sentAt)))
    }

    /// How far a sender's clock (Unix ms, any value a peer chose) is from ours (`nowMilliseconds`),
    /// saturating instead of overflowing.
    static func skew(_ theirMilliseconds: Int64, nowMilliseconds: Int64) -> Duration {
        let (difference, overflow) = nowMilliseconds.subtractingReportingOverflow(theirMilliseconds)
        guard !overflow, difference != .min else { return .milliseconds(Int64.max) }
        return .milliseconds(abs(difference))
    }

    /// The attachments of a verified advert, by channel: the first ``WireLimits/maxChannelAttachments``
    /// with a channel id other than 0, 1 – ``WireLimits/maxChannelAttachmentBytes`` bytes of data and
    /// a channel not seen before in the advert; the rest are ignored (§13.12).
    static func attachments(_ list: [ChannelAttachmentPayload]) -> [UInt32: Data] {
        var result: [UInt32: Data] = [:]
        for attachment in list where result.count < WireLimits.maxChannelAttachments {
            guard attachment.channel != 0, result[attachment.channel] == nil,
                  (1...WireLimits.maxChannelAttachmentBytes).contains(attachment.data.count) else { continue }
            result[attachment.channel] = attachment.data
        }
        return result
    }
}
