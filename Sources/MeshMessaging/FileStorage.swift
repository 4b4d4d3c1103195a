import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file system side of file transfer: opening, reading, writing, hashing and placing files.
/// Every failure is a ``FileTransferError`` naming the path and the system's reason.
enum FileStorage {
    /// Bytes hashed per read.
    static let hashBlock = 1 << 20

    /// A regular file opened for reading, with its size.
    /// - Parameter path: an absolute path.
    /// - Throws: ``FileTransferError`` when it is missing, not a regular file, or unreadable.
    static func openForReading(_ path: String) throws(FileTransferError) -> (FileHandle, UInt64) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileTransferError("cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw FileTransferError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FileTransferError("\(path) is not a regular file")
        }
        return (FileHandle(fileDescriptor: fd, closeOnDealloc: true), UInt64(info.st_size))
    }

    /// Creates a directory and its parents (the new ones with mode 0700) when missing.
    /// - Parameter path: the directory.
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

    /// Creates a new file (never an existing one) with mode 0600, for writing.
    /// - Parameter path: the path.
    /// - Throws: ``FileTransferError``.
    static func createExclusive(_ path: String) throws(FileTransferError) -> FileHandle {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileTransferError("cannot create \(path): \(String(cString: strerror(errno)))") }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// Reads `length` bytes at `offset`.
    static func read(_ handle: FileHandle, offset: UInt64, length: Int) throws(FileTransferError) -> Data {
        var data = Data(count: length)
        let got = data.withUnsafeMutableBytes { pread(handle.fileDescriptor, $0.baseAddress, length, off_t(offset)) }
        guard got == length else {
            throw FileTransferError(got < 0 ? "read failed: \(String(cString: strerror(errno)))" : "the file got shorter while it was sent")
        }
        return data
    }

    /// Writes bytes at `offset`.
    static func write(_ handle: FileHandle, _ data: Data, offset: UInt64) throws(FileTransferError) {
        let written = data.withUnsafeBytes { pwrite(handle.fileDescriptor, $0.baseAddress, data.count, off_t(offset)) }
        guard written == data.count else {
            throw FileTransferError(written < 0 ? "write failed: \(String(cString: strerror(errno)))" : "short write (disk full?)")
        }
    }

    /// The SHA-256 of the first `size` bytes of a file (read on NIO's blocking pool by callers).
    static func sha256(_ handle: FileHandle, size: UInt64) throws(FileTransferError) -> [UInt8] {
        var hasher = SHA256()
        var offset: UInt64 = 0
        while offset < size {
            let length = Int(min(UInt64(hashBlock), size - offset))
            hasher.update(data: try read(handle, offset: offset, length: length))
            offset += UInt64(length)
        }
        return Array(hasher.finalize())
    }

    /// Gives a complete `.part` file its final name in `directory` without ever replacing a file:
    /// `name`, else `name (1).ext`, … (a hard link fails on an existing name, atomically).
    /// - Returns: the final path.
    static func place(_ part: String, in directory: String, as name: String) throws(FileTransferError) -> String {
        for _ in 0..<1000 {
            let chosen = FileNames.unique(name) { FileManager.default.fileExists(atPath: directory + "/" + $0) }
            let target = directory + "/" + chosen
            if link(part, target) == 0 {
                unlink(part)
                return target
            }
            if errno == EEXIST { continue }
            // A file system without hard links: rename after the check above.
            guard !FileManager.default.fileExists(atPath: target) else { continue }
            guard rename(part, target) == 0 else {
                throw FileTransferError("cannot move \(part) to \(target): \(String(cString: strerror(errno)))")
            }
            return target
        }
        throw FileTransferError("no free name for \(name) in \(directory)")
    }

    /// Removes a file, ignoring a missing one.
    static func remove(_ path: String) { unlink(path) }
}

/// A file transfer request that cannot be carried out: what was wrong, for people.
public struct FileTransferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence.
    public let message: String
    /// Creates an error.
    /// - Parameter message: what was wrong.
    public init(_ message: String) { self.message = message }
    /// The sentence.
    public var description: String { message }
}
