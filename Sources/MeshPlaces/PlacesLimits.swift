import MeshSession

/// The limits of the places application (PROTOCOL.md §14.5). Each one is enforced where input
/// arrives (a command line, a user line, a packet) with an error that names it.
public enum PlacesLimits {
    /// The smallest lookup radius: 1 m.
    public static let minRadiusMetres = 1.0
    /// The largest lookup radius: 100 km (a lookup is about "near here").
    public static let maxRadiusMetres = 100_000.0
    /// Results one lookup asks for by default: 20.
    public static let defaultLimit = 20
    /// Results one lookup may ask for, and one answer may carry: 50.
    public static let maxLimit = 50
    /// Bytes of UTF-8 in a lookup's text: 128.
    public static let maxQueryTextBytes = 128
    /// Bytes of a place name in an answer: 256 (longer names are cut at a character boundary).
    public static let maxHitNameBytes = 256
    /// Peers one lookup asks at most (the nearest by hops of those whose data covers the point): 8.
    public static let maxPeersAsked = 8
    /// How long a lookup waits for answers: 3 s.
    public static let answerTimeout: Duration = .seconds(3)
    /// Lookups answered per asking node: a burst of 10, refilled at 5 per second.
    public static let queriesPerNodeBurst = 10.0
    /// See ``queriesPerNodeBurst``.
    public static let queriesPerNodePerSecond = 5.0
    /// Lookups answered from all nodes together: a burst of 50, refilled at 50 per second.
    public static let queriesTotalBurst = 50.0
    /// See ``queriesTotalBurst``.
    public static let queriesTotalPerSecond = 50.0
    /// Bytes of UTF-8 in a pin's label: 1 to 64.
    public static let pinLabelBytes = 1...64
    /// Bytes of UTF-8 in a pin's note: 256.
    public static let maxPinNoteBytes = 256
    /// How long a pin lives by default: 24 hours.
    public static let defaultPinLifetime: Duration = .seconds(24 * 3600)
    /// The longest a pin may live: 7 days; the shortest: 1 minute.
    public static let pinLifetime: ClosedRange<Duration> = .seconds(60) ... .seconds(7 * 24 * 3600)
    /// How far in the future a received pin's creation time may be (clock skew): 1 day.
    public static let pinClockSkew: Duration = .seconds(24 * 3600)
    /// Pins one catch-up (``PlacesPayload`` `pins`) carries: 64.
    public static let maxPinsPerSet = 64
    /// Bytes of UTF-8 in an advertised data set's name: 1 to 64.
    public static let placeSetNameBytes = 1...64
    /// Data sets one node advertises (its channel 3 attachment, §14.1): 8; more are left out
    /// (logged) by the advertiser and ignored by the receiver. Eight sets with names of the
    /// longest length take 880 bytes, within the 1,024 bytes of an attachment.
    public static let maxPlaceSets = 8

    /// The limits of channel 3 (§14.5), binding what this node accepts:
    /// - sealed messages (lookups, answers, pin catch-ups) up to 32,768 bytes: the largest answer
    ///   (50 hits of 256-byte names) takes about 17,300 bytes and the largest catch-up (64 pins
    ///   with 64-byte labels and 256-byte notes) about 24,700;
    /// - broadcasts (pins and withdrawals) up to 1,024 bytes: the largest pin takes 383;
    /// - 50 messages a second from one node after a burst of 100: above the lookups one node may
    ///   have answered (``queriesPerNodeBurst``), so that an asker over that rate gets a refusal
    ///   it can show rather than silence;
    /// - messages whose sender's clock (when it sealed or signed them) is more than 600 s from
    ///   ours are dropped, so that a recorded catch-up cannot be replayed later to bring back
    ///   withdrawn pins;
    /// - 256 messages held for the consumer, then the links wait;
    /// - an attachment of up to 1,024 bytes (the data sets).
    public static var channel: ChannelLimits {
        var limits = ChannelLimits()
        limits.maxMessageSize = 32_768
        limits.maxBroadcastSize = 1_024
        limits.messagesPerSecond = 50
        limits.burst = 100
        limits.replayWindow = .seconds(600)
        limits.inboundCapacity = 256
        limits.overflow = .wait
        limits.maxAttachmentSize = Session.maxChannelAttachment
        return limits
    }
}
