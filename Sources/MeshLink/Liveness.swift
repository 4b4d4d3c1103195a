/// Keepalive and dead-peer detection for one link, as a pure state machine (PROTOCOL.md §7).
///
/// Time is injected as monotonic nanoseconds. The shell reports frames sent and received, pauses
/// and resumes of reading, and calls ``tick(now:)`` every ``checkInterval``; each tick returns what
/// to do: nothing, send a ping, or declare the peer dead.
public struct Liveness: Sendable {
    /// What the shell must do after a tick.
    public enum Action: Sendable, Hashable {
        /// Nothing.
        case none
        /// Send a ping with this nonce.
        case sendPing(nonce: UInt64)
        /// Nothing was received for `silence` nanoseconds while reading: close the link.
        case peerDead(silence: UInt64)
    }

    /// Send a ping after this long without sending (1 s).
    public static let defaultPingInterval: UInt64 = 1_000_000_000
    /// Declare the peer dead after this long without receiving (3 s).
    public static let defaultDeadAfter: UInt64 = 3_000_000_000
    /// How often the shell should call ``tick(now:)`` (0.25 s).
    public static let checkInterval: UInt64 = 250_000_000

    /// The idle time after which a ping is sent.
    public let pingInterval: UInt64
    /// The silence after which the peer is dead.
    public let deadAfter: UInt64
    private var lastReceived: UInt64
    private var lastSent: UInt64
    private var pausedSince: UInt64?
    private var lastTick: UInt64
    private var acceptedSinceProof = 0
    private var nextNonce: UInt64 = 1
    private var outstanding: [UInt64: UInt64] = [:]
    /// The latest measured round-trip time in nanoseconds, if any.
    public private(set) var roundTrip: UInt64?

    /// Creates the state for a link that was just established.
    /// - Parameters:
    ///   - now: the current monotonic time.
    ///   - pingInterval: idle time before a ping.
    ///   - deadAfter: silence before the peer is dead.
    public init(now: UInt64, pingInterval: UInt64 = defaultPingInterval, deadAfter: UInt64 = defaultDeadAfter) {
        self.pingInterval = pingInterval
        self.deadAfter = deadAfter
        self.lastReceived = now
        self.lastSent = now
        self.lastTick = now
    }

    /// A check later than this after the previous one means this node itself was not running
    /// (an overloaded machine, a stopped process): the gap is not the peer's silence.
    public static let stallThreshold: UInt64 = 4 * checkInterval

    /// A frame arrived.
    /// - Parameter now: the current time.
    public mutating func frameReceived(now: UInt64) {
        lastReceived = max(lastReceived, now)
        acceptedSinceProof = 0
    }

    /// A frame was written.
    /// - Parameter now: the current time.
    public mutating func frameSent(now: UInt64) { lastSent = max(lastSent, now) }

    /// The shell stopped reading because the application is not consuming (back-pressure).
    /// - Parameter now: the current time.
    public mutating func readingPaused(now: UInt64) {
        if pausedSince == nil { pausedSince = now }
    }

    /// The shell resumed reading; the paused time does not count as silence.
    /// - Parameter now: the current time.
    public mutating func readingResumed(now: UInt64) {
        guard let since = pausedSince else { return }
        pausedSince = nil
        lastReceived = max(lastReceived, lastReceived + (now - since))
    }

    /// Bytes this side's socket accepted after which the peer counts as alive even when none of its
    /// frames were read: the kernel's send buffer holds at most 4 MiB (Linux's default cap), so 8 MiB
    /// accepted means the peer acknowledged at least 4 MiB. It covers a loop so busy sending that it
    /// did not get to read the peer's pings.
    public static let acceptedBytesProvingLife = 8 * 1024 * 1024

    /// The socket accepted `bytes` of this side's frames (a write completed).
    /// - Parameters:
    ///   - bytes: how many bytes.
    ///   - now: the current time.
    public mutating func bytesAccepted(_ bytes: Int, now: UInt64) {
        acceptedSinceProof += bytes
        if acceptedSinceProof >= Self.acceptedBytesProvingLife {
            acceptedSinceProof = 0
            lastReceived = max(lastReceived, now)
        }
    }

    /// A pong arrived.
    /// - Parameters:
    ///   - nonce: the nonce it echoed.
    ///   - now: the current time.
    /// - Returns: the round-trip time in nanoseconds when the nonce was one of ours.
    @discardableResult
    public mutating func pongReceived(nonce: UInt64, now: UInt64) -> UInt64? {
        guard let sentAt = outstanding.removeValue(forKey: nonce) else { return nil }
        let rtt = now >= sentAt ? now - sentAt : 0
        roundTrip = rtt
        return rtt
    }

    /// Periodic check.
    /// - Parameter now: the current time.
    /// - Returns: what to do.
    public mutating func tick(now: UInt64) -> Action {
        if now > lastTick, now - lastTick > Self.stallThreshold {
            // We could not have read anything while we were not running: forgive the gap and let
            // the socket be read before judging the peer.
            lastReceived = max(lastReceived, lastReceived + (now - lastTick - Self.checkInterval))
        }
        lastTick = max(lastTick, now)
        if pausedSince == nil, now > lastReceived, now - lastReceived >= deadAfter {
            return .peerDead(silence: now - lastReceived)
        }
        if now >= lastSent, now - lastSent >= pingInterval {
            let nonce = nextNonce
            nextNonce &+= 1
            if outstanding.count >= 8 { outstanding.removeAll(keepingCapacity: true) }
            outstanding[nonce] = now
            lastSent = now
            return .sendPing(nonce: nonce)
        }
        return .none
    }
}
