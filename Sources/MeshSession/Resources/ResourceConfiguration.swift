import struct Foundation.Data

/// What a session does with resources offered to it (Multipeer accepts every resource; here the
/// receiver decides).
public enum ResourceAcceptPolicy: Sendable, Hashable {
    /// Accept every offer within the ``ResourceConfiguration`` limits (size, count, disk space).
    case automatic
    /// Offers within the limits are reported as ``ResourceEvent/offered(_:)``; the application
    /// answers each with ``Session/answerResourceOffer(_:accept:)`` within `timeout` (else it is
    /// refused). The sender's retransmitted offers wait meanwhile.
    case ask(timeout: Duration)
    /// Refuse every offer (`refused`).
    case refuse
}

/// Resource settings of a session (PROTOCOL.md §16).
public struct ResourceConfiguration: Sendable, Hashable {
    /// Where transfers in progress (both ways) and received resources are kept, created with mode
    /// 0700: transfers resume from it after a restart of the session, so give each node its own.
    /// `nil`: `resources/` under the ``LocalPeer``'s data directory when it has one
    /// (``LocalPeer/init(displayName:dataDirectory:)``); without either, resources are off
    /// (``Session/sendResource(at:withName:to:)`` throws `resourcesUnavailable`, offers are refused).
    public var directory: String?
    /// What to do with offers. Default: ``ResourceAcceptPolicy/automatic``.
    public var acceptPolicy = ResourceAcceptPolicy.automatic
    /// The largest resource accepted, in bytes (at most ``ResourceLimits/maxSize``).
    /// Default: 1 GiB.
    public var maxIncomingSize: UInt64 = 1 << 30
    /// Resources received at once from one node. Default: 4.
    public var maxIncomingPerPeer = 4
    /// Resources received at once from all nodes. Default: 16.
    public var maxIncoming = 16
    /// Free space left on the resource directory's file system after an accepted resource is
    /// stored whole (an offer that would leave less is refused as `tooLarge`). Default: 64 MiB.
    public var minFreeBytes: UInt64 = 64 << 20

    /// Creates the defaults.
    public init() {}
}

/// An offer waiting for the application's answer (``ResourceAcceptPolicy/ask(timeout:)``).
public struct ResourceOfferRequest: Sendable, Hashable {
    /// The transfer's id.
    public let id: ResourceID
    /// Who offers it.
    public let sender: PeerID
    /// The sender's name for it: untrusted text, never a path (PROTOCOL.md §16.6).
    public let name: String
    /// Its size in bytes.
    public let size: UInt64
    /// Its SHA-256, 32 bytes.
    public let sha256: Data
}


/// What the session reports about resources (``Session/resourceEvents``).
public enum ResourceEvent: Sendable {
    /// An offer waits for ``Session/answerResourceOffer(_:accept:)`` (only with
    /// ``ResourceAcceptPolicy/ask(timeout:)``).
    case offered(ResourceOfferRequest)
    /// Multipeer's `didStartReceivingResourceWithName`: a resource is coming; its updates are on
    /// the ``ResourceProgress``.
    case startedReceiving(ResourceProgress)
    /// Multipeer's `didFinishReceivingResourceWithName`: the resource is stored at `path` (in the
    /// resource directory: move it away) and its SHA-256 checked, or it failed.
    case finishedReceiving(ResourceProgress, Result<String, ResourceFailure>)
    /// A transfer of either direction was loaded from the resource directory when the session
    /// started: it is paused until its peer is reachable, then resumes where the receiver is.
    case restored(ResourceProgress)
}
