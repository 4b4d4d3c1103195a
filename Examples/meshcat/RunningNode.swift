import ArgumentParser
import Foundation
import MeshSession

/// The options every meshcat command takes.
struct NodeOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Where the key file lives (default: a new identity in a temporary directory).", valueName: "DIR"))
    var dataDir: String?

    @Option(name: .long, help: "TCP and UDP port to listen on; 0 (the default) picks a free one.")
    var port = 0

    @Option(name: .long, help: ArgumentHelp("Connect to a node at HOST:PORT and keep the link; repeatable.", valueName: "HOST:PORT"))
    var connect: [String] = []

    @Flag(name: .long, inversion: .prefixedNo, help: "Find nodes on the local network through avahi-daemon (default: on).")
    var discovery = true

    @Option(name: .long, help: "This node's display name (default meshcat).")
    var displayName = "meshcat"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port \(port) is not a port number; use 0 to 65535.") }
        for address in connect {
            do {
                _ = try Session.parseAddress(address)
            } catch {
                throw ValidationError("--connect: \(error.message)")
            }
        }
    }
}

/// A started session with its runner, event drain and discovery.
struct RunningNode: Sendable {
    let session: Session
    private let tasks: [Task<Void, Never>]

    static func start(_ options: NodeOptions) async throws -> RunningNode {
        // Chunks of 64 KiB come and go all the time: keep freed memory instead of faulting it in anew.
        Session.keepFreedMemoryForReuse()
        let directory = options.dataDir ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("meshcat-\(UUID().uuidString)").path
        let me = try LocalPeer(displayName: options.displayName, dataDirectory: directory)
        var configuration = Session.Configuration()
        configuration.port = options.port
        let session = Session(peer: me, configuration: configuration)
        let port = try await session.start()
        var tasks: [Task<Void, Never>] = [Task { try? await session.run() }]
        for address in options.connect {
            if let (host, port) = try? Session.parseAddress(address) { session.connect(host: host, port: port, redial: true) }
        }
        var finder: NearbyPeerFinder?
        if options.discovery {
            do {
                // Announces this node, finds others and links up with each once.
                let found = try NearbyPeerFinder(session: session, serviceType: configuration.serviceType)
                tasks.append(Task { await found.run() })
                tasks.append(Task { for await _ in found.events {} })
                finder = found
            } catch {
                Events.emit(["event": "error", "reason": "discovery is off: \(error)"])
            }
        }
        // The session's events must be read, or its links stop reading once 1,024 wait.
        tasks.append(Task { [finder] in
            for await event in session.events { finder?.sessionEvent(event) }
        })
        Events.emit(["event": "ready", "id": me.peerID.id.hex, "port": port])
        return RunningNode(session: session, tasks: tasks)
    }

    /// The reachable node whose id starts with `prefix`, waiting for a route up to `timeout`.
    func reachablePeer(prefix: String, timeout: Duration) async throws -> PeerID {
        let deadline = ContinuousClock.now + timeout
        while true {
            let matches = session.reachablePeers.map(\.peer).filter { $0.id.hex.hasPrefix(prefix) }
            if matches.count > 1 { throw ValidationError("--to \(prefix) matches \(matches.count) nodes; give more digits.") }
            if let peer = matches.first { return peer }
            guard ContinuousClock.now < deadline else {
                throw ValidationError("no route to a node \(prefix)… within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() async {
        await session.disconnect()
        // The session's run() ends once its links have said goodbye and closed: exiting before
        // would reset them, and peers would lose the last bytes sent to them.
        await tasks.first?.value
        for task in tasks { task.cancel() }
    }
}
