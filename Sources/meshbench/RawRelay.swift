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
    @Flag(help: "Open each frame with AES-256-GCM and seal it again for the next hop (between `raw-source --aesgcm` and `raw-sink --aesgcm`): the ceiling of a relay that must open and seal every packet on its two links.")
    var aesgcm = false

    func run() throws { try RawRelay.run(port: port, target: to, cipher: aesgcm ? .aesGCM : nil) }
}

/// The byte-forwarding relay of ``RawRelayCommand``.
enum RawRelay {
    /// Bytes read per `read`.
    static let bufferSize = 256 * 1024

    /// Accepts connections forever, relaying each to `target` (with `cipher`: each frame opened and sealed again).
    static func run(port: Int, target: Int, cipher: RawSealing.Cipher? = nil) throws {
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
            if let cipher {
                Thread { pair.reseal(from: client, to: upstream, cipher: cipher) }.start()
                Thread { pair.reseal(from: upstream, to: client, cipher: cipher) }.start()
            } else {
                Thread { pair.forward(from: client, to: upstream) }.start()
                Thread { pair.forward(from: upstream, to: client) }.start()
            }
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
            finish(destination)
        }

        /// Reads whole frames, opens each record with its direction's inbound nonces and seals it
        /// again with the outbound ones, and writes it on (one `write` per frame), until end of
        /// stream or an error; then half-closes the other side.
        func reseal(from source: Int32, to destination: Int32, cipher: RawSealing.Cipher) {
            var opening = RawSealing(cipher), sealing = RawSealing(cipher)
            var header: [UInt8] = [], body: [UInt8] = [], output: [UInt8] = []
            while let frame = try? RawSocket.readFrame(source, header: &header, body: &body), frame.type == 0x02,
                  let plaintext = try? body.withUnsafeBytes({ try opening.open(UnsafeRawBufferPointer(rebasing: $0[..<frame.length])) }),
                  let flags = plaintext.first {
                output.removeAll(keepingCapacity: true)
                let frameLength = UInt32(1 + plaintext.count + RawSealing.tagLength)
                output.append(contentsOf: [UInt8(frameLength >> 24), UInt8(frameLength >> 16 & 0xff),
                                           UInt8(frameLength >> 8 & 0xff), UInt8(frameLength & 0xff), 0x02])
                let data = [UInt8](plaintext.dropFirst())
                guard (try? sealing.seal(flags: flags, data: data[...], appendingTo: &output)) != nil,
                      (try? RawSocket.writeAll(destination, output)) != nil else { break }
            }
            finish(destination)
        }

        private func finish(_ destination: Int32) {
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
