/// The limits of this node's streams (PROTOCOL.md §18.7), for both directions.
///
/// Every limit binds what this node accepts from others as well as what it sends: a peer cannot
/// make it buffer more than ``window`` bytes of a stream, hold more than ``maxStreamsPerPeer``
/// streams from it (``maxIncomingStreams`` in all), or open more than ``openBurst`` streams at once
/// and ``opensPerSecond`` after that.
///
/// This type is thread-safe (a value).
public struct StreamLimits: Sendable, Hashable {
    /// The largest chunk: the channel payload limit less the packet's framing (PROTOCOL.md §18.7).
    public static let maxChunkSize = StreamWire.maxChunkSize

    /// Bytes of one data packet this node sends: 1,024 – ``maxChunkSize`` (default: the maximum).
    public var chunkSize = StreamLimits.maxChunkSize
    /// The receive window of an incoming stream (bytes received and not yet read by the
    /// application), which is also how many bytes an outgoing stream holds before `write` waits:
    /// ``chunkSize`` – 64 MiB, default 4 MiB (a window is what one round trip can carry: 1 MiB
    /// held a stream to about 330 MB/s on one loopback hop, 4 MiB about 700).
    public var window = 4 << 20
    /// Incoming streams held at once from one node (default 16); more are refused with `busy`.
    public var maxStreamsPerPeer = 16
    /// Incoming streams held at once in all (default 64, so that full windows hold at most
    /// 256 MiB); more are refused with `busy`.
    public var maxIncomingStreams = 64
    /// Incoming streams the application has not taken yet (default 16); more are refused with `busy`.
    public var pendingCapacity = 16
    /// Stream opens accepted from one node at once (default 16), then ``opensPerSecond``; more are
    /// refused with `busy`.
    public var openBurst = 16
    /// Stream opens accepted from one node per second after the burst (default 4).
    public var opensPerSecond = 4
    /// A stream whose peer sent nothing for this long ends with `timedOut` on this side (default 20 s).
    /// The opener probes at least every ``keepaliveInterval``, and the reader answers every packet.
    public var peerTimeout: Duration = .seconds(20)
    /// How often an opener with nothing else to send probes its reader (default 2 s).
    public var keepaliveInterval: Duration = .seconds(2)
    /// A stream on which no byte moved (was sent, or read by the application) for this long ends
    /// with `idle` (default 300 s).
    public var idleTimeout: Duration = .seconds(300)
    /// Transmissions of one packet without an answer before the stream ends with `timedOut` (default 8).
    public var maxTransmissions = 8

    /// Creates the defaults.
    public init() {}

    /// Why these limits are out of range, or `nil` when they are fine.
    var problem: String? {
        if chunkSize < 1_024 || chunkSize > Self.maxChunkSize { return "chunkSize \(chunkSize) is outside 1024–\(Self.maxChunkSize)" }
        if window < chunkSize || window > 64 << 20 { return "window \(window) is outside \(chunkSize)–\(64 << 20)" }
        if maxStreamsPerPeer < 1 || maxIncomingStreams < 1 || pendingCapacity < 1 { return "stream counts must be at least 1" }
        if openBurst < 1 || opensPerSecond < 1 { return "open rates must be at least 1" }
        if peerTimeout <= keepaliveInterval * 2 { return "peerTimeout must exceed twice keepaliveInterval" }
        if keepaliveInterval < .milliseconds(10) || idleTimeout < .seconds(1) { return "timeouts are too short" }
        if maxTransmissions < 2 || maxTransmissions > 64 { return "maxTransmissions \(maxTransmissions) is outside 2–64" }
        return nil
    }
}

/// Why a stream ended (PROTOCOL.md §18.5): the codes of `StreamClose` on the wire.
public enum StreamCloseCode: UInt32, Sendable, Hashable, CustomStringConvertible {
    /// The reader's application read every byte up to the end: the normal end.
    case finished = 1
    /// An application cancelled the stream (and any code this node does not know).
    case cancelled = 2
    /// The reader's application does not accept streams.
    case refused = 3
    /// The reader holds too many streams, or the opener opened too many too fast.
    case busy = 4
    /// No such stream here (the other side forgot it, or never had it).
    case unknownStream = 5
    /// A packet broke PROTOCOL.md §18 (data past the window or the end, an acknowledgement past
    /// what was sent).
    case protocolViolation = 6
    /// The other side stopped answering (PROTOCOL.md §18.6).
    case timedOut = 7
    /// No byte moved for ``StreamLimits/idleTimeout``.
    case idle = 8
    /// The session stopped.
    case closed = 9

    /// The code a wire value stands for: unknown values read as ``cancelled``.
    init(wire: UInt32) { self = StreamCloseCode(rawValue: wire) ?? .cancelled }

    /// The code's name.
    public var description: String {
        switch self {
        case .finished: "finished"
        case .cancelled: "cancelled"
        case .refused: "refused"
        case .busy: "busy"
        case .unknownStream: "unknownStream"
        case .protocolViolation: "protocolViolation"
        case .timedOut: "timedOut"
        case .idle: "idle"
        case .closed: "closed"
        }
    }
}

/// Why a stream ended other than normally: thrown by writes, `finish()` and the reading side's
/// iteration.
///
/// Two errors are equal when their codes are equal. This type is thread-safe (a value).
public struct StreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What ended the stream.
    public let code: StreamCloseCode
    /// A sentence for people; from the peer when ``byPeer``.
    public let reason: String
    /// Whether the other side ended the stream (its close), rather than this node.
    public let byPeer: Bool

    /// Creates an error.
    /// - Parameters:
    ///   - code: what ended the stream.
    ///   - reason: for people.
    ///   - byPeer: whether the other side ended it.
    public init(_ code: StreamCloseCode, _ reason: String, byPeer: Bool = false) {
        self.code = code
        self.reason = reason
        self.byPeer = byPeer
    }

    /// "CODE: REASON", and who ended it.
    public var description: String { "stream \(code)\(byPeer ? " by the peer" : ""): \(reason)" }

    /// Equality compares codes only.
    public static func == (lhs: StreamError, rhs: StreamError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
