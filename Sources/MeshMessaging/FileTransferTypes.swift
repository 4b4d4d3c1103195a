import struct Foundation.Data
import MeshSession
import MeshWire

/// A file transfer's id: 16 random bytes chosen by the sender (PROTOCOL.md §16.1).
public struct FileTransferID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: Data

    /// Wraps wire bytes.
    /// - Parameter bytes: exactly 16 bytes.
    /// - Returns: `nil` for another length.
    public init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A new random id.
    public static func random() -> FileTransferID {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: 16)
        for index in 0..<16 { data[index] = UInt8.random(in: 0...255, using: &generator) }
        return FileTransferID(bytes: data)!
    }

    /// 32 lower-case hex digits.
    public var hex: String { bytes.map { String(format: "%02x", $0) }.joined() }
    /// The first 8 hex digits, for people.
    public var shortHex: String { String(hex.prefix(8)) }
    /// The hex digits.
    public var description: String { hex }
}

/// Why a transfer ended without the file (PROTOCOL.md §16.5: `FileCancel.code`).
public enum FileCancelCode: UInt32, Sendable, Hashable, CaseIterable {
    /// Its sender or receiver gave it up (or an unknown code from a newer peer).
    case cancelled = 1
    /// The receiver does not take files from this sender (blocked).
    case refused = 2
    /// The offered file is larger than the receiver's limit.
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
    /// The receiver could not write the file.
    case storageFailed = 10
    /// The sender could not read the file.
    case sourceFailed = 11

    /// The code of a received cancel: unknown numbers are ``cancelled``.
    /// - Parameter raw: the wire value.
    public init(wire raw: UInt32) { self = FileCancelCode(rawValue: raw) ?? .cancelled }
}

/// A transfer ending without the file: why, for programs and for people.
public struct FileTransferFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason's code.
    public var code: FileCancelCode
    /// The reason, for people.
    public var reason: String
    /// Whether the other side said so (a received cancel) rather than this node.
    public var byPeer: Bool

    /// Creates a failure.
    /// - Parameters:
    ///   - code: the code.
    ///   - reason: the sentence.
    ///   - byPeer: the other side cancelled.
    public init(_ code: FileCancelCode, _ reason: String, byPeer: Bool = false) {
        self.code = code
        self.reason = reason
        self.byPeer = byPeer
    }

    /// "the peer: reason" or the reason.
    public var description: String { byPeer ? "the peer cancelled: \(reason)" : reason }
}

/// A validated offer (PROTOCOL.md §16.2).
public struct FileOffer: Sendable, Hashable {
    /// The name as offered (not yet sanitised; see ``FileNames/sanitised(_:)``).
    public var name: String
    /// The size in bytes.
    public var size: UInt64
    /// The SHA-256 of the content, 32 bytes.
    public var sha256: Data
    /// Bytes per chunk.
    public var chunkSize: Int

    /// Creates an offer of this node's.
    /// - Parameters:
    ///   - name: the file's name.
    ///   - size: its size.
    ///   - sha256: its hash.
    ///   - chunkSize: bytes per chunk.
    public init(name: String, size: UInt64, sha256: Data, chunkSize: Int = FileTransferLimits.chunkSize) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.chunkSize = chunkSize
    }

    /// Checks a received offer against §16.2 and the limits.
    /// - Parameter payload: the wire offer.
    /// - Throws: ``FileTransferFailure`` naming the broken rule, with the code to refuse it with.
    public init(validating payload: FileOfferPayload) throws(FileTransferFailure) {
        let nameBytes = payload.name.utf8.count
        guard nameBytes >= 1, nameBytes <= FileTransferLimits.maxOfferedNameBytes else {
            throw FileTransferFailure(.invalidOffer, "file name of \(nameBytes) bytes (1 to \(FileTransferLimits.maxOfferedNameBytes) allowed)")
        }
        guard payload.sha256.count == 32 else {
            throw FileTransferFailure(.invalidOffer, "SHA-256 of \(payload.sha256.count) bytes (32 expected)")
        }
        guard payload.size <= FileTransferLimits.maxFileSize else {
            throw FileTransferFailure(.tooLarge, "file of \(payload.size) bytes is over the limit of \(FileTransferLimits.maxFileSize) bytes")
        }
        let chunk = Int(payload.chunkSize)
        guard (FileTransferLimits.minChunkSize...FileTransferLimits.maxChunkSize).contains(chunk) else {
            throw FileTransferFailure(.invalidOffer, "chunk size \(payload.chunkSize) outside \(FileTransferLimits.minChunkSize)–\(FileTransferLimits.maxChunkSize)")
        }
        self.init(name: payload.name, size: payload.size, sha256: payload.sha256, chunkSize: chunk)
    }

    /// The number of chunks (0 for an empty file).
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
    public var payload: FileOfferPayload {
        var payload = FileOfferPayload()
        payload.name = name
        payload.size = size
        payload.sha256 = sha256
        payload.chunkSize = UInt32(chunkSize)
        return payload
    }
}

/// Which way a transfer goes.
public enum FileTransferDirection: String, Sendable, Hashable {
    /// This node sends.
    case outgoing
    /// This node receives.
    case incoming
}

/// What the application knows about one transfer.
public struct FileTransferInfo: Sendable, Hashable {
    /// The transfer id.
    public var id: FileTransferID
    /// Which way it goes.
    public var direction: FileTransferDirection
    /// The other side.
    public var peer: PeerID
    /// The file's name: as sent (outgoing) or as it will be stored (incoming, sanitised).
    public var name: String
    /// Its size in bytes.
    public var size: UInt64
    /// Its SHA-256, 64 hex digits.
    public var sha256: String

    /// Creates the description of a transfer.
    /// - Parameters:
    ///   - id: the transfer id.
    ///   - direction: which way.
    ///   - peer: the other side.
    ///   - name: the file name.
    ///   - size: bytes.
    ///   - sha256: hex hash.
    public init(id: FileTransferID, direction: FileTransferDirection, peer: PeerID, name: String, size: UInt64, sha256: String) {
        self.id = id
        self.direction = direction
        self.peer = peer
        self.name = name
        self.size = size
        self.sha256 = sha256
    }
}

/// A running transfer and how far it got (`/files`).
public struct FileTransferProgress: Sendable, Hashable {
    /// The transfer.
    public var info: FileTransferInfo
    /// Bytes acknowledged by the receiver (outgoing) or stored (incoming).
    public var bytes: UInt64

    /// Creates a progress row.
    /// - Parameters:
    ///   - info: the transfer.
    ///   - bytes: bytes so far.
    public init(info: FileTransferInfo, bytes: UInt64) {
        self.info = info
        self.bytes = bytes
    }
}

/// What the file transfer layer reports, in order per transfer.
public enum FileTransferEvent: Sendable, Hashable {
    /// A transfer began: this node offered a file, or accepted one offered to it.
    case offered(FileTransferInfo)
    /// Bytes acknowledged (outgoing) or stored (incoming) so far; throttled to one per
    /// ``FileTransferLimits/progressInterval`` per transfer.
    case progress(FileTransferInfo, bytes: UInt64)
    /// The receiver stored the whole file and confirmed its SHA-256.
    case sent(FileTransferInfo)
    /// The other side went out of reach: the transfer waits, for at most
    /// ``FileTransferLimits/unreachableTimeout`` (PROTOCOL.md §16.4.1).
    case paused(FileTransferInfo)
    /// The other side is reachable again (or a chunk came): the transfer goes on.
    case resumed(FileTransferInfo)
    /// The whole file is stored at `path` and its SHA-256 matches the offer.
    case received(FileTransferInfo, path: String)
    /// The transfer ended without the file (a refused offer too); any `.part` file is removed.
    case failed(FileTransferInfo, FileTransferFailure)
}

extension Data {
    /// Lower-case hex digits.
    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
