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
        for address in connect where Self.parse(address) == nil {
            throw ValidationError("--connect \"\(address.prefix(80))\" is not HOST:PORT (or [IPV6]:PORT).")
        }
    }

    /// `HOST:PORT` or `[IPV6]:PORT`.
    static func parse(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
              (1...65_535).contains(port) else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}

/// A started session with its runner, event drain and discovery.
struct RunningNode: Sendable {
    let session: Session
    private let tasks: [Task<Void, Never>]
    private let advertiser: NearbyServiceAdvertiser?
    private let browser: NearbyServiceBrowser?

    static func start(_ options: NodeOptions) async throws -> RunningNode {
        let directory = options.dataDir ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("meshcat-\(UUID().uuidString)").path
        let me = try LocalPeer(displayName: options.displayName, dataDirectory: directory)
        var configuration = Session.Configuration()
        configuration.port = options.port
        let session = Session(peer: me, configuration: configuration)
        let port = try await session.start()
        var tasks: [Task<Void, Never>] = [Task { try? await session.run() }]
        // The session's events must be read, or its links stop reading once 1,024 wait.
        tasks.append(Task { for await _ in session.events {} })
        for address in options.connect {
            if let (host, port) = NodeOptions.parse(address) { session.connect(host: host, port: port, redial: true) }
        }
        var advertiser: NearbyServiceAdvertiser?
        var browser: NearbyServiceBrowser?
        if options.discovery {
            let found = try NearbyServiceBrowser(peer: me.peerID, serviceType: configuration.serviceType)
            let announced = try NearbyServiceAdvertiser(peer: me.peerID, serviceType: configuration.serviceType)
            announced.start(session: session)
            found.start()
            tasks.append(Task {
                for await event in announced.events {
                    if case .receivedInvitation(let invitation) = event { invitation.accept() }
                }
            })
            tasks.append(Task {
                // The lower node id invites (PROTOCOL.md §12.4); a duplicate link is resolved by the session.
                for await event in found.events {
                    guard case .foundPeer(let peer, _) = event, me.peerID.id < peer.id,
                          !session.connectedPeers.contains(peer) else { continue }
                    try? found.invitePeer(peer, to: session, withContext: nil, timeout: .seconds(10))
                }
            })
            advertiser = announced
            browser = found
        }
        Events.emit(["event": "ready", "id": me.peerID.id.hex, "port": port])
        return RunningNode(session: session, tasks: tasks, advertiser: advertiser, browser: browser)
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
        advertiser?.close()
        browser?.close()
        await session.disconnect()
        for task in tasks { task.cancel() }
    }
}
