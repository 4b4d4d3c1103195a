import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension InputHistoryFile {
    /// A history file that could not be read or written.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What failed, naming the file.
        public let description: String
    }

    /// Reads the entries of a history file.
    /// - Parameter path: the file.
    /// - Returns: the entries, oldest first; none when the file does not exist.
    /// - Throws: ``Failure`` when it cannot be read, is larger than ``maxFileBytes`` or is not UTF-8.
    public static func load(from path: String) throws(Failure) -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Failure(description: "cannot open \(path) for reading") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileBytes + 1) ?? Data()
        } catch {
            throw Failure(description: "cannot read \(path): \(error.localizedDescription)")
        }
        guard data.count <= maxFileBytes else { throw Failure(description: "\(path) is larger than \(maxFileBytes) bytes; not read") }
        guard let text = String(data: data, encoding: .utf8) else { throw Failure(description: "\(path) is not UTF-8 text; not read") }
        return decode(text)
    }

    /// Replaces a history file with the entries, so that a crash at any moment leaves either the
    /// old file or the new one: the text goes to a temporary file beside it (mode 0600), is
    /// synced, and is renamed over the old file, and the directory is synced.
    /// - Parameters:
    ///   - entries: the lines, oldest first (already ``InputHistory/forDisk(_:)``).
    ///   - path: the file.
    /// - Throws: ``Failure`` naming the file and the system's reason.
    public static func save(_ entries: [String], to path: String) throws(Failure) {
        let bytes = Array(encode(entries).utf8)
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let error = failure("cannot write \(temporary)")
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += written
        }
        // The mode of a file left by an older run may be wider: make it ours.
        _ = fchmod(fd, 0o600)
        guard fsync(fd) == 0 else {
            let error = failure("cannot sync \(temporary)")
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot rename \(temporary) to \(path)")
            unlink(temporary)
            throw error
        }
        let directory = (path as NSString).deletingLastPathComponent
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
