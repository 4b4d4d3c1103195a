#if canImport(Glibc)
import Glibc
#endif

/// Writes to the process's standard output and standard error that never trap.
///
/// `FileHandle.write(_:)` stops the process with a fatal error when the write fails, and
/// SwiftNIO ignores SIGPIPE for the whole process, so a reader that went away (`meshchat --json |
/// head -n 3`) or a closed descriptor (`2>&-`) would crash the chat at its next line. These calls
/// write every byte (short writes and `EINTR` continue; a full non-blocking pipe is waited for
/// with `poll`) and report a failure instead: the caller decides what a closed stream means.
/// Thread-safe; each call is one or more `write(2)` calls, so hold a lock around a call when whole
/// lines from several threads must not interleave.
public enum StandardStreams {
    /// Writes all of `text` to a file descriptor.
    /// - Parameters:
    ///   - text: what to write (nothing happens for an empty string).
    ///   - descriptor: the file descriptor, e.g. `STDOUT_FILENO`.
    /// - Returns: `false` when the stream is closed or the write failed (`EPIPE`, `EBADF`, `EIO`,
    ///   …); part of the text may have been written then.
    @discardableResult
    public static func write(_ text: String, to descriptor: Int32) -> Bool {
        var text = text
        return text.withUTF8 { write($0, to: descriptor) }
    }

    /// Writes all of `bytes` to a file descriptor (see ``write(_:to:)-swift.type.method``).
    /// - Parameters:
    ///   - bytes: what to write.
    ///   - descriptor: the file descriptor.
    /// - Returns: `false` when the stream is closed or the write failed.
    @discardableResult
    public static func write(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A non-blocking descriptor whose pipe is full: wait until it takes more.
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&ready, 1, -1) < 0 && errno != EINTR { return false }
                if ready.revents & Int16(POLLERR | POLLNVAL) != 0 { return false }
            } else {
                return false
            }
        }
        return true
    }
}
