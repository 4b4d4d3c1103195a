import ArgumentParser
import Foundation
import Logging
import MeshChatKit
import MeshDiscovery
import MeshChat
import Places
import MeshFiles

/// The options that start a node, shared by the chat and `meshchat send`: each is optional so
/// that a setting left out on the command line comes from the configuration file, and one left
/// out there too takes its default (``NodeSettings``).
struct NodeOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Read settings from FILE instead of $XDG_CONFIG_HOME/meshchat/config.toml (else ~/.config/meshchat/config.toml); options given here override the file's.",
        valueName: "FILE"))
    var config: String?

    @Option(name: .long, help: "Your display name: 1 to 63 bytes of UTF-8 (default: this machine's host name).")
    var name: String?

    @Option(name: .long, help: "TCP and UDP port to listen on; 0 (the default) picks a free port, which is printed.")
    var port: Int?

    @Option(name: .long, help: ArgumentHelp("Connect to a peer at HOST:PORT ([IPV6]:PORT), or to the node a connection code (meshchat:…, from its /code) names, and keep the link: dialled again whenever it is down (/disconnect HOST:PORT stops it); repeatable.", valueName: "HOST:PORT|CODE"))
    var connect: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "Where the key file, the message database and the input history live (default: $XDG_DATA_HOME/meshchat or ~/.local/share/meshchat); one process at a time.",
        valueName: "DIR"))
    var dataDir: String?

    @Option(name: .long, help: "Hops a message may travel across the mesh, 1 to 32 (default 7; nodes farther away are out of reach).")
    var hopLimit: Int?

    @Option(name: .long, help: "Service type; only peers with the same one can connect (default meshchat).")
    var service: String?

    @Flag(name: .long, inversion: .prefixedNo,
          help: "Discover peers on the local network through avahi-daemon (the default), or not (connect by address only).")
    var discovery: Bool?

    @Option(name: .long, help: ArgumentHelp("Load place data (GeoJSON, gzipped or not, or CSV with lat/lon/name columns) to answer lookups from; repeatable.", valueName: "FILE"))
    var places: [String] = []

    @Option(name: .long, help: "Log level on stderr (default: notice).")
    var logLevel: Logger.Level?

    func validate() throws {
        if let hopLimit, !(1...32).contains(hopLimit) {
            throw ValidationError("--hop-limit \(hopLimit) is out of range; use 1 to 32.")
        }
        if let port, !(0...65535).contains(port) {
            throw ValidationError("--port \(port) is not a port number; use 0 to 65535 (0 picks a free port).")
        }
        for address in connect {
            do {
                _ = try PeerAddress.parse(address)
            } catch {
                throw ValidationError("--connect \(error.message)")
            }
        }
        if let name, name.utf8.isEmpty || name.utf8.count > 63 {
            throw ValidationError("--name must be 1 to 63 bytes of UTF-8; \"\(name.prefix(70))\" is \(name.utf8.count) bytes.")
        }
        if let service, let problem = ServiceType.problem(service) {
            throw ValidationError("--service \"\(service)\" is not a service type: \(problem) (use 1 to 15 lowercase letters, digits and hyphens).")
        }
    }

    /// What the command line sets.
    var commandLine: ChatSettings {
        var settings = ChatSettings()
        settings.name = name
        settings.port = port
        settings.connect = connect.isEmpty ? nil : connect
        settings.dataDirectory = dataDir
        settings.hopLimit = hopLimit
        settings.service = service
        settings.discovery = discovery
        settings.places = places.isEmpty ? nil : places
        settings.logLevel = logLevel
        return settings
    }

    /// The settings in force: the command line over the configuration file over the defaults.
    /// - Parameter extra: settings of the command's own options (the chat's `--manual`, `--info`).
    /// - Returns: the settings.
    /// - Throws: ``ConfigFileError`` for a configuration file that cannot be used;
    ///   `ValidationError` for a combination that makes no sense.
    func resolve(adding extra: ChatSettings = ChatSettings()) throws -> NodeSettings {
        let file = try ConfigFile.load(path: config, environment: ProcessInfo.processInfo.environment)
        var flags = commandLine
        flags.manual = extra.manual
        flags.info = extra.info
        flags.downloads = extra.downloads
        flags.maxFileSize = extra.maxFileSize
        return try NodeSettings(flags.overriding(file))
    }
}

/// Every setting of a node, with the defaults filled in.
struct NodeSettings: Sendable {
    var name: String
    var port: Int
    var connect: [PeerAddress]
    var dataDirectory: String
    var hopLimit: Int
    var service: String
    var discovery: Bool
    var manual: Bool
    var info: [String: String]
    var places: [String]
    var location: Places.Coordinate?
    var logLevel: Logger.Level
    /// The level was asked for (`--log-level`, `log_level`): an interactive terminal shows log lines only then.
    var logLevelAsked: Bool
    /// Where received files go (the chat's `--downloads`, or the file's `downloads`).
    var downloads: String
    /// The largest file accepted from a peer (the chat's `--max-file-size`, or the file's `max_file_size`).
    var maxFileSize: UInt64
    /// What calls the user (the file's `bell` and `mentions`).
    var attention: Attention
    /// How peers coming and going are shown in text (the file's `presence`).
    var presence: PresenceMode

    /// Fills in the defaults.
    /// - Parameter settings: the layered settings (every value already validated).
    /// - Throws: `ValidationError` for `--manual` without discovery.
    init(_ settings: ChatSettings) throws {
        name = settings.name ?? Self.defaultName()
        port = settings.port ?? 0
        connect = try (settings.connect ?? []).map { try PeerAddress.parse($0) }
        dataDirectory = settings.dataDirectory ?? Self.defaultDataDirectory()
        hopLimit = settings.hopLimit ?? 7
        service = settings.service ?? "meshchat"
        discovery = settings.discovery ?? true
        manual = settings.manual ?? false
        info = settings.info ?? [:]
        places = settings.places ?? []
        location = settings.location
        logLevel = settings.logLevel ?? .notice
        logLevelAsked = settings.logLevel != nil
        downloads = settings.downloads ?? FileTransfers.defaultDownloads(environment: ProcessInfo.processInfo.environment)
        maxFileSize = settings.maxFileSize ?? FileTransferLimits.defaultMaxFileSize
        attention = Attention(bell: settings.bell ?? true, words: settings.mentions ?? [])
        presence = settings.presence ?? .summary
        if manual && !discovery {
            throw ValidationError("--manual needs discovery; it cannot be combined with --no-discovery (or discovery = false in the configuration file).")
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
