import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The exclusive lock on a data directory, held while a node runs from it.
///
/// Two processes on one data directory would be the same identity twice in the mesh and two
/// writers of one SQLite store, so the chat and `meshchat send` take this lock before they open
/// anything else: an advisory `flock(LOCK_EX | LOCK_NB)` on ``fileName`` in the directory (mode
/// 0600), which holds this process's id for the error the next one shows. The kernel releases
/// the lock when the process ends, however it ends, so a crash never leaves a stale lock behind;
/// releasing the value (which closes the file) releases it earlier.
///
/// This type is thread-safe.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name inside the data directory.
    public static let fileName = "lock"

    /// Why the lock could not be taken.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The directory.
        public let directory: String
        /// Another process holds the lock (false: the file could not be opened or locked).
        public let isHeld: Bool
        /// What went wrong, naming the directory and the way out.
        public let description: String
    }

    /// The directory.
    public let directory: String
    private let fd: Int32

    /// Takes the lock, creating the directory (mode 0700) and the lock file when missing.
    /// - Parameter directory: the data directory.
    /// - Throws: ``Failure``; `isHeld` when another process runs from the directory.
    public init(directory: String) throws(Failure) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(directory: directory, isHeld: false,
                          description: "cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        let path = directory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Failure(directory: directory, isHeld: false,
                          description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.holder(fd)
            close(fd)
            guard code == EWOULDBLOCK else {
                throw Failure(directory: directory, isHeld: false, description: "cannot lock \(path): \(String(cString: strerror(code)))")
            }
            let who = holder.map { "meshchat (process \($0))" } ?? "meshchat"
            throw Failure(directory: directory, isHeld: true, description:
                            "another \(who) is running with the data directory \(directory): two processes on one data directory would "
                            + "be the same node twice. Stop that one, or give this one a directory of its own with --data-dir DIR "
                            + "(it gets an identity of its own)")
        }
        // Our process id, for the message the next process shows.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    /// The process id written in the lock file, if any.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Releases the lock (closing the file releases it).
    deinit {
        close(fd)
    }
}
