import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `meshbench raw-relay`: the baseline relay hop. It accepts TCP connections and forwards bytes
/// both ways to a target port: two threads per connection, blocking reads of up to 256 KiB and
/// writes of whatever was read, `TCP_NODELAY` on both sockets, no parsing and no crypto (the
/// same design as `netbench relay` in bench-anchors/NETWORK.md).
struct RawRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "raw-relay",
        abstract: "A byte-forwarding TCP relay (the baseline for a mesh relay hop; prints {\"port\":N}).",
        shouldDisplay: false)

    @Option(help: "Port to listen on (0: any).") var port = 0
    @Option(help: "Port on 127.0.0.1 to forward each connection to.") var to: Int

    func run() throws { try RawRelay.run(port: port, target: to) }
}

/// The byte-forwarding relay of ``RawRelayCommand``.
enum RawRelay {
    /// Bytes read per `read`.
    static let bufferSize = 256 * 1024

    /// Accepts connections forever, relaying each to `target`.
    static func run(port: Int, target: Int) throws {
        let (listener, bound) = try RawSocket.listen(port: port)
        printJSON(["port": bound])
        while true {
            let client = try RawSocket.accept(listener)
            let upstream: Int32
            do {
                upstream = try RawSocket.connect(port: target)
            } catch {
                close(client)
                continue
            }
            let pair = SocketPair(client, upstream)
            Thread { pair.forward(from: client, to: upstream) }.start()
            Thread { pair.forward(from: upstream, to: client) }.start()
        }
    }

    /// The two sockets of one relayed connection; the last direction to finish closes both.
    final class SocketPair: @unchecked Sendable {
        private let lock = NSLock()
        private var running = 2
        private let sockets: (Int32, Int32)

        init(_ a: Int32, _ b: Int32) { sockets = (a, b) }

        /// Copies bytes until end of stream or an error, then half-closes the other side.
        func forward(from source: Int32, to destination: Int32) {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: RawRelay.bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            copying: while true {
                let n = read(source, buffer, RawRelay.bufferSize)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                var offset = 0
                while offset < n {
                    let written = write(destination, buffer + offset, n - offset)
                    if written < 0, errno == EINTR { continue }
                    if written <= 0 { break copying }
                    offset += written
                }
            }
            shutdown(destination, Int32(SHUT_WR))
            lock.lock()
            running -= 1
            let last = running == 0
            lock.unlock()
            if last {
                close(sockets.0)
                close(sockets.1)
            }
        }
    }
}
