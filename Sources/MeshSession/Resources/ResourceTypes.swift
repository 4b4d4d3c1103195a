import struct Foundation.Data

/// One resource transfer message on the wire (PROTOCOL.md §16.1): the payload of a sealed message
/// on ``ChannelID/resources``.
public typealias ResourceMessagePayload = Meshchat_Resources_V1_ResourceMessage
/// "May I send you this resource?" (PROTOCOL.md §16.2).
public typealias ResourceOfferPayload = Meshchat_Resources_V1_ResourceOffer
/// One piece of a resource (PROTOCOL.md §16.3).
public typealias ResourceChunkPayload = Meshchat_Resources_V1_ResourceChunk
/// Acknowledgement, flow control and resume point (PROTOCOL.md §16.4).
public typealias ResourceAckPayload = Meshchat_Resources_V1_ResourceAck
/// The receiver stored the resource and checked its hash (PROTOCOL.md §16.5).
public typealias ResourceDonePayload = Meshchat_Resources_V1_ResourceDone
/// The transfer is over without the resource (PROTOCOL.md §16.5).
public typealias ResourceCancelPayload = Meshchat_Resources_V1_ResourceCancel

/// A resource transfer's id: 16 random bytes chosen by the sender, kept across restarts
/// (PROTOCOL.md §16.1).
public struct ResourceID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: Data

    /// Wraps wire bytes.
    /// - Parameter bytes: exactly 16 bytes.
    /// - Returns: `nil` for another length.
    public init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Data(bytes)
    }

    /// Parses 32 hex digits (a journal file's name).
    /// - Parameter hex: the digits.
    /// - Returns: `nil` unless it is 32 hex digits.
    public init?(hex: String) {
        guard let data = Data(hexDigits: hex), data.count == 16 else { return nil }
        self.bytes = data
    }

    /// A new random id.
    public static func random() -> ResourceID {
        var generator = SystemRandomNumberGenerator()
        return ResourceID(uncheckedBytes: Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }))
    }

    private init(uncheckedBytes: Data) { self.bytes = uncheckedBytes }

    /// 32 lower-case hex digits.
    public var hex: String { bytes.hexString }
    /// The first 8 hex digits, for people.
    public var shortHex: String { String(hex.prefix(8)) }
    /// The hex digits.
    public var description: String { hex }
}

/// Why a transfer ended without the resource (PROTOCOL.md §16.5: `ResourceCancel.code`).
public enum ResourceCancelCode: UInt32, Sendable, Hashable, CaseIterable {
    /// Its sender or receiver gave it up (or an unknown code from a newer peer).
    case cancelled = 1
    /// The receiver does not take resources from this sender (its policy, or its application, said no).
    case refused = 2
    /// The offered resource is larger than the receiver's limit, or than its free disk space.
    case tooLarge = 3
    /// The receiver already has as many transfers as it takes (per peer or in all).
    case busy = 4
    /// The offer is malformed: name, hash or chunk size.
    case invalidOffer = 5
    /// A message named a transfer the other side does not know.
    case unknownTransfer = 6
    /// A chunk out of range or of the wrong length, or an acknowledgement past the end.
    case protocolViolation = 7
    /// The stored content's SHA-256 differs from the offer's.
    case hashMismatch = 8
    /// The other side stopped answering.
    case timedOut = 9
    /// The receiver could not write the resource.
    case storageFailed = 10
    /// The sender could not read the file, or it changed since it was offered.
    case sourceFailed = 11

    /// The code of a received cancel: unknown numbers are ``cancelled``.
    /// - Parameter raw: the wire value.
    public init(wire raw: UInt32) { self = ResourceCancelCode(rawValue: raw) ?? .cancelled }
}

/// A transfer ending without the resource: why, for programs and for people.
public struct ResourceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason's code.
    public var code: ResourceCancelCode
    /// The reason, for people.
    public var reason: String
    /// Whether the other side said so (a received cancel) rather than this node.
    public var byPeer: Bool

    /// Creates a failure.
    /// - Parameters:
    ///   - code: the code.
    ///   - reason: the sentence.
    ///   - byPeer: the other side cancelled.
    public init(_ code: ResourceCancelCode, _ reason: String, byPeer: Bool = false) {
        self.code = code
        self.reason = reason
        self.byPeer = byPeer
    }

    /// "the peer cancelled: reason" or the reason.
    public var description: String { byPeer ? "the peer cancelled: \(reason)" : reason }
}

/// A validated offer (PROTOCOL.md §16.2).
public struct ResourceOffer: Sendable, Hashable {
    /// The name as offered: untrusted text, never a path (PROTOCOL.md §16.6).
    public var name: String
    /// The size in bytes.
    public var size: UInt64
    /// The SHA-256 of the content, 32 bytes.
    public var sha256: Data
    /// Bytes per chunk.
    public var chunkSize: Int

    /// Creates an offer of this node's.
    /// - Parameters:
    ///   - name: the resource's name.
    ///   - size: its size.
    ///   - sha256: its hash.
    ///   - chunkSize: bytes per chunk.
    public init(name: String, size: UInt64, sha256: Data, chunkSize: Int = ResourceLimits.chunkSize) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.chunkSize = chunkSize
    }

    /// Checks a received offer against §16.2 and the protocol's limits (the receiver's own
    /// limits are its policy's: ``ResourceConfiguration``).
    /// - Parameter payload: the wire offer.
    /// - Throws: ``ResourceFailure`` naming the broken rule, with the code to refuse it with.
    public init(validating payload: ResourceOfferPayload) throws(ResourceFailure) {
        let nameBytes = payload.name.utf8.count
        guard nameBytes >= 1, nameBytes <= ResourceLimits.maxOfferedNameBytes else {
            throw ResourceFailure(.invalidOffer, "name of \(nameBytes) bytes (1 to \(ResourceLimits.maxOfferedNameBytes) allowed)")
        }
        guard payload.sha256.count == 32 else {
            throw ResourceFailure(.invalidOffer, "SHA-256 of \(payload.sha256.count) bytes (32 expected)")
        }
        guard payload.size <= ResourceLimits.maxSize else {
            throw ResourceFailure(.tooLarge, "resource of \(payload.size) bytes is over the protocol's limit of \(ResourceLimits.maxSize) bytes")
        }
        guard (UInt32(ResourceLimits.minChunkSize)...UInt32(ResourceLimits.maxChunkSize)).contains(payload.chunkSize) else {
            throw ResourceFailure(.invalidOffer, "chunk size \(payload.chunkSize) outside \(ResourceLimits.minChunkSize)–\(ResourceLimits.maxChunkSize)")
        }
        self.init(name: payload.name, size: payload.size, sha256: payload.sha256, chunkSize: Int(payload.chunkSize))
    }

    /// The number of chunks (0 for an empty resource).
    public var chunkCount: Int { Int((size + UInt64(chunkSize) - 1) / UInt64(chunkSize)) }

    /// The length of chunk `index`: the chunk size, or the remainder for the last one.
    /// - Parameter index: a chunk index below ``chunkCount``.
    public func length(ofChunk index: Int) -> Int {
        let start = UInt64(index) * UInt64(chunkSize)
        return Int(min(UInt64(chunkSize), size - start))
    }

    /// The byte offset of chunk `index`.
    /// - Parameter index: a chunk index.
    public func offset(ofChunk index: Int) -> UInt64 { UInt64(index) * UInt64(chunkSize) }

    /// The wire form.
    public var payload: ResourceOfferPayload {
        var payload = ResourceOfferPayload()
        payload.name = name
        payload.size = size
        payload.sha256 = sha256
        payload.chunkSize = UInt32(chunkSize)
        return payload
    }
}

extension Data {
    /// Lower-case hex digits (by table: `String(format:)` per byte cost 5 % of a resource
    /// transfer's CPU, for the ids in log metadata and file names built per chunk).
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes from hex digits (either case); `nil` for an odd count or another character.
    init?(hexDigits: String) {
        let digits = Array(hexDigits.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }
}
