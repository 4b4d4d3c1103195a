import Foundation
import Logging
import MeshTestSupport
import MeshTransport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The control socket's transport on real Unix domain sockets: private, bounded, and never
/// taking a socket someone listens on.
@Suite("local line server", .serialized)
struct LocalLineServerTests {
    static let logger = Logger(label: "test.control")

    /// Runs `body` with a server at `DIR/control` answering `echo:LINE`, then stops it.
    static func withServer(_ limits: LocalLineServer.Limits = LocalLineServer.Limits(),
                           _ body: (String, LocalLineServer) async throws -> Void) async throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("control")
        let server = try await LocalLineServer.bind(path: path, limits: limits, logger: logger)
        let task = Task {
            await server.run(handler: { "echo:" + String(decoding: $0, as: UTF8.self) }, reject: { "rejected:\($0)" })
        }
        do {
            try await body(path, server)
        } catch {
            await server.close()
            await task.value
            throw error
        }
        await server.close()
        await task.value
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed at the end")
    }

    /// Connects, writes `bytes`, and reads until the server closes (or, with `readToEnd` false, one line).
    static func exchange(_ path: String, _ bytes: [UInt8], readToEnd: Bool = true) throws -> String {
        let client = try UnixLineClient(path)
        client.write(bytes)
        return readToEnd ? client.readToEnd() : client.readLine() + "\n"
    }

    @Test("answers each line in order, and the socket is mode 0600")
    func roundTrip() async throws {
        try await Self.withServer { path, _ in
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(try await LocalLineServer.request("hello", path: path).map { String(decoding: $0, as: UTF8.self) } == "echo:hello")
            #expect(try Self.exchange(path, Array("one\ntwo\n".utf8), readToEnd: false).hasPrefix("echo:one\n"))
        }
    }

    @Test("a line over the limit is answered once and closed; the server serves on")
    func tooLong() async throws {
        var limits = LocalLineServer.Limits()
        limits.maxLineBytes = 100
        try await Self.withServer(limits) { path, _ in
            let reply = try Self.exchange(path, Array(repeating: UInt8(ascii: "x"), count: 5000) + [UInt8(ascii: "\n")])
            #expect(reply == "rejected:lineTooLong(limit: 100)\n")
            // Exactly at the limit is fine.
            let line = String(repeating: "y", count: 100)
            #expect(try await LocalLineServer.request(line, path: path).map { String(decoding: $0, as: UTF8.self) } == "echo:" + line)
        }
    }

    @Test("clients beyond the limit are sent away; a slot frees when a client leaves")
    func tooManyClients() async throws {
        var limits = LocalLineServer.Limits()
        limits.maxClients = 2
        try await Self.withServer(limits) { path, _ in
            // Two clients hold their connections open (each answered once, so it is being served).
            let holders = try (0..<2).map { _ in try UnixLineClient(path) }
            for holder in holders { #expect(holder.ask("hold") == "echo:hold") }
            #expect(try Self.exchange(path, Array("third\n".utf8)) == "rejected:tooManyClients(limit: 2)\n")
            holders[0].close()
            // The freed slot is taken again (the server notices the close on its own time).
            let deadline = ContinuousClock.now + .seconds(10)
            var reply = ""
            while ContinuousClock.now < deadline {
                reply = try Self.exchange(path, Array("fourth\n".utf8), readToEnd: false)
                if reply.hasPrefix("echo:") { break }
                await Task.yield()
            }
            #expect(reply == "echo:fourth\n")
            holders[1].close()
        }
    }

    @Test("a stale socket is replaced; a listened one, or a file that is not a socket, is not")
    func stale() async throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("control")
        // A socket file nobody listens on: what a crashed chat leaves.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        close(fd)
        let server = try await LocalLineServer.bind(path: path, logger: Self.logger)
        let task = Task { await server.run(handler: { _ in "ok" }, reject: { _ in "no" }) }
        // Now someone listens: a second server must not take the path.
        await #expect(throws: LocalLineServer.Failure.self) { try await LocalLineServer.bind(path: path, logger: Self.logger) }
        #expect(try await LocalLineServer.request("x", path: path).map { String(decoding: $0, as: UTF8.self) } == "ok")
        await server.close()
        await task.value

        let file = directory.appending("file")
        FileManager.default.createFile(atPath: file, contents: Data("keep me".utf8))
        await #expect(throws: LocalLineServer.Failure.self) { try await LocalLineServer.bind(path: file, logger: Self.logger) }
        #expect(FileManager.default.contents(atPath: file) == Data("keep me".utf8))
        let long = directory.appending(String(repeating: "d", count: 120))
        await #expect(throws: LocalLineServer.Failure.self) { try await LocalLineServer.bind(path: long, logger: Self.logger) }
    }

    @Test("the line splitter bounds lines, whatever the chunks", arguments: [1, 2, 7, 1000])
    func splitter(chunk: Int) {
        let stream = Array("ab\n\nxyz\n".utf8) + Array(repeating: UInt8(ascii: "q"), count: 20) + Array("\nafter\n".utf8)
        var splitter = LineSplitter(maxLineBytes: 10)
        var pieces: [LineSplitter.Piece] = []
        var index = 0
        while index < stream.count {
            pieces += splitter.append(stream[index..<min(index + chunk, stream.count)])
            index += chunk
        }
        #expect(pieces == [.line(Array("ab".utf8)), .line([]), .line(Array("xyz".utf8)), .tooLong])
    }
}
