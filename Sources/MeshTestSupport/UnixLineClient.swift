import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking client of a Unix domain stream socket, for tests of line servers (the chat's
/// control socket): each read waits at most 10 s (`SO_RCVTIMEO`), so a silent server fails the
/// test instead of stalling it.
public final class UnixLineClient: @unchecked Sendable {
    // @unchecked: one test task uses a client at a time.
    private var fd: Int32

    /// Connects to the socket at `path`.
    /// - Throws: ``ChatProcess/Failure`` when nothing accepts the connection.
    public init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            fd = -1
            throw ChatProcess.Failure(description: "cannot connect to \(path): \(reason)")
        }
    }

    deinit { close() }

    /// Writes `bytes`, as many as the server takes before it closes.
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads one line (without `\n`), or what came before the server closed.
    public func readLine() -> String {
        var received: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") { received.append(byte) }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads until the server closes (or a read times out).
    public func readToEnd() -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Writes a line and reads the answer line.
    public func ask(_ line: String) -> String {
        write(Array((line + "\n").utf8))
        return readLine()
    }

    /// Closes the connection (again: nothing).
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
