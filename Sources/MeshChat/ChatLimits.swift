import MeshSession

/// The limits of the chat application (PROTOCOL.md §17.5, §10), in one place. They bind this node
/// as a sender and as a receiver.
public enum ChatLimits {
    /// What a `ChatMessage` adds around the longest line's text: the oneof member's tag and length,
    /// the 16-byte id, the text's tag and length, the time, sequence and floor at their longest, and
    /// the action flag (61 bytes, PROTOCOL.md §17.5), rounded up.
    public static let maxFraming = 64
    /// The longest line, to everyone or private, in bytes of UTF-8: 63,936, so that a line and its
    /// framing fit one channel payload (``MeshSession/Session/maxChannelPayload``, 64,000 bytes).
    public static let maxLineBytes = Session.maxChannelPayload - maxFraming
    /// The most message ids in one receipt; a receipt with more is read up to this many.
    public static let maxReceiptIDs = 64

    /// The chat channel's limits (channel 1, PROTOCOL.md §17.5):
    /// - payloads up to ``MeshSession/Session/maxChannelPayload`` both sealed and broadcast (a line
    ///   to everyone is a broadcast, as long as a private line);
    /// - 2,048 messages at once, then 2,048 a second, per sender: above the mesh's own per-neighbour
    ///   budgets for broadcasts (1,024, then 1,000/s) and sealed packets (1,024, then 1,024/s), so
    ///   that lines pasted at once, which the mesh paces but never drops, are not dropped here;
    /// - no replay window: lines are deduplicated by message id on disk and receipts are
    ///   idempotent, so a node whose clock is far off still chats (§13.6);
    /// - 1,024 messages held for the messenger, and a full queue waits (back-pressure) instead of
    ///   dropping, so nothing accepted by the mesh is lost;
    /// - an attachment of at most ``AwayText/maxBytes`` bytes: the away text (§17.7).
    public static var channel: ChannelLimits {
        var limits = ChannelLimits()
        limits.maxMessageSize = Session.maxChannelPayload
        limits.maxBroadcastSize = Session.maxChannelPayload
        limits.messagesPerSecond = 2_048
        limits.burst = 2_048
        limits.replayWindow = nil
        limits.inboundCapacity = 1_024
        limits.overflow = .wait
        limits.maxAttachmentSize = AwayText.maxBytes
        return limits
    }
}
