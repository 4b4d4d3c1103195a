import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The raw-TCP baseline: plain blocking POSIX sockets with meshchat's framing
/// (u32 length + type byte + body, PROTOCOL.md §3) and no encryption.
enum RawSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func fail(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }

    static func listen(port: Int) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw fail("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw fail("bind") }
        guard Glibc.listen(fd, 16) == 0 else { throw fail("listen") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    static func accept(_ listener: Int32) throws -> Int32 {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { throw fail("accept") }
        noDelay(fd)
        return fd
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw fail("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw fail("connect") }
        noDelay(fd)
        return fd
    }

    static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes one frame: header and body in one `writev`-like pass (two writes joined in a buffer).
    static func writeFrame(_ fd: Int32, type: UInt8, body: UnsafeRawBufferPointer, scratch: inout [UInt8]) throws {
        let length = UInt32(1 + body.count)
        scratch.removeAll(keepingCapacity: true)
        scratch.append(UInt8(length >> 24))
        scratch.append(UInt8(length >> 16 & 0xff))
        scratch.append(UInt8(length >> 8 & 0xff))
        scratch.append(UInt8(length & 0xff))
        scratch.append(type)
        scratch.append(contentsOf: body)
        try writeAll(fd, scratch)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw fail("write")
                }
                offset += n
            }
        }
    }

    static func readExactly(_ fd: Int32, _ count: Int, into buffer: inout [UInt8]) throws -> Bool {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, count - offset) }
            if n == 0 { return false }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("read")
            }
            offset += n
        }
        return true
    }

    /// Reads one frame; `nil` at end of stream.
    static func readFrame(_ fd: Int32, header: inout [UInt8], body: inout [UInt8]) throws -> (type: UInt8, length: Int)? {
        guard try readExactly(fd, 5, into: &header) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length >= 1 else { throw Failure(description: "empty frame") }
        guard try readExactly(fd, length - 1, into: &body) else { return nil }
        return (header[4], length - 1)
    }
}
