import ArgumentParser
import Foundation
import MeshSession

/// `meshcat`: netcat across the mesh, on the library's streams (PROTOCOL.md §17).
///
/// Built only on the public `MeshSession` API: a session, discovery through the advertiser and
/// browser, ``Session/acceptStreams(limits:)`` and ``Session/startStream(withName:to:limits:)``.
@main
struct MeshCat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshcat",
        abstract: "Pipe bytes to a node anywhere in the mesh, over an encrypted, flow-controlled stream.",
        discussion: """
            Every node relays: a third node between two others carries their stream.
            Events go to stderr as JSON lines; the first is {"event":"ready","id":…,"port":…}.
            """,
        subcommands: [Listen.self, Send.self])

    static func main() async {
        Session.runTasksOnEventLoops()
        // As meshchat and meshbench: a stream's buffers are reused, not fresh pages each time.
        Session.keepFreedMemoryForReuse()
        await main(nil)
    }
}

/// `meshcat listen`: writes each incoming stream to stdout, one after the other.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accept streams and write each one's bytes to stdout, in the order they open.")

    @OptionGroup var node: NodeOptions

    @Option(name: .long, help: "Exit after this many streams have ended (default: never).")
    var count: Int?

    @OptionGroup var window: WindowOption

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count \(count) must be at least 1.") }
    }

    func run() async throws {
        let running = try await RunningNode.start(node)
        let incoming = try await running.session.acceptStreams(limits: window.limits)
        var ended = 0
        var failed = false
        for await stream in incoming {
            Events.emit(["event": "stream", "from": stream.peer.id.hex, "name": stream.name])
            var bytes = 0
            do {
                for try await chunk in stream {
                    // Blocking: off the loops, which this process's tasks run on (a slow stdout must not stall a link).
                    try await Session.runBlocking { try Output.write(chunk) }
                    bytes += chunk.count
                }
                Events.emit(["event": "end", "from": stream.peer.id.hex, "bytes": bytes])
            } catch let error as StreamError {
                failed = true
                Events.emit(["event": "error", "from": stream.peer.id.hex, "bytes": bytes, "reason": error.description])
            } catch {
                // stdout is gone: refuse the rest of this stream.
                await stream.cancel(reason: "the reader's output failed: \(error)")
                failed = true
                Events.emit(["event": "error", "bytes": bytes, "reason": "stdout: \(error)"])
            }
            ended += 1
            if let count, ended >= count { break }
        }
        await running.stop()
        if failed { throw ExitCode.failure }
    }
}

/// `meshcat send --to ID`: streams stdin to one node and exits 0 once it has read everything.
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream stdin to a node (any number of hops away); exit 0 once it has read every byte.")

    @OptionGroup var node: NodeOptions

    @Option(name: .long, help: ArgumentHelp("The receiving node's id (32 hex digits, or a unique prefix).", valueName: "ID"))
    var to: String

    @Option(name: .long, help: "The stream's name, for the receiver (default: stdin).")
    var name = "stdin"

    @Option(name: .long, help: "Seconds to wait for a route to the receiver (default 30).")
    var wait = 30

    @OptionGroup var window: WindowOption

    func validate() throws {
        guard !to.isEmpty, to.count <= 32, to.allSatisfy(\.isHexDigit) else {
            throw ValidationError("--to \"\(to.prefix(40))\" is not a node id: use its 32 hex digits, or a prefix of them.")
        }
        guard name.utf8.count <= 255 else { throw ValidationError("--name must be at most 255 bytes of UTF-8.") }
        guard (1...3_600).contains(wait) else { throw ValidationError("--wait \(wait) is out of range; use 1 to 3600.") }
    }

    func run() async throws {
        let running = try await RunningNode.start(node)
        do {
            let peer = try await running.reachablePeer(prefix: to.lowercased(), timeout: .seconds(wait))
            let stream = try await running.session.startStream(withName: name, to: peer, limits: window.limits)
            Events.emit(["event": "opened", "to": peer.id.hex, "name": name])
            let opened = ContinuousClock.now
            var bytes = 0
            // The next read runs on the blocking pool while this chunk is written (read ahead by one).
            var next = Task { try await Session.runBlocking { try Input.read() } }
            while let chunk = try await next.value {
                next = Task { try await Session.runBlocking { try Input.read() } }
                try await stream.write(chunk)
                bytes += chunk.count
            }
            try await stream.finish()
            let elapsed = (ContinuousClock.now - opened).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            Events.emit(["event": "finished", "to": peer.id.hex, "bytes": bytes, "seconds": seconds])
            await running.stop()
        } catch {
            Events.emit(["event": "error", "reason": "\(error)"])
            await running.stop()
            throw ExitCode.failure
        }
    }
}

/// `--window`: the stream's window (StreamLimits.window), for trying other sizes.
struct WindowOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The stream's window in KiB: what the reader holds unread, and the sender unacknowledged (default: the library's StreamLimits.window).", valueName: "KIB"))
    var window: Int?

    func validate() throws {
        if let window, !(64...65_536).contains(window) {
            throw ValidationError("--window \(window) is out of range; use 64 to 65536 (KiB).")
        }
    }

    /// The library's default limits with this window.
    var limits: StreamLimits {
        var limits = StreamLimits()
        if let window { limits.window = window << 10 }
        return limits
    }
}

/// Blocking reads of stdin and writes to stdout, in chunks: call them through `Session.runBlocking`.
enum Input {
    /// 1 MiB: a quarter of the stream's default window, one hop to the blocking pool per MiB.
    static let chunkSize = 1024 * 1024

    /// The next chunk of stdin, or `nil` at its end.
    static func read() throws -> Data? {
        let data = try FileHandle.standardInput.read(upToCount: chunkSize) ?? Data()
        return data.isEmpty ? nil : data
    }
}

enum Output {
    static func write(_ data: Data) throws {
        try FileHandle.standardOutput.write(contentsOf: data)
    }
}

/// JSON lines on stderr.
enum Events {
    static func emit(_ fields: [String: any Sendable]) {
        let object = fields.mapValues { $0 as Any }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        line.append(0x0A)
        try? FileHandle.standardError.write(contentsOf: line)
    }
}
