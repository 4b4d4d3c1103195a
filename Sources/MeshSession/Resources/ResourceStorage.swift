import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file system side of resources: opening, reading, writing, syncing and hashing files.
/// Every failure is a ``ResourceStorageError`` naming the path and the system's reason.
enum ResourceStorage {
    /// Bytes hashed per read.
    static let hashBlock = 1 << 20

    /// A regular file opened for reading, with its size.
    /// - Parameter path: an absolute path.
    /// - Throws: ``ResourceStorageError`` when it is missing, not a regular file, or unreadable.
    static func openForReading(_ path: String) throws(ResourceStorageError) -> (FileHandle, UInt64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ResourceStorageError("cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw ResourceStorageError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ResourceStorageError("\(path) is not a regular file")
        }
        return (FileHandle(fileDescriptor: fd, closeOnDealloc: true), UInt64(info.st_size))
    }

    /// Creates a directory and its parents (the new ones with mode 0700) when missing.
    /// - Parameter path: the directory.
    /// - Throws: ``ResourceStorageError`` when it cannot be created or is not a directory.
    static func makeDirectory(_ path: String) throws(ResourceStorageError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ResourceStorageError("\(path) exists and is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw ResourceStorageError("cannot create the directory \(path): \(error.localizedDescription)")
        }
    }

    /// Creates a new file (never an existing one) with mode 0600, for writing.
    /// - Parameter path: the path.
    /// - Throws: ``ResourceStorageError``.
    static func createExclusive(_ path: String) throws(ResourceStorageError) -> FileHandle {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw ResourceStorageError("cannot create \(path): \(String(cString: strerror(errno)))") }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Reads `length` bytes at `offset`.
    static func read(_ handle: FileHandle, offset: UInt64, length: Int) throws(ResourceStorageError) -> Data {
        var data = Data(count: length)
        let got = data.withUnsafeMutableBytes { pread(handle.fileDescriptor, $0.baseAddress, length, off_t(offset)) }
        guard got == length else {
            throw ResourceStorageError(got < 0 ? "read failed: \(String(cString: strerror(errno)))" : "the file got shorter while it was sent")
        }
        return data
    }

    /// Reads as many bytes as `buffer` holds at `offset`, into it.
    static func read(_ handle: FileHandle, offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(ResourceStorageError) {
        let got = pread(handle.fileDescriptor, buffer.baseAddress, buffer.count, off_t(offset))
        guard got == buffer.count else {
            throw ResourceStorageError(got < 0 ? "read failed: \(String(cString: strerror(errno)))" : "the file got shorter while it was sent")
        }
    }

    /// Writes bytes at `offset`.
    static func write(_ handle: FileHandle, _ data: Data, offset: UInt64) throws(ResourceStorageError) {
        let written = data.withUnsafeBytes { pwrite(handle.fileDescriptor, $0.baseAddress, data.count, off_t(offset)) }
        guard written == data.count else {
            throw ResourceStorageError(written < 0 ? "write failed: \(String(cString: strerror(errno)))" : "short write (disk full?)")
        }
    }

    /// The SHA-256 of the first `size` bytes of a file (read on NIO's blocking pool by callers).
    static func sha256(_ handle: FileHandle, size: UInt64) throws(ResourceStorageError) -> [UInt8] {
        var hasher = SHA256()
        var offset: UInt64 = 0
        while offset < size {
            let length = Int(min(UInt64(hashBlock), size - offset))
            hasher.update(data: try read(handle, offset: offset, length: length))
            offset += UInt64(length)
        }
        return Array(hasher.finalize())
    }

    /// Opens an existing file for reading and writing (a `.part` file resumed after a restart).
    /// - Parameter path: the path.
    /// - Throws: ``ResourceStorageError``.
    static func openExisting(_ path: String) throws(ResourceStorageError) -> FileHandle {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw ResourceStorageError("cannot open \(path): \(String(cString: strerror(errno)))") }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Flushes a file's data to disk.
    static func sync(_ handle: FileHandle) throws(ResourceStorageError) {
        guard fsync(handle.fileDescriptor) == 0 else {
            throw ResourceStorageError("fsync failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Replaces `path` with `data` atomically and durably: a temporary file beside it, synced,
    /// renamed over it, and the directory synced.
    static func writeAtomically(_ data: Data, to path: String) throws(ResourceStorageError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw ResourceStorageError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try write(handle, data, offset: 0)
        try sync(handle)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw ResourceStorageError("cannot rename \(temporary): \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: path)
    }

    /// Moves a file within one file system and syncs the directory it went to.
    static func move(_ from: String, to: String) throws(ResourceStorageError) {
        guard rename(from, to) == 0 else {
            throw ResourceStorageError("cannot move \(from) to \(to): \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: to)
    }

    /// Syncs the directory holding `path` (best effort: a new or renamed name is durable then).
    static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Bytes free for this user on the file system holding `path`, or `nil` when unknown.
    static func freeBytes(_ path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue
    }

    /// A regular file's size and modification time (seconds and nanoseconds), or `nil`.
    static func stamp(_ path: String) -> (size: UInt64, modified: Int64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return stamp(info)
    }

    /// The size and modification time of the file an open handle reads (the one it was opened
    /// as, even when a new file has replaced it under its name since), or `nil`.
    static func stamp(_ handle: FileHandle) -> (size: UInt64, modified: Int64)? {
        var info = stat()
        guard fstat(handle.fileDescriptor, &info) == 0 else { return nil }
        return stamp(info)
    }

    private static func stamp(_ info: stat) -> (size: UInt64, modified: Int64)? {
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0 else { return nil }
        let modified = Int64(info.st_mtim.tv_sec).multipliedReportingOverflow(by: 1_000_000_000).partialValue
            &+ Int64(info.st_mtim.tv_nsec)
        return (UInt64(info.st_size), modified)
    }

    /// The names in a directory (none when it is missing).
    static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    /// Removes a file, ignoring a missing one.
    static func remove(_ path: String) { unlink(path) }
}

/// A file system operation of the resource shell that failed: what, for people.
struct ResourceStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence.
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
