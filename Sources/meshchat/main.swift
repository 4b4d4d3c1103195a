import ArgumentParser
import Foundation
import Logging
import MeshChatKit
import MeshDiscovery
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import MeshTransport
import NIOPosix
import MeshFiles

/// `meshchat`: peer-to-peer encrypted chat for the terminal and for scripts.
struct MeshChat: AsyncParsableCommand {
    /// The chat's command; with the other roots' commands as subcommands while a shell completion
    /// script is generated (``CompletionScripts``).
    static var configuration: CommandConfiguration { CommandConfiguration(
        commandName: "meshchat",
        abstract: "Peer-to-peer encrypted chat between Linux machines, no server needed (meshchat \(MeshChatVersion.current)).",
        discussion: """
            Type a line to send it to the conversation you look at (the prompt names it: [mesh] everyone, \
            [#room], [@peer] after /query @peer), /msg @NAME TEXT for one peer (end-to-end \
            encrypted, relayed by other peers, kept until delivered); /window N, Alt-1…9 and /switch change \
            conversation; /help lists the commands. With --json every \
            event is one JSON object per line on stdout (README.md documents them); logs go to stderr.
            Settings may also come from a TOML configuration file, $XDG_CONFIG_HOME/meshchat/config.toml \
            (else ~/.config/meshchat/config.toml) or --config FILE: keys name, port, connect, data_dir, hop_limit, \
            service, discovery, manual, info, places, location (LAT,LON: your location until /here sets one), \
            downloads, max_file_size, log_level, bell (a mention or private line rings the bell), mentions (words \
            besides your name that mention you), presence (summary: a burst of peers coming and going is one line; all; none). Options on the command line override the file.
            Exit status: 0 after /quit or the end of input; 1 when the chat cannot start (a port in use, \
            an unreadable key file, another meshchat running with the same data directory); 64 for a bad \
            command line; 74 when standard output closed while it ran (it stopped as /quit does); 78 for a bad \
            configuration file (the message names the file, line and key).
            Scripts beside the chat: a running chat serves a control socket, DATA-DIR/control (mode 0600, \
            one JSON request per line; README.md documents it), which meshchat send uses.
            An always-on relay node without a terminal: meshchat relay --help.
            One line from a script: meshchat send --help. A new identity key that peers accept as yours: meshchat rotate-key --help. Offline place data for scripts: meshchat places query --help.
            """,
        version: MeshChatVersion.current,
        subcommands: CompletionScripts.subcommands)
    }

    /// Runs the chat: ``main()`` (an async context picks the async `main`, not ParsableCommand's).
    static func runChat() async { await main() }

    /// Runs tasks on SwiftNIO's loop threads (no hops between sockets and tasks), keeps freed heap
    /// memory for reuse (large messages), then the command.
    static func main() async {
        EventLoops.installAsConcurrencyExecutor()
        HeapTuning.keepFreedMemoryForReuse()
        await main(nil)
    }

    @OptionGroup var node: NodeOptions

    @Flag(name: .long, inversion: .prefixedNo,
          help: "Invite found peers and answer invitations only by hand, with /invite, /accept and /decline (--no-manual: by themselves, the default).")
    var manual: Bool?

    @Option(name: .long, help: ArgumentHelp("Announce KEY=VALUE to browsing peers (discoveryInfo); repeatable.", valueName: "KEY=VALUE"))
    var info: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where received files go, created with mode 0700 (default: $XDG_DOWNLOAD_DIR/meshchat or ~/Downloads/meshchat).", valueName: "DIR"))
    var downloads: String?

    @Option(name: .long, help: ArgumentHelp("The largest file accepted from a peer: bytes, or with a unit K, M, G (KiB, MiB, GiB), at most 16 GiB (default 1 GiB); offers over it are refused with tooLarge. Files you send are bounded by the receiver's limit.", valueName: "SIZE"))
    var maxFileSize: String?

    @Flag(name: .long, help: "Print one JSON object per event on stdout.")
    var json = false

    @Flag(name: .long, help: "Keep running after standard input ends (for scripts and services).")
    var keepRunning = false

    func validate() throws {
        if node.discovery == false && manual == true {
            throw ValidationError("--manual needs discovery; it cannot be combined with --no-discovery.")
        }
        if let maxFileSize, FileTransferLimits.size(parsing: maxFileSize) == nil {
            throw ValidationError("--max-file-size \"\(maxFileSize.prefix(40))\" is not a size; use 1 byte to 16 GiB, e.g. 4GiB or 500MiB.")
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
        let output = StandardOutput()
        let settings: NodeSettings
        do {
            var extra = ChatSettings()
            extra.manual = manual
            extra.info = info.isEmpty ? nil : try Self.discoveryInfo(info)
            extra.downloads = downloads.map { ChatFront.resolve($0) }
            extra.maxFileSize = maxFileSize.flatMap(FileTransferLimits.size(parsing:))
            settings = try node.resolve(adding: extra)
        } catch let error as ConfigFileError {
            if json { output.writeLine(JSONRenderer().render(.error("\(error)")) ?? "") }
            StandardStreams.write("meshchat: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(ExitStatus.badConfiguration)
        }
        // Both stdin and stdout are terminals (and no --json): the interactive terminal, whose
        // input line log lines keep clear of.
        let terminal = json ? nil : TerminalIO.standardStreams()
        ChatNode.bootstrapLogging(level: settings.logLevel, asked: settings.logLevelAsked, terminal: terminal)
        let logger = Logger(label: "meshchat")

        let front: ChatFront
        // Held until the chat ends: the node's data directory lock lives as long as it does.
        let node: ChatNode
        let control: ControlService?
        do {
            node = try await ChatNode.start(settings, logger: logger)
            var options = ChatFront.Options()
            options.json = json
            options.keepRunningAfterInput = keepRunning
            options.isTerminal = isatty(STDOUT_FILENO) == 1
            options.attention = settings.attention
            options.presence = settings.presence
            options.invitesByHand = settings.manual
            // Conversations in buffers of their own: the interactive terminal only (JSON and
            // text to a pipe show every line in order).
            options.buffers = terminal != nil
            options.resizes = terminal?.resizes
            options.colour = ColourMode.detect(isTerminal: options.isTerminal, environment: ProcessInfo.processInfo.environment).isEnabled
            if options.isTerminal {
                // Asked at each /map, so the picture follows a resize.
                options.screenSize = {
                    var size = winsize()
                    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
                    return (columns: Int(size.ws_col), rows: Int(size.ws_row))
                }
                if let screen = options.screenSize?() { options.mapSize = MapView.size(forScreen: screen) }
            }
            let render: @Sendable (ChatOutput) -> Void = { [json] in
                if let terminal { terminal.show($0) } else if let line = ChatFront.render($0, json: json) { output.writeLine(line) }
            }
            // Discovery's lines go through the front (its buffers, the presence summary) once it exists.
            let slot = FrontSlot()
            let finder = try node.finder(mode: settings.manual ? .manual : .automatic) { slot.emit($0, else: render) }
            let files = FileTransfers(session: node.session, downloads: settings.downloads, maxFileSize: settings.maxFileSize,
                                      logger: logger)
            front = ChatFront(session: node.session, messenger: node.messenger, places: node.places, options: options, finder: finder,
                              files: files, logger: logger, show: render)
            slot.front = front
            // Scripts send as you through the data directory's control socket while the chat runs
            // (there before `ready`, so a script that waits for `ready` finds it).
            control = await ControlService.start(front: front, directory: settings.dataDirectory, logger: logger)
            front.emit(.ready(id: node.me.peerID.id.hex, name: node.me.peerID.displayName, port: node.port))
            node.connectToGivenPeers()
            if let terminal, let problem = terminal.keepHistory(in: settings.dataDirectory) {
                render(.error(problem))
            }
        } catch {
            let message = "\(error)"
            if json {
                output.writeLine(JSONRenderer().render(.error(message)) ?? "")
            }
            logger.error("\(message)")
            throw ExitCode(1)
        }
        defer { withExtendedLifetime(node) {} }
        // A reader of our output that went away (`meshchat --json | head -n 3`): stop as /quit
        // does (goodbyes sent; every accepted line is already on disk) and exit with EX_IOERR,
        // since standard input may still be open and its read cannot be interrupted.
        let service: ControlService? = control
        output.whenClosed { reason in
            Task {
                logger.notice("standard output closed (\(reason)); stopping")
                await front.quit()
                await service?.stop()
                Foundation.exit(ExitStatus.outputClosed)
            }
        }
        do {
            if let terminal {
                try await terminal.run { try await front.run(lines: $0) }
            } else {
                try await front.run(lines: StandardInputLines())
            }
        } catch {
            await control?.stop()
            throw error
        }
        await control?.stop()
    }
}

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

/// Writes whole lines to stdout, one writer at a time. When stdout is closed (its reader went
/// away, or `>&-`), nothing more is written and ``whenClosed(_:)``'s action runs once.
final class StandardOutput: @unchecked Sendable {
    // @unchecked: the lock guards every write and both fields.
    private let lock = NSLock()
    private var closed = false
    private var onClosed: (@Sendable (_ reason: String) -> Void)?

    /// Writes one line and its newline.
    func writeLine(_ line: String) {
        let failure: (action: (@Sendable (String) -> Void)?, errno: Int32)? = lock.withLock {
            guard !closed, !StandardStreams.write(line + "\n", to: STDOUT_FILENO) else { return nil }
            closed = true
            return (onClosed, errno)
        }
        if let failure { failure.action?(String(cString: strerror(failure.errno))) }
    }

    /// Sets what to do when a write finds stdout closed (at once when one already did).
    func whenClosed(_ action: @escaping @Sendable (_ reason: String) -> Void) {
        let already = lock.withLock {
            onClosed = action
            return closed
        }
        if already { action("closed before the chat started") }
    }
}

// The program: `meshchat places …` is the place-data tool (PlacesCommand.swift), `meshchat send …`
// the one-shot sender (SendCommand.swift), `meshchat rotate-key` replaces the key (RotateKeyCommand.swift), `meshchat relay` the headless relay (RelayCommand.swift); anything else is the chat. (Separate roots, so that the
// chat's options never capture a subcommand's: ArgumentParser lets a parent's options follow a
// subcommand's name.) (Top-level code, not @main: this target has several files.)
if PlacesTool.handles(CommandLine.arguments.dropFirst()) {
    PlacesTool.main(Array(CommandLine.arguments.dropFirst()))
} else if RotateKeyTool.handles(CommandLine.arguments.dropFirst()) {
    RotateKeyTool.main(Array(CommandLine.arguments.dropFirst()))
} else if SendTool.handles(CommandLine.arguments.dropFirst()) {
    await SendTool.runOnLoops()
} else if RelayTool.handles(CommandLine.arguments.dropFirst()) {
    await RelayTool.runOnLoops()
} else {
    await MeshChat.runChat()
}
