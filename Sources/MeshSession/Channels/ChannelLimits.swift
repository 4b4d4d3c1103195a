/// The limits of one application channel (PROTOCOL.md §13.12). They bind this node as a receiver:
/// a message from another node over a limit is dropped (counted, logged at debug) and never closes
/// the link it came on, since a relay cannot know a channel's limits.
public struct ChannelLimits: Sendable, Hashable {
    /// What a full inbound queue does with the next message.
    public enum Overflow: Sendable, Hashable {
        /// The link the message came on waits until the consumer takes one (back-pressure, like
        /// ``SessionEvent``s, PROTOCOL.md §10): nothing is lost, but a consumer that stops reading
        /// stalls the links that carry its channel.
        case wait
        /// The message is dropped (counted, logged at debug at most once a second).
        case drop
    }

    /// The largest payload this channel sends or accepts, sealed to one node: 1 –
    /// ``Session/maxChannelPayload``. Default: ``Session/maxChannelPayload``.
    public var maxMessageSize = Session.maxChannelPayload
    /// The largest payload this channel broadcasts or accepts from a broadcast: 1 –
    /// ``Session/maxChannelPayload``. Default: 4,096.
    public var maxBroadcastSize = 4_096
    /// Messages accepted per second from one node (sealed and broadcast together), at least 1.
    /// Default: 200.
    public var messagesPerSecond = 200
    /// Messages one node may send at once before ``messagesPerSecond`` applies, at least 1.
    /// Default: 400.
    public var burst = 400
    /// Messages whose sender's clock (when it sealed or signed them) differs from ours by more than
    /// this are dropped as replays; `nil` accepts any clock. Default: 600 seconds, the mesh's own
    /// window for sealed data (PROTOCOL.md §13.6). Within the window, a repeated packet is dropped
    /// by its packet id (§13.2.7.3).
    public var replayWindow: Duration? = .seconds(600)
    /// Messages held for the consumer of ``MeshChannel/messages``: 1 – 65,536. Default: 256.
    public var inboundCapacity = 256
    /// What a full inbound queue does. Default: ``Overflow/wait``.
    public var overflow = Overflow.wait
    /// The largest attachment this node may set, and accepts from others' adverts: 0 –
    /// ``Session/maxChannelAttachment``. Default: ``Session/maxChannelAttachment``.
    public var maxAttachmentSize = Session.maxChannelAttachment
    /// Whether ``MeshChannel/send(_:to:)`` to a neighbour travels on the link itself
    /// (PROTOCOL.md §6.3) instead of sealed on an end-to-end session (§13.6, §19). Default: `false`.
    ///
    /// Both reach only that node. The link's encryption authenticates both ends and has forward
    /// secrecy for the link's lifetime (its ephemeral keys); the end-to-end session has forward
    /// secrecy for every message and heals after a compromise within a round trip, at the price of
    /// a second encryption of every byte. Bulk data (streams, resources) takes the link; private
    /// conversation keeps the session. Nodes further away always get sealed packets.
    public var directToNeighbours = false
    /// Whether ``MeshChannel/messages`` may hand over payloads that are slices of a received
    /// record (indices not starting at 0) instead of copies: for the library's own consumers,
    /// whose decoders read slices (the stream shell copies each chunk once for its application).
    /// Applications always get payloads whose indices start at 0.
    package var deliversSlices = false
    /// Whether a consumer waiting on ``MeshChannel/messages`` is woken once per turn of the
    /// event loop of the link its messages came on, after everything that turn read, instead of
    /// for each message: for the library's own shells, which take what arrived together as one
    /// batch (one thread hand-off for several packets).
    package var wakesOncePerRead = false

    /// Creates the defaults.
    public init() {}

    /// The first limit out of its range, as a sentence, or `nil` when all are valid.
    var problem: String? {
        if !(1...Session.maxChannelPayload).contains(maxMessageSize) {
            return "maxMessageSize \(maxMessageSize) is outside 1…\(Session.maxChannelPayload)"
        }
        if !(1...Session.maxChannelPayload).contains(maxBroadcastSize) {
            return "maxBroadcastSize \(maxBroadcastSize) is outside 1…\(Session.maxChannelPayload)"
        }
        if messagesPerSecond < 1 { return "messagesPerSecond \(messagesPerSecond) is below 1" }
        if burst < 1 { return "burst \(burst) is below 1" }
        if let replayWindow, replayWindow <= .zero { return "replayWindow \(replayWindow) is not positive" }
        if !(1...65_536).contains(inboundCapacity) { return "inboundCapacity \(inboundCapacity) is outside 1…65536" }
        if !(0...Session.maxChannelAttachment).contains(maxAttachmentSize) {
            return "maxAttachmentSize \(maxAttachmentSize) is outside 0…\(Session.maxChannelAttachment)"
        }
        return nil
    }
}
