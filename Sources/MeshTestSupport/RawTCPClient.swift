import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client for hostile-input tests: it sends whatever bytes a test wants, with no
/// protocol, and reports what the peer answered and whether it closed the connection.
public final class RawTCPClient {
    private var fd: Int32

    /// An error with the system's reason.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// Connects to `127.0.0.1:port`.
    /// - Parameter port: the port.
    /// - Throws: ``Failure`` when the connection is refused.
    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw Failure(description: "connect to port \(port): \(reason)")
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Sends bytes; errors (the peer already closed) are ignored, as a hostile client would.
    /// - Parameter bytes: what to send.
    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads until the peer closes the connection or the deadline passes.
    /// - Parameter timeout: seconds to wait at most.
    /// - Returns: the bytes received and whether the peer closed (EOF or reset) before the deadline.
    public func readUntilClosed(timeout: Double) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return (received, false) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(remaining * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return (received, false) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { return (received, true) }
            received.append(contentsOf: buffer[0..<n])
        }
    }

    /// Closes the connection (with a reset when `abortive`).
    /// - Parameter abortive: send RST instead of FIN.
    public func close(abortive: Bool = false) {
        guard fd >= 0 else { return }
        if abortive {
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        Glibc.close(fd)
        fd = -1
    }
}
