import ArgumentParser
import Foundation
import MeshDiscovery
import MeshSession

/// meshboard: a bulletin board across the mesh, on a channel of its own — an application built on
/// the public MeshSession API only, as any third party would write it.
///
/// Standard input takes commands, one per line: `post TEXT` (to every node), `tell ID TEXT` (sealed
/// to one node, any number of hops away; ID is a node id or a prefix of one), `status TEXT` (set
/// this node's status, carried in its signed advert), `peers` (every reachable node with its
/// status). Standard output has one JSON event per line; the first line on standard error is
/// `{"event":"ready","id":…,"port":…}`. End of input quits.
@main
struct MeshBoard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshboard",
        abstract: "A bulletin board across the mesh: posts, notes and statuses on a channel of its own.")

    @Option(help: "This node's display name (1–63 bytes).")
    var name = "board"

    @Option(name: .customLong("data-dir"), help: "Where this node's keys live (default: ~/.local/share/meshboard).")
    var dataDirectory: String?

    @Option(help: "The TCP and UDP port (0: any free port).")
    var port = 0

    @Option(name: .customLong("connect"), help: "HOST:PORT of a node to link to (kept: redialled while down). Repeatable.")
    var connect: [String] = []

    @Flag(name: .customLong("no-discovery"), help: "Do not announce or browse with avahi-daemon.")
    var noDiscovery = false

    @Option(help: "This node's status, shown to every node (at most 200 bytes).")
    var status: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("Please give a --port from 0 to 65535.") }
        guard (1...63).contains(name.utf8.count) else { throw ValidationError("Please give a --name of 1 to 63 bytes.") }
        if let status, status.utf8.count > BoardMessage.maxStatusBytes {
            throw ValidationError("Please give a --status of at most \(BoardMessage.maxStatusBytes) bytes.")
        }
        for address in connect where Self.address(address) == nil {
            throw ValidationError("Please give --connect as HOST:PORT (\"\(address)\" is not).")
        }
    }

    /// Splits `HOST:PORT` (`[v6]:PORT` too).
    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65_535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        let output = Output()
        let directory = dataDirectory ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/meshboard").path
        let me = try LocalPeer(displayName: name, dataDirectory: directory)
        var configuration = Session.Configuration()
        configuration.port = port
        let session = Session(peer: me, configuration: configuration)
        let boundPort = try await session.start()
        let channel = try session.register(channel: BoardMessage.channel, limits: BoardMessage.limits)
        if let status { try await channel.setAttachment(Data(status.utf8)) }
        let finder: NearbyPeerFinder?
        do {
            finder = noDiscovery ? nil : try NearbyPeerFinder(session: session, serviceType: "meshboard")
        } catch {
            output.error("discovery is off: \(error.message)")
            finder = nil
        }
        output.event(["event": "ready", "id": me.peerID.id.hex, "port": boundPort], toStandardError: true)
        let board = Board(session: session, channel: channel, output: output)
        let input = Self.standardInputLines()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await session.run() }
            if let finder { group.addTask { await finder.run() } }
            group.addTask {
                for await event in session.events {
                    finder?.sessionEvent(event)
                    board.show(event)
                }
            }
            group.addTask {
                for await message in channel.messages { board.show(message) }
            }
            for text in connect {
                if let (host, port) = Self.address(text) { session.connect(host: host, port: port, redial: true) }
            }
            for await line in input { await board.command(line) }
            await session.disconnect()
            group.cancelAll()
        }
    }

    /// Standard input, line by line, read on a thread of its own (a blocking read).
    static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(64))
        let thread = Thread {
            while let line = readLine() {
                while case .dropped = continuation.yield(line) { usleep(1_000) }
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
