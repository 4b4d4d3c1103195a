import Foundation
import Logging
import MeshWire

/// The files of a node's end-to-end sessions, `sessions/NODE-HEX` in ``SessionFileFormat`` (mode
/// 0600): reads them, stores a pair's sessions with one `pwrite` into the page cache (what a process
/// killed right after cannot lose), and keeps at most ``maxOpenDescriptors`` files open for that,
/// closing the least recently used.
///
/// A store goes into the file's older slot while the file is one this value wrote or read intact in
/// this format and the record fits its slot; otherwise (a new pair, a file of the format up to
/// session 16, a record outgrowing its slot, a file gone or replaced behind its back, a failed write)
/// the whole file is written anew to `NODE-HEX.new` and renamed over the old one, which on ext4 costs
/// about a millisecond (rare: a new pair, or a slot doubling). A store with `mayCompact` (the periodic
/// flush, off the packet path) also shrinks a file whose slot is far larger than its sessions now need.
///
/// Not thread-safe: ``EndToEndStore`` calls it with its lock held. Descriptors are opened with
/// `O_CLOEXEC`; ``closeAll()`` closes them.
struct SessionFiles: Sendable {
    /// The most files kept open.
    static let maxOpenDescriptors = 64

    /// Where the next store into a file goes.
    private struct Position: Sendable {
        var slotSize: Int
        var nextSlot: Int
        var nextSequence: UInt64
    }

    /// What ``read(_:logger:)`` found.
    enum Read: Equatable {
        /// No file.
        case none
        /// The stored sessions.
        case sessions(Data)
        /// A damaged or oversized file (why); the caller deletes it.
        case damaged(String)
    }

    /// The sessions directory.
    let directory: String
    private var positions: [NodeID: Position] = [:]
    private var descriptors: [NodeID: (descriptor: Int32, lastUsed: UInt64)] = [:]
    private var tick: UInt64 = 0

    /// Files in `directory`.
    init(directory: String) { self.directory = directory }

    /// How many files are open now (for tests).
    var openDescriptorCount: Int { descriptors.count }

    /// The path of a node's file.
    func path(of node: NodeID) -> String { directory + "/" + node.hex }

    /// Reads a node's stored sessions; a torn record beside a valid one is ignored with a log line.
    mutating func read(_ node: NodeID, logger: Logger) -> Read {
        let path = path(of: node)
        positions[node] = nil
        guard let handle = FileHandle(forReadingAtPath: path) else { return .none }
        defer { try? handle.close() }
        guard let file = try? handle.read(upToCount: SessionFileFormat.maxFileBytes + 1) else { return .damaged("unreadable") }
        guard file.count <= SessionFileFormat.maxFileBytes else {
            return .damaged("longer than \(SessionFileFormat.maxFileBytes) bytes")
        }
        switch SessionFileFormat.decode(file) {
        case .legacy(let bytes):
            // Read as before; the next store writes the file anew in the slotted format.
            return .sessions(bytes)
        case .damaged(let reason):
            return .damaged(reason)
        case .record(let latest):
            if let ignored = latest.ignored {
                logger.notice("ignored a torn or damaged end-to-end session record; reading the one before it", metadata: [
                    "mesh.node": "\(node.shortHex)", "e2e.reason": "\(ignored)",
                ])
            }
            // A record at the last sequence number (an edited file) leaves none above it: the next
            // store writes the file anew, starting again at 1, instead of wrapping to 0 below it.
            if latest.sequence < .max {
                positions[node] = Position(slotSize: latest.slotSize, nextSlot: 1 - latest.slot, nextSequence: latest.sequence + 1)
            }
            return .sessions(latest.payload)
        }
    }

    /// Stores a node's sessions before returning: one `pwrite` into the file's older slot, or the
    /// file written anew (see the type's discussion).
    /// - Parameters:
    ///   - payload: ``PairSessions/serialized``.
    ///   - node: whose sessions they are.
    ///   - mayCompact: write the file anew with a smaller slot when its slot is more than four times
    ///     what `payload` needs (after many skipped keys were used up). Only off the packet path: that
    ///     replaces the file by a rename.
    ///   - logger: where failures go.
    /// - Returns: whether they were stored (a failure is logged).
    @discardableResult
    mutating func write(_ payload: Data, for node: NodeID, mayCompact: Bool = false, logger: Logger) -> Bool {
        if var position = positions[node], position.nextSequence < .max, SessionFileFormat.fits(payload.count, slotSize: position.slotSize),
           !mayCompact || position.slotSize <= 4 * SessionFileFormat.slotSize(for: payload.count),
           let descriptor = openDescriptor(node) {
            let record = SessionFileFormat.record(payload, sequence: position.nextSequence)
            let offset = SessionFileFormat.offset(ofSlot: position.nextSlot, slotSize: position.slotSize)
            if Self.write(record, to: descriptor, at: offset) {
                position.nextSlot = 1 - position.nextSlot
                position.nextSequence += 1
                positions[node] = position
                return true
            }
            let error = errno
            logger.warning("could not store end-to-end sessions in place; writing the file anew", metadata: [
                "e2e.path": "\(path(of: node))", "e2e.errno": "\(error)",
            ])
            closeDescriptor(node)
        }
        return rewrite(payload, for: node, logger: logger)
    }

    /// Deletes a node's file.
    mutating func remove(_ node: NodeID) {
        closeDescriptor(node)
        positions[node] = nil
        unlink(path(of: node))
    }

    /// Closes every open file.
    mutating func closeAll() {
        for node in Array(descriptors.keys) { closeDescriptor(node) }
    }

    // MARK: Internals

    /// Writes header and `payload` in slot 0 to `NODE-HEX.new`, renames it over the file, and keeps
    /// the new file open.
    @discardableResult
    private mutating func rewrite(_ payload: Data, for node: NodeID, logger: Logger) -> Bool {
        let path = path(of: node)
        let temporary = path + ".new"
        closeDescriptor(node)
        // The numbering goes on; a new file holds one record, so at the end of UInt64 it starts again.
        let previous = positions[node]?.nextSequence ?? 1
        let sequence: UInt64 = previous < .max ? previous : 1
        positions[node] = nil
        let slotSize = SessionFileFormat.slotSize(for: payload.count)
        guard SessionFileFormat.fits(payload.count, slotSize: slotSize) else {
            logger.error("end-to-end sessions too large to store", metadata: ["e2e.path": "\(path)", "e2e.bytes": "\(payload.count)"])
            return false
        }
        let descriptor = Foundation.open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            logger.error("could not write end-to-end state", metadata: ["e2e.path": "\(path)", "e2e.errno": "\(errno)"])
            return false
        }
        var bytes = SessionFileFormat.header(slotSize: slotSize)
        bytes.append(SessionFileFormat.record(payload, sequence: sequence))
        let written = Self.write(bytes, to: descriptor, at: 0)
        _ = fchmod(descriptor, 0o600)
        guard written, rename(temporary, path) == 0 else {
            let error = errno
            logger.error("could not write end-to-end state", metadata: ["e2e.path": "\(path)", "e2e.errno": "\(error)"])
            close(descriptor)
            unlink(temporary)
            return false
        }
        positions[node] = Position(slotSize: slotSize, nextSlot: 1, nextSequence: sequence + 1)
        keepDescriptor(descriptor, for: node)
        return true
    }

    /// The node's open file, opening it if needed; `nil` when it is gone or was replaced (deleted
    /// behind this value's back: its descriptor would write where no one reads).
    private mutating func openDescriptor(_ node: NodeID) -> Int32? {
        tick &+= 1
        var descriptor: Int32
        if let open = descriptors[node] {
            descriptor = open.descriptor
        } else {
            descriptor = Foundation.open(path(of: node), O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            keepDescriptor(descriptor, for: node)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_nlink > 0 else {
            closeDescriptor(node)
            return nil
        }
        descriptors[node]?.lastUsed = tick
        return descriptor
    }

    private mutating func keepDescriptor(_ descriptor: Int32, for node: NodeID) {
        tick &+= 1
        descriptors[node] = (descriptor, tick)
        while descriptors.count > Self.maxOpenDescriptors,
              let oldest = descriptors.filter({ $0.key != node }).min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            closeDescriptor(oldest)
        }
    }

    private mutating func closeDescriptor(_ node: NodeID) {
        if let open = descriptors.removeValue(forKey: node) { close(open.descriptor) }
    }

    /// `pwrite`s all of `bytes` at `offset`.
    private static func write(_ bytes: Data, to descriptor: Int32, at offset: Int) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var done = 0
            while done < buffer.count {
                let count = pwrite(descriptor, base + done, buffer.count - done, off_t(offset + done))
                if count < 0 { if errno == EINTR { continue } else { return false } }
                if count == 0 { return false }
                done += count
            }
            return true
        }
    }
}
