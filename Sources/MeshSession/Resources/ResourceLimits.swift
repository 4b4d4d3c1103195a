/// The protocol limits of resource transfer (PROTOCOL.md §16.7), in one place. Each is enforced
/// by the state machines or the ``Session``'s resource shell and tested. A receiver's own, lower
/// limits (size, count, disk space) are its policy's: ``ResourceConfiguration``.
public enum ResourceLimits {
    /// The largest resource the protocol carries: 16 GiB (chunk indexes stay far below 2³²).
    public static let maxSize: UInt64 = 16 * 1024 * 1024 * 1024
    /// The chunk size this node sends: with the `ResourceMessage` and channel fields around it
    /// (under 100 bytes) a chunk stays within ``Session/maxChannelPayload``.
    public static let chunkSize = 60_000
    /// The smallest chunk size a receiver accepts in an offer.
    public static let minChunkSize = 1_024
    /// The largest chunk size a receiver accepts in an offer.
    public static let maxChunkSize = 60_000
    /// Chunks in flight (sent, not acknowledged) per transfer through relays, and the least to a
    /// neighbour: 16 × 60,000 ≈ 1 MB, which a relay's link queue holds without dropping, and which
    /// fills a 100 ms path at about 10 MB/s.
    public static let window = 16
    /// How far past its cumulative acknowledgement a receiver stores chunks (PROTOCOL.md §16.4,
    /// version 8): a sender keeps at most this many in flight to a neighbour, whose link holds
    /// back what it cannot take (§10), and ``window`` through relays.
    public static let receiveWindow = 256
    /// Chunks in flight to a neighbour (PROTOCOL.md §16.4, version 8): a sixteenth of the
    /// resource, from ``window`` to ``receiveWindow`` chunks (about 1 to 15 MB). A neighbour's link
    /// holds back what it cannot take, so the window only has to cover the round trip through both
    /// nodes' event loops and actors, which a loaded machine stretches to milliseconds; a sixteenth
    /// bounds what a dropped link or a restart sends twice (what was in flight) to about 6% of the
    /// resource.
    public static func directWindow(for offer: ResourceOffer) -> Int {
        let sixteenth = offer.size / 16 / UInt64(max(1, offer.chunkSize))
        return Int(min(UInt64(receiveWindow), max(UInt64(window), sixteenth)))
    }
    /// The longest name in an offer, in UTF-8 bytes.
    public static let maxOfferedNameBytes = 255
    /// The longest cancel reason, in UTF-8 bytes (longer ones are cut).
    public static let maxReasonBytes = 256
    /// Outgoing transfers at once with one peer.
    public static let maxOutgoingPerPeer = 4
    /// Outgoing transfers at once with all peers.
    public static let maxOutgoingTransfers = 16
    /// Offers waiting for the application's answer (``ResourceAcceptPolicy/ask(timeout:)``) at
    /// once; more are refused as `busy`.
    public static let maxPendingOffers = 32
    /// The first retransmission timeout, before a round trip was measured.
    public static let initialRetransmissionTimeout: Duration = .seconds(3)
    /// The shortest retransmission timeout.
    public static let minRetransmissionTimeout: Duration = .milliseconds(500)
    /// The longest retransmission timeout.
    public static let maxRetransmissionTimeout: Duration = .seconds(10)
    /// Transmissions of one offer or chunk without an answer before the sender gives up.
    public static let maxTransmissions = 8
    /// How long a receiver waits for the next chunk before it gives up.
    public static let receiveIdleTimeout: Duration = .seconds(60)
    /// How long a transfer waits, paused, for its peer to become reachable again before it fails.
    public static let unreachableTimeout: Duration = .seconds(600)
    /// How long a receiver remembers a finished transfer, to confirm it again when the sender
    /// did not hear the first confirmation.
    public static let finishedMemory: Duration = .seconds(600)
    /// Finished transfers remembered at most (oldest forgotten first).
    public static let maxFinishedRemembered = 256
    /// Transfers received whole that a receiver records on disk, beyond ``finishedMemory`` and
    /// across its restarts (the newest kept; 64 bytes each): a sender that comes back later with
    /// the same transfer is answered with its `ResourceDone`, and the file is not sent twice.
    public static let maxFinishedRecords = 1_024
    /// The least time between two progress updates of one transfer.
    public static let progressInterval: Duration = .milliseconds(500)
    /// The most time between two writes of a receiver's state file while chunks arrive (PROTOCOL.md
    /// §16.4.2): the `.part` file is synced first, so the state file never claims a chunk that is
    /// not on disk; a crash loses at most this much work, which the sender sends again.
    public static let checkpointInterval: Duration = .seconds(1)
    /// Chunks stored between two writes of a receiver's state file, at most.
    public static let checkpointChunks = 16
}
