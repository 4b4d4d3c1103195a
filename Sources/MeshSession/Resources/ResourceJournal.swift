import Foundation
import MeshWire

/// What the resource shell keeps on disk so that a transfer survives a restart of either side
/// (PROTOCOL.md §16.4.2), under the session's resource directory:
///
/// - `outgoing/<id>.json`: a transfer this node sends (path, size, modification time, hash, name,
///   peer), written before the offer goes out, removed when it ends;
/// - `incoming/<sender>-<id>.part`: the content received so far, written in place;
/// - `incoming/<sender>-<id>.json`: the offer, the sender and the chunks held, written when the
///   offer is accepted and then at most every ``ResourceLimits/checkpointInterval`` (after the
///   `.part` file is synced, so it never claims a chunk that is not on disk);
/// - `received/<sender>-<id>`: a complete, verified resource handed to the application (which
///   moves it away);
/// - `finished/<sender>-<id>`: the SHA-256 (64 hex digits) of a transfer this node received
///   whole, written before its `ResourceDone` goes out and kept (the newest
///   ``ResourceLimits/maxFinishedRecords``), so that a sender that comes back after the
///   in-memory ``ResourceLimits/finishedMemory``, or after this node restarted, is told the
///   transfer is done instead of sending the file a second time.
///
/// Every record is read as untrusted input: a malformed one is logged and removed, never trusted.
struct ResourceJournal: Sendable {
    /// The resource directory.
    let directory: String

    var outgoingDirectory: String { directory + "/outgoing" }
    var incomingDirectory: String { directory + "/incoming" }
    var receivedDirectory: String { directory + "/received" }
    var finishedDirectory: String { directory + "/finished" }

    /// A transfer this node sends.
    struct Outgoing: Codable, Sendable, Hashable {
        var id: String
        var peer: String
        var peerName: String
        var path: String
        var name: String
        var size: UInt64
        var modified: Int64
        var sha256: String
        var chunkSize: Int
    }

    /// A transfer this node receives.
    struct Incoming: Codable, Sendable, Hashable {
        var id: String
        var sender: String
        var senderName: String
        var name: String
        var size: UInt64
        var sha256: String
        var chunkSize: Int
        var next: Int
        var stored: [Int]
    }

    /// Creates the directories (mode 0700).
    func prepare() throws(ResourceStorageError) {
        for path in [directory, outgoingDirectory, incomingDirectory, receivedDirectory, finishedDirectory] {
            try ResourceStorage.makeDirectory(path)
        }
    }

    func outgoingPath(_ id: ResourceID) -> String { outgoingDirectory + "/" + id.hex + ".json" }
    func incomingStem(_ sender: NodeID, _ id: ResourceID) -> String { incomingDirectory + "/" + sender.hex + "-" + id.hex }
    func receivedPath(_ sender: NodeID, _ id: ResourceID) -> String { receivedDirectory + "/" + sender.hex + "-" + id.hex }

    func finishedPath(_ sender: NodeID, _ id: ResourceID) -> String { finishedDirectory + "/" + sender.hex + "-" + id.hex }

    /// Records durably that a transfer was received whole with this hash, then forgets the oldest
    /// records past ``ResourceLimits/maxFinishedRecords``.
    func saveFinished(_ sender: NodeID, _ id: ResourceID, sha256: Data) throws(ResourceStorageError) {
        try ResourceStorage.makeDirectory(finishedDirectory)
        try ResourceStorage.writeAtomically(Data(sha256.hexString.utf8), to: finishedPath(sender, id))
        let names = ResourceStorage.names(in: finishedDirectory).filter { !$0.hasSuffix(".tmp") }
        guard names.count > ResourceLimits.maxFinishedRecords else { return }
        let aged = names.map { name in (name, ResourceStorage.stamp(finishedDirectory + "/" + name)?.modified ?? 0) }
        for (name, _) in aged.sorted(by: { $0.1 < $1.1 }).prefix(names.count - ResourceLimits.maxFinishedRecords) {
            ResourceStorage.remove(finishedDirectory + "/" + name)
        }
    }

    /// The hash a transfer was received whole with, when this node recorded one (an unreadable or
    /// malformed record is removed and counts as none: it is untrusted input like every record).
    func finished(_ sender: NodeID, _ id: ResourceID) -> Data? {
        let path = finishedPath(sender, id)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard data.count == 64, let hash = Data(hexDigits: String(decoding: data, as: UTF8.self)), hash.count == 32 else {
            ResourceStorage.remove(path)
            return nil
        }
        return hash
    }

    func save(_ record: Outgoing) throws(ResourceStorageError) {
        try ResourceStorage.writeAtomically(Self.encode(record), to: outgoingDirectory + "/" + record.id + ".json")
    }

    func save(_ record: Incoming) throws(ResourceStorageError) {
        try ResourceStorage.writeAtomically(Self.encode(record), to: incomingDirectory + "/" + record.sender + "-" + record.id + ".json")
    }

    /// Every outgoing record, and the names of files that are not valid records.
    func loadOutgoing() -> (records: [Outgoing], invalid: [String]) {
        load(in: outgoingDirectory) { (record: Outgoing, stem) in stem == record.id && ResourceID(hex: record.id) != nil }
    }

    /// Every incoming record, and the names of files that are not valid records.
    func loadIncoming() -> (records: [Incoming], invalid: [String]) {
        load(in: incomingDirectory) { (record: Incoming, stem) in
            stem == record.sender + "-" + record.id && ResourceID(hex: record.id) != nil && (try? NodeID(hex: record.sender)) != nil
        }
    }

    /// `.part` and temporary files in `incoming/` with no record (a crash between creating the
    /// `.part` and its first state file): removed at load.
    func orphans(besides records: [Incoming]) -> [String] {
        let kept = Set(records.map { $0.sender + "-" + $0.id })
        return ResourceStorage.names(in: incomingDirectory).filter { name in
            guard !name.hasSuffix(".json") else { return false }
            let stem = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
            return !kept.contains(stem)
        }.map { incomingDirectory + "/" + $0 }
    }

    private func load<Record: Decodable>(in directory: String, valid: (Record, String) -> Bool) -> (records: [Record], invalid: [String]) {
        var records: [Record] = []
        var invalid: [String] = []
        for name in ResourceStorage.names(in: directory) where name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20,
                  let record = try? JSONDecoder().decode(Record.self, from: data), valid(record, String(name.dropLast(5))) else {
                invalid.append(path)
                continue
            }
            records.append(record)
        }
        return (records, invalid)
    }

    private static func encode<Record: Encodable>(_ record: Record) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(record)) ?? Data()
    }
}
