import MeshSession

/// The limits of the rooms application (PROTOCOL.md §15.3).
public enum RoomLimits {
    /// What a `RoomChat` adds around its line's text (§15.2): the `RoomText` fields, the room id,
    /// nonce and tag, and their protobuf framing, rounded up.
    public static let maxRoomChatOverhead = 128
    /// The longest room line, in bytes of UTF-8: what fits one channel broadcast
    /// (``MeshSession/Session/maxChannelPayload``) beside ``maxRoomChatOverhead``: 63,872.
    public static let maxTextBytes = Session.maxChannelPayload - maxRoomChatOverhead

    /// The limits of channel 2 (§15.3), binding what this node accepts:
    /// - broadcasts up to ``MeshSession/Session/maxChannelPayload`` (a room line of
    ///   ``maxTextBytes``, sealed); nothing is sent sealed on channel 2, so a sealed message is
    ///   admitted only up to 1 byte, and then dropped as misdelivered;
    /// - 1,000 lines a second from one node after a burst of 1,024: the mesh's own budget for
    ///   broadcasts (§10), so that a pasted block of lines reaches a room as it reaches the mesh;
    /// - no clock window: a replayed line is recognised by its message id when it is stored, and
    ///   nodes with a wrong clock still talk;
    /// - 256 lines held for the consumer, then the links wait (nothing is lost);
    /// - no attachment.
    public static var channel: ChannelLimits {
        var limits = ChannelLimits()
        limits.maxMessageSize = 1
        limits.maxBroadcastSize = Session.maxChannelPayload
        limits.messagesPerSecond = 1_000
        limits.burst = 1_024
        limits.replayWindow = nil
        limits.inboundCapacity = 256
        limits.overflow = .wait
        limits.maxAttachmentSize = 0
        return limits
    }
}
