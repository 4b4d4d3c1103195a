import Foundation
import MeshSession

/// A file transfer's id: the resource's (PROTOCOL.md §16.1).
public typealias FileTransferID = ResourceID
/// Why a file transfer ended without the file.
public typealias FileCancelCode = ResourceCancelCode
/// A file transfer ending without the file.
public typealias FileTransferFailure = ResourceFailure

/// The chat's limits on files (PROTOCOL.md §16.6, §16.7), on top of the library's
/// ``MeshSession/ResourceLimits``.
public enum FileTransferLimits {
    /// The largest file the chat accepts unless its settings say otherwise (`--max-file-size`,
    /// `max_file_size`): 1 GiB, a video or a disk image. Transfers resume across dropped links and
    /// restarts of either side (PROTOCOL.md §16.4), so size costs time, not a fresh start; the
    /// receiver's free-space reserve (``MeshSession/ResourceConfiguration/minFreeBytes``) binds
    /// on top of it.
    public static let defaultMaxFileSize: UInt64 = 1 << 30
    /// The largest file `/send` offers: the protocol's limit, 16 GiB (PROTOCOL.md §16.7). Whether
    /// the receiver takes it is its own limit's business (an offer over it fails with `tooLarge`).
    public static let maxSendSize = ResourceLimits.maxSize
    /// The old fixed limit, from before transfers were resumable.
    @available(*, deprecated, renamed: "defaultMaxFileSize")
    public static let maxFileSize: UInt64 = defaultMaxFileSize
    /// The longest name a received file is stored under, in UTF-8 bytes (extension kept).
    public static let maxStoredNameBytes = 200
    /// The longest name offered, in UTF-8 bytes.
    public static let maxOfferedNameBytes = ResourceLimits.maxOfferedNameBytes
    /// Files at once with one peer, in each direction.
    public static let maxTransfersPerPeer = 4
    /// Files coming in at once from all peers.
    public static let maxIncomingTransfers = 16
    /// How long a transfer waits, paused, for its peer.
    public static let unreachableTimeout = ResourceLimits.unreachableTimeout
    /// How long the chat takes to answer an offer (it answers at once; this bounds a stuck front).
    public static let answerTimeout: Duration = .seconds(30)

    /// Reads a file size as people write it: a number of bytes, or a whole number with a binary
    /// unit `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`; any case, a space allowed before it), e.g.
    /// `4GiB`, `500M`, `1048576`.
    /// - Parameter text: the size, untrusted.
    /// - Returns: the bytes, or `nil` for anything else (a sign, a fraction, an unknown unit, a
    ///   value over ``MeshSession/ResourceLimits/maxSize``, or 0).
    public static func size(parsing text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 20, let number = UInt64(digits) else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let shifts: [String: UInt64] = ["": 0, "b": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30]
        guard let shift = shifts[unit] else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        guard !overflow, bytes > 0, bytes <= ResourceLimits.maxSize else { return nil }
        return bytes
    }

    /// A size for people: whole GiB, MiB or KiB when it is one, else bytes (`1 GiB`, `64 MiB`).
    /// - Parameter bytes: the size.
    public static func describe(_ bytes: UInt64) -> String {
        for (shift, unit) in [(UInt64(30), "GiB"), (20, "MiB"), (10, "KiB")] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(unit)"
        }
        return "\(bytes) bytes"
    }
}

/// Which way a transfer goes.
public enum FileTransferDirection: String, Sendable, Hashable {
    /// This node sends.
    case outgoing
    /// This node receives.
    case incoming
}

/// What the chat knows about one transfer.
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

    /// The description of a resource transfer: an incoming name is sanitised (§16.6).
    /// - Parameter progress: the resource transfer.
    public init(_ progress: ResourceProgress) {
        self.init(id: progress.id, direction: progress.direction == .outgoing ? .outgoing : .incoming, peer: progress.peer,
                  name: progress.direction == .outgoing ? progress.name : FileNames.sanitised(progress.name),
                  size: progress.size, sha256: progress.sha256.map { String(format: "%02x", $0) }.joined())
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

/// What the file layer reports, in order per transfer.
public enum FileTransferEvent: Sendable, Hashable {
    /// A transfer began: this node offered a file, or accepted one offered to it.
    case offered(FileTransferInfo)
    /// Bytes acknowledged (outgoing) or stored (incoming) so far; throttled to one per
    /// ``MeshSession/ResourceLimits/progressInterval`` per transfer.
    case progress(FileTransferInfo, bytes: UInt64)
    /// The receiver stored the whole file and confirmed its SHA-256.
    case sent(FileTransferInfo)
    /// The other side went out of reach, or this node restarted: the transfer waits, for at most
    /// ``FileTransferLimits/unreachableTimeout`` (PROTOCOL.md §16.4.1).
    case paused(FileTransferInfo)
    /// The other side is reachable again: the transfer goes on from what the receiver holds.
    case resumed(FileTransferInfo)
    /// The whole file is stored at `path` and its SHA-256 matches the offer.
    case received(FileTransferInfo, path: String)
    /// The transfer ended without the file (a refused offer too); any partial file is removed.
    case failed(FileTransferInfo, FileTransferFailure)
}

/// A `/send` that cannot be carried out: what was wrong, for people.
public struct FileTransferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence.
    public let message: String
    /// Creates an error.
    /// - Parameter message: what was wrong.
    public init(_ message: String) { self.message = message }
    /// The sentence.
    public var description: String { message }
}
