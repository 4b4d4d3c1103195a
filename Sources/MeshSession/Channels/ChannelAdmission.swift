import MeshRouting
import MeshWire

/// The receive limits of one channel as a pure value (PROTOCOL.md §13.12): whether an arriving
/// message is within the channel's size limit, its replay window and its sender's rate.
///
/// Per-sender token buckets are kept for at most ``maxSenders`` nodes. When that many are held, a
/// bucket that has refilled completely is forgotten to make room (it holds nothing a new bucket
/// would not); when none has, the new sender's message is refused. Time is injected.
struct ChannelAdmission: Sendable {
    /// Why a message was refused.
    enum Refusal: String, Sendable, Hashable {
        /// Larger than the channel's limit for its delivery.
        case tooLarge
        /// Its sender's clock is outside the replay window.
        case stale
        /// Its sender is over the channel's rate.
        case overRate
        /// Too many senders are being rate-limited at once.
        case tooManySenders
    }

    /// Senders whose buckets are kept at most.
    static let maxSenders = 1_024

    let limits: ChannelLimits
    private var buckets: [NodeID: TokenBucket] = [:]

    init(limits: ChannelLimits) { self.limits = limits }

    /// Decides on one message.
    /// - Parameters:
    ///   - size: the payload's bytes.
    ///   - delivery: how it came.
    ///   - sender: its origin node.
    ///   - skew: how far its sender's clock is from ours.
    ///   - now: the current time.
    /// - Returns: `nil` when it is accepted (a token was taken), else why not.
    mutating func admit(size: Int, delivery: ChannelMessage.Delivery, sender: NodeID, skew: Duration,
                        now: RouterInstant) -> Refusal? {
        let limit = delivery == .sealed ? limits.maxMessageSize : limits.maxBroadcastSize
        guard size <= limit else { return .tooLarge }
        if let window = limits.replayWindow, skew > window { return .stale }
        if buckets[sender] == nil {
            if buckets.count >= Self.maxSenders {
                guard let full = buckets.first(where: { $0.value.isFull(now: now) })?.key else {
                    return .tooManySenders
                }
                buckets[full] = nil
            }
            buckets[sender] = TokenBucket(burst: limits.burst, perSecond: limits.messagesPerSecond, now: now)
        }
        guard buckets[sender]?.take(now: now) == true else { return .overRate }
        return nil
    }
}
