import MeshFiles
import MeshSession

/// How file transfer events (PROTOCOL.md §16) look: JSON events `fileOffered`, `fileProgress`,
/// `filePaused`, `fileResumed`, `fileSent`, `fileReceived`, `fileFailed` (README "JSON events"),
/// and notices in text.
enum FileOutput {
    /// The other side of the transfer an event is about.
    static func peer(_ event: FileTransferEvent) -> PeerID { info(event).peer }

    /// The transfer an event is about.
    static func info(_ event: FileTransferEvent) -> FileTransferInfo {
        switch event {
        case .offered(let info), .progress(let info, _), .paused(let info), .resumed(let info), .sent(let info),
             .received(let info, _), .failed(let info, _): info
        }
    }

    /// The JSON object of an event.
    static func json(_ event: FileTransferEvent) -> JSONValue {
        switch event {
        case .offered(let info):
            return .object(base("fileOffered", info) + [("size", .int(Int(info.size))), ("sha256", .string(info.sha256))])
        case .progress(let info, let bytes):
            return .object(base("fileProgress", info) + [("bytes", .int(Int(bytes))), ("size", .int(Int(info.size)))])
        case .paused(let info):
            return .object(base("filePaused", info))
        case .resumed(let info):
            return .object(base("fileResumed", info))
        case .sent(let info):
            return .object([("event", "fileSent"), ("id", .string(info.id.hex)), ("to", JSONRenderer.peer(info.peer)),
                            ("name", .string(info.name)), ("size", .int(Int(info.size))), ("sha256", .string(info.sha256))])
        case .received(let info, let path):
            return .object([("event", "fileReceived"), ("id", .string(info.id.hex)), ("from", JSONRenderer.peer(info.peer)),
                            ("name", .string(info.name)), ("path", .string(path)), ("size", .int(Int(info.size))),
                            ("sha256", .string(info.sha256))])
        case .failed(let info, let failure):
            return .object(base("fileFailed", info) + [("code", .string("\(failure.code)")), ("reason", .string(failure.reason)),
                                                      ("by_peer", .bool(failure.byPeer))])
        }
    }

    /// The notice of an event; `nil` for progress (the terminal's status row shows it, ``TransferMeter``).
    static func text(_ event: FileTransferEvent) -> String? {
        switch event {
        case .offered(let info):
            return info.direction == .outgoing
                ? "* offering \(info.name) (\(size(info.size))) to \(info.peer.shownName)…"
                : "* receiving \(info.name) (\(size(info.size))) from \(info.peer.shownName)…"
        case .progress:
            return nil
        case .paused(let info):
            let arrow = info.direction == .outgoing ? "to" : "from"
            return "* file \(info.name) \(arrow) \(info.peer.shownName) paused: \(info.peer.shownName) is out of reach (waits up to 10 minutes)"
        case .resumed(let info):
            let arrow = info.direction == .outgoing ? "to" : "from"
            return "* file \(info.name) \(arrow) \(info.peer.shownName) resumed"
        case .sent(let info):
            return "* sent \(info.name) (\(size(info.size))) to \(info.peer.shownName): received and checked (SHA-256 \(info.sha256.prefix(16))…)"
        case .received(let info, let path):
            return "* received \(info.name) (\(size(info.size))) from \(info.peer.shownName), SHA-256 checked: \(path)"
        case .failed(let info, let failure):
            let arrow = info.direction == .outgoing ? "to" : "from"
            // My own /cancel is a choice, not a failure.
            if failure.code == .cancelled && !failure.byPeer { return "* you cancelled \(info.name) \(arrow) \(info.peer.shownName)" }
            return "! file \(info.name) \(arrow) \(info.peer.shownName) failed: \(failure)"
        }
    }

    /// The JSON object of `/files`.
    static func json(_ transfers: [FileTransferProgress]) -> JSONValue {
        .object([("event", "files"), ("transfers", .array(transfers.map { row in
            .object([("id", .string(row.info.id.hex)), ("direction", .string(row.info.direction.rawValue)),
                     ("peer", JSONRenderer.peer(row.info.peer)), ("name", .string(row.info.name)),
                     ("bytes", .int(Int(row.bytes))), ("size", .int(Int(row.info.size)))])
        }))])
    }

    /// The text of `/files`: one line per transfer.
    static func text(_ transfers: [FileTransferProgress]) -> String {
        guard !transfers.isEmpty else { return "* no file transfers running" }
        return (["* file transfers:"] + transfers.map { row in
            let info = row.info
            let percent = info.size == 0 ? 100 : Int(row.bytes * 100 / info.size)
            let way = info.direction == .outgoing ? "to" : "from"
            return "  \(info.id.shortHex) \(info.name) \(way) \(info.peer.shownName): \(percent)% (\(size(row.bytes)) of \(size(info.size)))"
        }).joined(separator: "\n")
    }

    private static func base(_ name: String, _ info: FileTransferInfo) -> [(String, JSONValue)] {
        [("event", .string(name)), ("id", .string(info.id.hex)), ("direction", .string(info.direction.rawValue)),
         ("peer", JSONRenderer.peer(info.peer)), ("name", .string(info.name))]
    }

    /// "512 bytes", "1.5 KiB", "3.2 MiB".
    static func size(_ bytes: UInt64) -> String { size(bytes: Double(bytes)) }

    /// "512 bytes", "1.5 KiB", "3.2 MiB" for a size or a rate (a rate's bytes rounded down).
    static func size(bytes: Double) -> String {
        guard bytes.isFinite, bytes >= 0 else { return "? bytes" }
        if bytes < 1024 {
            let whole = Int(bytes.rounded(.down))
            return "\(whole) byte\(whole == 1 ? "" : "s")"
        }
        let units = ["KiB", "MiB", "GiB"]
        var value = bytes / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }
}
