/// An error decoding or encoding bytes of the wire protocol.
///
/// Errors carry a ``code`` for programs and a ``description`` for people that names what was
/// wrong, the limit and the value, e.g. "frame length 70000 exceeds the maximum 65536".
/// Two errors are equal when their codes are equal.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of wire error this is.
    public enum Code: Hashable, Sendable {
        /// A frame length above ``WireLimits/maxFrameLength`` (§3.3).
        case frameTooLarge
        /// A frame length of zero (§3.3).
        case emptyFrame
        /// A frame type this version does not define (§3.2).
        case unknownFrameType
        /// A frame whose body does not fit its type (e.g. a short TRANSPORT body or empty ABORT).
        case malformedFrame
        /// A record with reserved flag bits set, or an empty record (§5.2).
        case malformedRecord
        /// A reassembled message above ``WireLimits/maxMessageSize`` (§5.3).
        case messageTooLarge
        /// Bytes that are not a valid protobuf message of the expected type (§6.2).
        case malformedMessage
        /// A datagram that is too short, too long, or of an unknown type (§8.2).
        case malformedDatagram
    }

    /// What kind of error this is.
    public let code: Code
    /// A human-readable explanation naming what was wrong.
    public let message: String

    /// The close code a link uses when this error ends it (§9).
    public var closeCode: CloseCode {
        switch code {
        case .frameTooLarge: .frameTooLarge
        case .messageTooLarge: .messageTooLarge
        default: .protocolViolation
        }
    }

    /// The explanation, for logs and error events.
    public var description: String { message }

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    public static func == (lhs: WireError, rhs: WireError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    @inline(never)
    static func frameTooLarge(_ length: UInt32, maximum: Int = WireLimits.maxFrameLength) -> WireError {
        WireError(.frameTooLarge, "frame length \(length) exceeds the maximum \(maximum)")
    }
    @inline(never)
    static func emptyFrame() -> WireError { WireError(.emptyFrame, "frame length 0 (a frame has at least a type byte)") }
    @inline(never)
    static func unknownFrameType(_ type: UInt8) -> WireError {
        WireError(.unknownFrameType, "unknown frame type 0x\(String(type, radix: 16))")
    }
    @inline(never)
    static func malformedFrame(_ why: String) -> WireError { WireError(.malformedFrame, why) }
    @inline(never)
    static func malformedRecord(_ why: String) -> WireError { WireError(.malformedRecord, why) }
    @inline(never)
    static func messageTooLarge(_ size: Int, maximum: Int = WireLimits.maxMessageSize) -> WireError {
        WireError(.messageTooLarge, "message of at least \(size) bytes exceeds the maximum \(maximum)")
    }
    @inline(never)
    static func malformedMessage(_ what: String, _ underlying: any Error) -> WireError {
        WireError(.malformedMessage, "\(what) is not valid protobuf: \(underlying)")
    }
    @inline(never)
    static func malformedDatagram(_ why: String) -> WireError { WireError(.malformedDatagram, why) }
}
