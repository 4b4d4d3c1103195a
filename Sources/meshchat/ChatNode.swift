import Foundation
import Logging
import MeshChatKit
import MeshDiscovery
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import MeshFiles
import Synchronization

/// A node started from the settings, the same way for the chat and for `meshchat send`: the
/// data directory's lock first, then the identity, the message store, the place data, the
/// session (listening) with its messenger and place service.
struct ChatNode: Sendable {
    let settings: NodeSettings
    /// Held as long as the node: no other process runs from the data directory meanwhile.
    let lock: DataDirectoryLock
    let me: LocalPeer
    let store: MessageStore
    let session: Session
    let messenger: Messenger
    let places: PlaceService
    /// The port the session listens on.
    let port: Int

    /// Sends log lines at `level` and above to stderr (once per process); with an interactive
    /// `terminal`, each line is written above the input line, which is drawn again after it, and
    /// when no level was `asked` for only errors are, as chat errors (``TerminalLogHandler/quiet``).
    static func bootstrapLogging(level: Logger.Level, asked: Bool = true, terminal: TerminalIO? = nil) {
        LoggingSystem.bootstrap { label in
            if let terminal { return TerminalLogHandler(label: label, terminal: terminal, level: level, quiet: !asked) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// Starts a node; the session listens when this returns (run it with ``Session/run()``).
    /// - Parameters:
    ///   - settings: the settings in force.
    ///   - logger: for the node's diagnostics.
    /// - Throws: ``DataDirectoryLock/Failure`` when another process runs from the data directory,
    ///   and the errors of the identity, the store, the place data and the listener.
    static func start(_ settings: NodeSettings, logger: Logger) async throws -> ChatNode {
        let directory = settings.dataDirectory
        let lock = try DataDirectoryLock(directory: directory)
        let me = try LocalPeer(displayName: settings.name, dataDirectory: directory)
        let store = try MessageStore(path: directory + "/messages.sqlite")
        let local = try PlacesLoading.load(settings.places, logger: logger)
        var configuration = Session.Configuration()
        // `/send` is a resource (PROTOCOL.md §16); the chat answers each offer (FileTransfers).
        configuration.resources.acceptPolicy = FileTransfers.acceptPolicy
        configuration.resources.maxIncomingSize = settings.maxFileSize
        configuration.resources.maxIncomingPerPeer = FileTransferLimits.maxTransfersPerPeer
        configuration.resources.maxIncoming = FileTransferLimits.maxIncomingTransfers
        configuration.port = settings.port
        configuration.serviceType = settings.service
        configuration.routing.hopLimit = UInt8(settings.hopLimit)
        let session = Session(peer: me, configuration: configuration, logger: logger)
        let messenger = try Messenger(session: session, store: store, logger: logger)
        let places = try PlaceService(session: session, store: store, local: local, defaultHere: settings.location, logger: logger)
        await places.advertise()
        let port = try await session.start()
        return ChatNode(settings: settings, lock: lock, me: me, store: store, session: session, messenger: messenger,
                        places: places, port: port)
    }

    /// Starts a node for a command without a chat front (`send`, `relay`), with discovery in
    /// automatic mode (when on) whose notices go to the log.
    /// - Parameters:
    ///   - settings: the settings in force.
    ///   - logger: for the node's diagnostics.
    /// - Returns: the node and its finder.
    /// - Throws: what ``start(_:logger:)`` and ``finder(mode:render:)`` throw.
    static func startHeadless(_ settings: NodeSettings, logger: Logger) async throws -> (ChatNode, PeerFinder?) {
        let node = try await start(settings, logger: logger)
        let finder = try node.finder(mode: .automatic) { output in
            if case .error(let message) = output { logger.notice("\(message)") }
        }
        return (node, finder)
    }

    /// Discovery through avahi-daemon (one connection for the advertiser and the browser), or
    /// `nil` when it is off. Without a daemon the node still runs (`--connect` works) and
    /// `render` is told what to do.
    /// - Parameters:
    ///   - mode: automatic or manual invitations.
    ///   - render: shows the finder's outputs.
    func finder(mode: PeerFinder.Mode, render: @escaping @Sendable (ChatOutput) -> Void) throws -> PeerFinder? {
        guard settings.discovery else { return nil }
        let discoveryLogger = Logger(label: "meshchat.discovery")
        do {
            let backend = try AvahiDiscovery(logger: discoveryLogger)
            let advertiser = try NearbyServiceAdvertiser(peer: me.peerID, discoveryInfo: settings.info,
                                                         serviceType: settings.service, backend: backend, logger: discoveryLogger)
            let browser = try NearbyServiceBrowser(peer: me.peerID, serviceType: settings.service, backend: backend, logger: discoveryLogger)
            return PeerFinder(session: session, advertiser: advertiser, browser: browser, mode: mode, logger: discoveryLogger, emit: render)
        } catch {
            // Every throw above is a DiscoveryError (typed throws).
            guard error.code == .daemonNotRunning || error.code == .daemonFailure else { throw error }
            render(.error("discovery is off: \(error.message)"))
            return nil
        }
    }

    /// Dials every `--connect` address, and keeps the links (redialled whenever they are down).
    func connectToGivenPeers() {
        for address in settings.connect {
            address.keep(in: session)
        }
    }
}

/// The chat front, once made, for outputs of parts made before it (discovery).
final class FrontSlot: Sendable {
    private let slot = Mutex<ChatFront?>(nil)

    /// The front; set once it exists.
    var front: ChatFront? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }

    /// Shows an output through the front, or with `fallback` before the front exists.
    func emit(_ output: ChatOutput, else fallback: @Sendable (ChatOutput) -> Void) {
        if let front { front.emit(output) } else { fallback(output) }
    }
}
