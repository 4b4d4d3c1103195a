import MeshCore

/// The limits of the wire protocol, in one place (PROTOCOL.md §10).
///
/// Every limit here is enforced by a codec in this module or by the link layer, and each
/// one is tested. Values are fixed by protocol version 1; they are not configuration.
public enum WireLimits {
    /// The largest Noise message, handshake or transport (Noise §3): 65,535 bytes.
    public static let maxNoiseMessage = 65_535
    /// The largest frame `length` field: one type byte plus one Noise message (§3.3).
    public static let maxFrameLength = 1 + maxNoiseMessage
    /// The size of the frame header: a 4-byte length and a 1-byte type (§3.1).
    public static let frameHeaderSize = 5
    /// The ChaChaPoly authentication tag appended to every encrypted message.
    public static let authenticationTagSize = 16
    /// The smallest TRANSPORT body: an empty ciphertext has still its tag plus the record flags.
    public static let minTransportBody = authenticationTagSize + 1
    /// The largest fragment of a message carried by one record (§5.2): 65,535 − 16 − 1.
    public static let maxRecordData = maxNoiseMessage - authenticationTagSize - 1
    /// The largest reassembled message (§5.3): 16 MiB.
    public static let maxMessageSize = 16 * 1024 * 1024
    /// The longest chat text in UTF-8 bytes (§6.1).
    public static let maxChatTextBytes = 64 * 1024
    /// The largest sealed packet: one Noise message (§13.6).
    public static let maxSealedSize = 65_535
    /// The largest plaintext of a sealed packet: 65,535 bytes less what a prekey message adds (125:
    /// kind, prekey id, two keys, the ratchet header and the tag, §19.6).
    public static let maxSealedPlaintext = 65_535 - 125
    /// The longest private chat text and the largest data payload sent across hops (§13.6): what
    /// fits a sealed packet beside the sender's keys and the message header.
    public static let maxRelayedPayload = 64_000
    /// The longest broadcast chat text or data payload (§13.5).
    public static let maxBroadcastPayload = 64_000
    /// The most neighbours one link-state advert lists (§13.2).
    public static let maxAdvertNeighbors = 256
    /// The most key rotation statements an advert carries, newest first; later ones are ignored (§20.2).
    public static let maxKeyRotations = 4
    /// The highest hop limit a packet may carry (§13.2.8).
    public static let maxHopLimit = 32
    /// The most channel attachments one advert carries; later ones are ignored (§13.12).
    public static let maxChannelAttachments = 16
    /// The largest channel attachment, in bytes; larger ones are ignored (§13.12).
    public static let maxChannelAttachmentBytes = 1024
    /// The longest `Hello` payload in handshake message 1 (§4.3).
    public static let maxHelloSize = 1024
    /// The most cipher suite ids a `Hello` or `HandshakeIdentity` may list (§4.11); more is `protocolViolation`.
    public static let maxOfferedSuites = 8
    /// The longest reason in an ABORT frame (§3.2).
    public static let maxAbortReasonBytes = 256
    /// The largest UDP datagram (§8.3): the IPv6 minimum MTU less the IPv6 and UDP headers.
    public static let maxDatagramSize = 1280 - 40 - 8
    /// The size of the clear datagram header: type, receiver tag, counter (§8.2).
    public static let datagramHeaderSize = 1 + 8 + 8
    /// The largest payload of one unreliable send (§8.3): 1,232 − 17 − 16 − 1 = 1,198 bytes.
    public static let maxUnreliablePayload = maxDatagramSize - datagramHeaderSize - authenticationTagSize - 1
    /// The number of datagram counters the replay window remembers (§8.4).
    public static let replayWindowSize = 1024
    /// The largest invitation context (§4.8): 4,096 bytes.
    public static let maxInvitationContext = 4096
    /// The range of an invitation's timeout in milliseconds (§4.8): 1 s to 5 min.
    public static let invitationTimeoutMilliseconds: ClosedRange<UInt32> = 1_000...300_000
    /// The length of a display name in UTF-8 bytes (§2.3).
    public static let displayNameBytes = PeerID.displayNameBytes
}
