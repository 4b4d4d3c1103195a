import struct Foundation.Data
import NIOConcurrencyHelpers

/// Where a resource transfer is, at one moment.
public struct ResourceSnapshot: Sendable, Hashable {
    /// Bytes the receiver acknowledged (sending) or stored (receiving).
    public var bytes: UInt64
    /// The resource's size.
    public var total: UInt64
    /// Bytes per second over the last few seconds (0 before there is a measure, and while paused).
    public var rate: Double
    /// The time left at ``rate``, or `nil` when it is not known.
    public var timeLeft: Duration?

    /// Creates a snapshot.
    /// - Parameters:
    ///   - bytes: bytes so far.
    ///   - total: the size.
    ///   - rate: bytes per second.
    ///   - timeLeft: the estimate.
    public init(bytes: UInt64, total: UInt64, rate: Double = 0, timeLeft: Duration? = nil) {
        self.bytes = bytes
        self.total = total
        self.rate = rate
        self.timeLeft = timeLeft
    }

    /// The fraction done, 0…1 (1 for an empty resource).
    public var fractionCompleted: Double { total == 0 ? 1 : Double(bytes) / Double(total) }
}

/// One step of a resource transfer, in order: progress, pauses and resumptions, and one end.
public enum ResourceUpdate: Sendable, Hashable {
    /// Bytes moved; at most one per ``ResourceLimits/progressInterval`` (older ones are dropped
    /// when the consumer falls behind).
    case progress(ResourceSnapshot)
    /// The peer went out of reach (or this node restarted and waits for it): the transfer waits,
    /// for at most ``ResourceLimits/unreachableTimeout``.
    case paused
    /// The peer is reachable again: the transfer goes on from what the receiver holds.
    case resumed
    /// The transfer is complete and the content's SHA-256 matches the offer's. Receiving, `path`
    /// is where the resource is now (in the session's resource directory; move it away, or it is
    /// there until removed); sending, `path` is `nil`.
    case completed(path: String?)
    /// The transfer ended without the resource. Receiving, the partial content is removed.
    case failed(ResourceFailure)
}

/// A resource transfer in progress (Multipeer's `Progress` of `sendResource`, and of
/// `didStartReceivingResourceWithName`): what it is, how far it got, its updates as an
/// `AsyncSequence`, and a way to cancel it.
///
/// ```swift
/// let transfer = try await session.sendResource(at: "/tmp/photo.jpg", withName: "photo.jpg", to: peer)
/// for await update in transfer {
///     if case .progress(let snapshot) = update { print(snapshot.fractionCompleted) }
///     if case .failed(let failure) = update { print(failure) }
/// }
/// ```
///
/// The sequence ends after ``ResourceUpdate/completed(path:)`` or ``ResourceUpdate/failed(_:)``;
/// it holds at most 256 updates (older progress is dropped for a slow consumer, the end is never
/// lost) and has one consumer. It also ends, with neither, when the session stops: the transfer
/// is kept on disk and resumes when a session starts again on the same resource directory
/// (``ResourceEvent/restored(_:)``). This type is thread-safe.
public final class ResourceProgress: AsyncSequence, Sendable, CustomStringConvertible {
    /// Which way a transfer goes.
    public enum Direction: String, Sendable, Hashable {
        /// This node sends.
        case outgoing
        /// This node receives.
        case incoming
    }

    /// The transfer's id, the same on both sides and across restarts.
    public let id: ResourceID
    /// Which way it goes.
    public let direction: Direction
    /// The other side.
    public let peer: PeerID
    /// The name the sender gave it: untrusted text from the sender when receiving, never a path
    /// (PROTOCOL.md §16.6).
    public let name: String
    /// The size in bytes.
    public let size: UInt64
    /// The content's SHA-256, 32 bytes.
    public let sha256: Data

    private let stream: AsyncStream<ResourceUpdate>
    private let continuation: AsyncStream<ResourceUpdate>.Continuation
    private let state: NIOLockedValueBox<State>
    private let canceller: @Sendable (ResourceID, NodeID) async -> Void

    private struct State {
        var bytes: UInt64 = 0
        var samples: [(at: ContinuousClock.Instant, bytes: UInt64)] = []
        var paused = false
        var outcome: ResourceUpdate?
    }

    init(id: ResourceID, direction: Direction, peer: PeerID, offer: ResourceOffer, bytes: UInt64,
         canceller: @escaping @Sendable (ResourceID, NodeID) async -> Void) {
        self.id = id
        self.direction = direction
        self.peer = peer
        self.name = offer.name
        self.size = offer.size
        self.sha256 = offer.sha256
        self.canceller = canceller
        (stream, continuation) = AsyncStream.makeStream(of: ResourceUpdate.self, bufferingPolicy: .bufferingNewest(256))
        state = NIOLockedValueBox(State(bytes: bytes))
    }

    /// Where the transfer is now (rate and time left over the last five seconds).
    public var snapshot: ResourceSnapshot {
        state.withLockedValue { state in
            var snapshot = ResourceSnapshot(bytes: state.bytes, total: size)
            if !state.paused, let first = state.samples.first, let last = state.samples.last, last.at > first.at {
                let seconds = Double((last.at - first.at).components.seconds) + Double((last.at - first.at).components.attoseconds) / 1e18
                snapshot.rate = Double(last.bytes - Swift.min(last.bytes, first.bytes)) / seconds
                if snapshot.rate > 0 {
                    let left = Double(size - Swift.min(size, state.bytes)) / snapshot.rate
                    if left.isFinite, left < 1e9 { snapshot.timeLeft = .milliseconds(Int64(left * 1000)) }
                }
            }
            return snapshot
        }
    }

    /// How the transfer ended, or `nil` while it runs.
    public var outcome: ResourceUpdate? { state.withLockedValue { $0.outcome } }

    /// Whether the transfer waits for its peer.
    public var isPaused: Bool { state.withLockedValue { $0.paused } }

    /// Gives the transfer up: the other side is told (`cancelled`), a partial resource is removed,
    /// and the sequence ends with ``ResourceUpdate/failed(_:)``. Does nothing once it has ended.
    public func cancel() async { await canceller(id, peer.id) }

    /// The updates, in order.
    public func makeAsyncIterator() -> AsyncStream<ResourceUpdate>.Iterator { stream.makeAsyncIterator() }

    /// "outgoing photo.jpg to bob (…)".
    public var description: String { "\(direction.rawValue) \(name) \(direction == .outgoing ? "to" : "from") \(peer)" }

    // MARK: Shell side

    /// Records bytes moved at `now` (the session's clock); yields a progress update when `report`
    /// says one is due.
    func moved(_ bytes: UInt64, report: Bool, now: ContinuousClock.Instant) {
        state.withLockedValue { state in
            state.bytes = bytes
            // At most ten samples a second over five seconds: the rate costs the same at any speed.
            if let last = state.samples.last, now - last.at < .milliseconds(100) { return }
            state.samples.append((now, bytes))
            state.samples.removeAll { now - $0.at > .seconds(5) }
        }
        if report { continuation.yield(.progress(snapshot)) }
    }

    /// Records a pause or a resumption and yields it.
    func pause(_ paused: Bool) {
        state.withLockedValue {
            $0.paused = paused
            $0.samples = []
        }
        continuation.yield(paused ? .paused : .resumed)
    }

    /// Yields the end and finishes the sequence.
    func end(_ outcome: ResourceUpdate) {
        state.withLockedValue { $0.outcome = outcome }
        continuation.yield(outcome)
        continuation.finish()
    }

    /// Finishes the sequence without an end: the session stopped (the transfer is kept on disk).
    func suspend() { continuation.finish() }
}
