/// The limits of file transfer (PROTOCOL.md §16.7), in one place. Each is enforced by the state
/// machines or ``FileTransfers`` and tested.
public enum FileTransferLimits {
    /// The largest file: 64 MiB. Big enough for photos, documents and small archives; small enough
    /// that a transfer across a few relays ends in minutes and a receiver's disk is not filled by
    /// one peer (with ``maxIncomingTransfers`` at once: at most 1 GiB of `.part` files).
    public static let maxFileSize: UInt64 = 64 * 1024 * 1024
    /// The chunk size this node sends: with the `Sealed` and `FileTransfer` fields around it
    /// (under 400 bytes) a chunk's sealed plaintext stays within ``MeshWire/WireLimits/maxRelayedPayload``.
    public static let chunkSize = 60_000
    /// The smallest chunk size a receiver accepts in an offer.
    public static let minChunkSize = 1_024
    /// The largest chunk size a receiver accepts in an offer.
    public static let maxChunkSize = 60_000
    /// Chunks in flight (sent, not acknowledged) per transfer, and how far past its cumulative
    /// acknowledgement a receiver stores chunks: 16 × 60,000 ≈ 1 MB, which a relay's link queue
    /// holds without dropping, and which fills a 100 ms path at about 10 MB/s.
    public static let window = 16
    /// The longest file name in an offer, in UTF-8 bytes.
    public static let maxOfferedNameBytes = 255
    /// The longest name a received file is stored under, in UTF-8 bytes (extension kept).
    public static let maxStoredNameBytes = 200
    /// The longest cancel reason, in UTF-8 bytes (longer ones are cut).
    public static let maxReasonBytes = 256
    /// Transfers at once with one peer, in each direction.
    public static let maxTransfersPerPeer = 4
    /// Transfers at once with all peers, in each direction.
    public static let maxIncomingTransfers = 16
    /// Outgoing transfers at once with all peers.
    public static let maxOutgoingTransfers = 16
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
    /// The least time between two progress events of one transfer.
    public static let progressInterval: Duration = .milliseconds(500)
}
