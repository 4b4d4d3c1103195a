import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Puts a received file into the downloads directory under a free name (PROTOCOL.md §16.6).
enum FilePlacement {
    /// Creates a directory and its parents (the new ones with mode 0700) when missing.
    /// - Throws: ``FileTransferError`` when it cannot be created or is not a directory.
    static func makeDirectory(_ path: String) throws(FileTransferError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw FileTransferError("\(path) exists and is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw FileTransferError("cannot create the downloads directory \(path): \(error.localizedDescription)")
        }
    }

    /// Gives a complete file its final name in `directory` without ever replacing a file:
    /// `name`, else `name (1).ext`, … (a hard link fails on an existing name, atomically).
    /// Across file systems (no hard link possible) the file is copied, then removed.
    /// - Returns: the final path.
    static func place(_ source: String, in directory: String, as name: String) throws(FileTransferError) -> String {
        for _ in 0..<1000 {
            let chosen = FileNames.unique(name) { FileManager.default.fileExists(atPath: directory + "/" + $0) }
            let target = directory + "/" + chosen
            if link(source, target) == 0 {
                unlink(source)
                return target
            }
            if errno == EEXIST { continue }
            guard !FileManager.default.fileExists(atPath: target) else { continue }
            if rename(source, target) == 0 { return target }
            // Another file system: copy (never over an existing name), then remove the source.
            do {
                try FileManager.default.copyItem(atPath: source, toPath: target)
                unlink(source)
                return target
            } catch {
                if FileManager.default.fileExists(atPath: target) { continue }
                throw FileTransferError("cannot move \(source) to \(target): \(error.localizedDescription)")
            }
        }
        throw FileTransferError("no free name for \(name) in \(directory)")
    }
}
