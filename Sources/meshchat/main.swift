import ArgumentParser
import Foundation
import Logging
import MeshChatKit
import MeshDiscovery
import MeshMessaging
import MeshPlaces
import MeshSession
import MeshStore
import MeshTransport
import NIOPosix

/// `meshchat`: peer-to-peer encrypted chat for the terminal and for scripts.
struct MeshChat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshchat",
        abstract: "Peer-to-peer encrypted chat between Linux machines, no server needed.",
        discussion: """
            Type a line to send it to everyone in the mesh, /msg @NAME TEXT for one peer (end-to-end \
            encrypted, relayed by other peers, kept until delivered); /help lists the commands. With --json every \
            event is one JSON object per line on stdout (README.md documents them); logs go to stderr.
            Exit status: 0 after /quit or the end of input, 1 when the chat cannot start (a port in use, \
            an unreadable key file), 64 for a bad command line.
            Offline place data for scripts: meshchat places query --help.
            """)

    /// Runs the chat: ``main()`` (an async context picks the async `main`, not ParsableCommand's).
    static func runChat() async { await main() }

    /// Runs tasks on SwiftNIO's loop threads (no hops between sockets and tasks), keeps freed heap
    /// memory for reuse (large messages), then the command.
    static func main() async {
        EventLoops.installAsConcurrencyExecutor()
        HeapTuning.keepFreedMemoryForReuse()
        await main(nil)
    }

    @Option(name: .long, help: "Your display name: 1 to 63 bytes of UTF-8 (default: this machine's host name).")
    var name: String?

    @Option(name: .long, help: "TCP and UDP port to listen on; 0 picks a free port, which is printed.")
    var port: Int = 0

    @Option(name: .long, help: ArgumentHelp("Connect to a peer at HOST:PORT ([IPV6]:PORT); repeatable.", valueName: "HOST:PORT"))
    var connect: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where the key file and the message database live (default: $XDG_DATA_HOME/meshchat or ~/.local/share/meshchat).", valueName: "DIR"))
    var dataDir: String?

    @Option(name: .long, help: "Hops a message may travel across the mesh, 1 to 32 (nodes farther away are out of reach).")
    var hopLimit: Int = 7

    @Option(name: .long, help: "Service type; only peers with the same one can connect.")
    var service: String = "meshchat"

    @Flag(name: .long, help: "Do not discover peers on the local network (connect by address only).")
    var noDiscovery = false

    @Flag(name: .long, help: "Do not invite found peers or accept invitations by yourself: use /invite, /accept and /decline.")
    var manual = false

    @Option(name: .long, help: ArgumentHelp("Announce KEY=VALUE to browsing peers (discoveryInfo); repeatable.", valueName: "KEY=VALUE"))
    var info: [String] = []

    @Option(name: .long, help: ArgumentHelp("Load place data (GeoJSON, gzipped or not, or CSV with lat/lon/name columns) to answer lookups from; repeatable.", valueName: "FILE"))
    var places: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where received files go, created with mode 0700 (default: $XDG_DOWNLOAD_DIR/meshchat or ~/Downloads/meshchat).", valueName: "DIR"))
    var downloads: String?

    @Flag(name: .long, help: "Print one JSON object per event on stdout.")
    var json = false

    @Flag(name: .long, help: "Keep running after standard input ends (for scripts and services).")
    var keepRunning = false

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        guard (1...32).contains(hopLimit) else {
            throw ValidationError("--hop-limit \(hopLimit) is out of range; use 1 to 32.")
        }
        guard (0...65535).contains(port) else {
            throw ValidationError("--port \(port) is not a port number; use 0 to 65535 (0 picks a free port).")
        }
        for address in connect {
            do {
                _ = try HostPort.parse(address)
            } catch {
                throw ValidationError("--connect \(error.message)")
            }
        }
        if let name, name.utf8.isEmpty || name.utf8.count > 63 {
            throw ValidationError("--name must be 1 to 63 bytes of UTF-8; \"\(name.prefix(70))\" is \(name.utf8.count) bytes.")
        }
        if let problem = MeshSession.ServiceType.problem(service) {
            throw ValidationError("--service \"\(service)\" is not a service type: \(problem) (use 1 to 15 lowercase letters, digits and hyphens).")
        }
        if noDiscovery && manual {
            throw ValidationError("--manual needs discovery; it cannot be combined with --no-discovery.")
        }
        do {
            try Advertisement.validate(try Self.discoveryInfo(info))
        } catch let error as DiscoveryError {
            throw ValidationError("--info: \(error.message).")
        }
    }

    /// `KEY=VALUE` options as a dictionary.
    static func discoveryInfo(_ pairs: [String]) throws -> [String: String] {
        var info: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "=") else {
                throw ValidationError("--info \"\(pair)\" is not KEY=VALUE.")
            }
            let key = String(pair[..<equals])
            guard info[key] == nil else { throw ValidationError("--info: key \"\(key)\" is given twice.") }
            info[key] = String(pair[pair.index(after: equals)...])
        }
        return info
    }

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "meshchat")

        let output = StandardOutput()
        // Both stdin and stdout are terminals (and no --json): the interactive terminal.
        let terminal = json ? nil : TerminalIO.standardStreams()
        let displayName = name ?? Self.defaultName()
        let front: ChatFront
        do {
            let directory = dataDir ?? Self.defaultDataDirectory()
            let me = try LocalPeer(displayName: displayName, dataDirectory: directory)
            let store = try MessageStore(path: directory + "/messages.sqlite")
            let local = try PlacesLoading.load(places, logger: logger)
            var configuration = Session.Configuration()
            configuration.placeSets = local.sets.map(\.info.payload)
            configuration.port = port
            configuration.serviceType = service
            configuration.routing.hopLimit = UInt8(hopLimit)
            let session = Session(peer: me, configuration: configuration, logger: logger)
            let messenger = Messenger(session: session, store: store, logger: logger)
            let placeService = PlaceService(session: session, store: store, local: local, logger: logger)
            let downloadsDirectory = downloads.map { ($0 as NSString).expandingTildeInPath }
                .map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
                ?? FileTransfers.defaultDownloads(environment: ProcessInfo.processInfo.environment)
            let files = FileTransfers(session: session, downloads: downloadsDirectory, logger: logger)
            let boundPort = try await session.start()
            var options = ChatFront.Options()
            options.json = json
            options.keepRunningAfterInput = keepRunning
            options.isTerminal = isatty(STDOUT_FILENO) == 1
            options.colour = ColourMode.detect(isTerminal: options.isTerminal, environment: ProcessInfo.processInfo.environment).isEnabled
            var size = winsize()
            if options.isTerminal, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
                options.mapSize = (width: min(Int(size.ws_col), 120), height: min(max(Int(size.ws_row) - 4, 10), 40))
            }
            let render: @Sendable (ChatOutput) -> Void = { [json] in
                if let terminal { terminal.show($0) } else if let line = ChatFront.render($0, json: json) { output.writeLine(line) }
            }
            var finder: PeerFinder?
            if !noDiscovery {
                let discoveryLogger = Logger(label: "meshchat.discovery")
                // One connection to avahi-daemon for both. Without a daemon the chat still runs
                // (--connect works) and says what to do.
                do {
                let backend = try AvahiDiscovery(logger: discoveryLogger)
                let advertiser = try NearbyServiceAdvertiser(peer: me.peerID, discoveryInfo: try Self.discoveryInfo(info),
                                                             serviceType: service, backend: backend, logger: discoveryLogger)
                let browser = try NearbyServiceBrowser(peer: me.peerID, serviceType: service, backend: backend, logger: discoveryLogger)
                finder = PeerFinder(session: session, advertiser: advertiser, browser: browser,
                                    mode: manual ? .manual : .automatic, logger: discoveryLogger, emit: render)
                } catch let error as DiscoveryError where error.code == .daemonNotRunning || error.code == .daemonFailure {
                    render(.error("discovery is off: \(error.message)"))
                }
            }
            front = ChatFront(session: session, messenger: messenger, places: placeService, options: options, finder: finder, files: files, logger: logger, show: render)
            front.emit(.ready(id: me.peerID.id.hex, name: me.peerID.displayName, port: boundPort))
            for address in connect {
                let (host, port) = try HostPort.parse(address)
                session.connect(host: host, port: port)
            }
        } catch {
            let message = "\(error)"
            if json {
                output.writeLine(JSONRenderer().render(.error(message)) ?? "")
            }
            logger.error("\(message)")
            throw ExitCode(1)
        }
        if let terminal {
            try await terminal.run { try await front.run(lines: $0) }
        } else {
            try await front.run(lines: StandardInputLines())
        }
    }

    static func defaultName() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        var name = host.isEmpty ? "meshchat" : host
        while name.utf8.count > 63 { name.removeLast() }
        return name
    }

    static func defaultDataDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/meshchat" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/meshchat"
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Lines of standard input, read on NIO's thread pool (reading a terminal or pipe blocks).
struct StandardInputLines: AsyncSequence, Sendable {
    typealias Element = String
    struct AsyncIterator: AsyncIteratorProtocol {
        mutating func next() async throws -> String? {
            try await NIOThreadPool.singleton.runIfActive { readLine(strippingNewline: true) }
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}

/// Writes whole lines to stdout, one writer at a time.
final class StandardOutput: @unchecked Sendable {
    // @unchecked: the lock guards every write.
    private let lock = NSLock()
    func writeLine(_ line: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}

// The program: `meshchat places …` is the place-data tool (PlacesCommand.swift); anything else
// is the chat, exactly as before. (Top-level code, not @main: this target has several files.)
if PlacesTool.handles(CommandLine.arguments.dropFirst()) {
    PlacesTool.main(Array(CommandLine.arguments.dropFirst()))
} else {
    await MeshChat.runChat()
}
