import ArgumentParser
import Foundation
import Logging
import MeshChatKit
import MeshChat
import MeshFiles
import MeshSession
import MeshStore
import MeshTransport

/// The exit statuses of `meshchat` and `meshchat send` (sysexits.h numbers where one fits).
enum ExitStatus {
    /// Delivered (send), or the chat ended normally.
    static let ok: Int32 = 0
    /// The node could not start: a port in use, an unreadable key file, the data directory in use.
    static let cannotStart: Int32 = 1
    /// A bad command line (ArgumentParser's own code for validation errors; EX_USAGE).
    static let usage: Int32 = 64
    /// `send`: no peer or several peers go by that name (EX_NOUSER); nothing was stored.
    static let unknownPeer: Int32 = 67
    /// `send`: no receipt (or, without `--to`, no connected peer) within the timeout; the line
    /// stays in the outbox (EX_TEMPFAIL).
    static let timedOut: Int32 = 75
    /// The chat: standard output was closed while it ran (its reader went away; EX_IOERR). The
    /// chat stopped as after `/quit`. `places`: its answer could not be written.
    static let outputClosed: Int32 = 74
    /// A configuration file that cannot be used (EX_CONFIG).
    static let badConfiguration: Int32 = 78
}

/// A root command for one subcommand (`meshchat send …`, `meshchat relay …`): `main.swift` hands
/// it the command line when the first argument is its ``subcommandName``, so the chat's own
/// options never take the subcommand's.
protocol SubcommandRoot: AsyncParsableCommand {
    /// The first argument that selects this root.
    static var subcommandName: String { get }
}

extension SubcommandRoot {
    /// Whether a command line (arguments after the program name) is for this root.
    /// - Parameter arguments: `CommandLine.arguments.dropFirst()`.
    /// - Returns: Whether the first argument is ``subcommandName``.
    static func handles(_ arguments: some Collection<String>) -> Bool {
        arguments.first == subcommandName
    }

    /// Runs the command line on SwiftNIO's loop threads, keeping freed heap memory for reuse, as
    /// the chat runs.
    static func runOnLoops() async {
        EventLoops.installAsConcurrencyExecutor()
        HeapTuning.keepFreedMemoryForReuse()
        await main(Array(CommandLine.arguments.dropFirst()))
    }
}

extension CommandConfiguration {
    /// The configuration of a ``SubcommandRoot``: named `meshchat`, with the version.
    static func root(abstract: String, subcommand: any ParsableCommand.Type) -> CommandConfiguration {
        CommandConfiguration(commandName: "meshchat", abstract: abstract, version: MeshChatVersion.current, subcommands: [subcommand])
    }
}

/// The root of `meshchat send …`.
struct SendTool: SubcommandRoot {
    static let subcommandName = "send"
    static let configuration = CommandConfiguration.root(
        abstract: "Peer-to-peer encrypted chat between Linux machines; `send` sends one line from a script.", subcommand: SendCommand.self)
}

/// `meshchat send`: starts a node exactly as the chat does, sends one line, and exits with a
/// status that says what became of it.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one line from a script, wait for its delivery, and exit.",
        discussion: """
            When a chat runs with the same data directory, the line goes through that chat (its control socket, \
            DATA-DIR/control): it is sent from the chat's node, shown in the chat, and the command exits 0 once the \
            chat has it on disk (status sent or queued: the chat delivers it); --to may then also name a joined \
            #room, and without --to the line goes where the chat's typed lines go (the peer of /query, else the \
            active room, else everyone); --connect and discovery options are not used. Otherwise it \
            starts a node as the chat does (same data directory, identity, message store, discovery, \
            --connect, --service and configuration file), waits until the peer given with --to is reachable \
            (a display name or an id prefix, as /msg takes it), writes the line to the outbox on disk, sends it \
            end-to-end encrypted and waits for the peer's delivery receipt. Without --to the line goes to everyone \
            in the mesh and is done once it went to at least one connected peer (broadcasts have no receipts).
            Exit status: 0 delivered (without --to: sent); 67 no peer, or several, go by that name (nothing is \
            stored); 75 the timeout passed first: the line stays in the outbox of the data directory and goes out \
            the next time meshchat runs with it (the chat, or another send), so do not send it again; 64 a bad \
            command line; 78 a bad configuration file; 1 the node cannot start (a port in use, another meshchat \
            send running with the same data directory) or the chat refused the line.
            """)

    /// The longest `--timeout`: one day.
    static let maxTimeout = 86_400.0

    @OptionGroup var node: NodeOptions

    @Option(name: .long, help: ArgumentHelp(
        "The peer: a display name or an id prefix, @ optional (as /msg takes it). Without --to the line goes to everyone in the mesh.",
        valueName: "@NAME"))
    var to: String?

    @Option(name: .long, help: ArgumentHelp(
        "Seconds to wait for the peer and its receipt (without --to: for a connected peer), more than 0 and at most 86400 (default 30).",
        valueName: "SECONDS"))
    var timeout: Double = 30

    @Flag(name: .long, help: "Print the result as one JSON object on stdout instead of a sentence.")
    var json = false

    @Argument(help: ArgumentHelp("The line to send: 1 to \(ChatLimits.maxLineBytes) bytes of UTF-8 (put -- before a line that starts with -).", valueName: "TEXT"))
    var text: String

    func validate() throws {
        guard timeout > 0, timeout <= Self.maxTimeout, timeout.isFinite else {
            throw ValidationError("--timeout \(timeout) is out of range; use more than 0 and at most \(Int(Self.maxTimeout)) seconds.")
        }
        if let to, to.trimmingPrefix("@").isEmpty || to.contains(" ") {
            throw ValidationError("--to \"\(to)\" is not a peer; give one display name or id prefix, e.g. --to @bob.")
        }
        guard !text.isEmpty, text.utf8.count <= ChatLimits.maxLineBytes else {
            throw ValidationError("the line is \(text.utf8.count) bytes; send 1 to \(ChatLimits.maxLineBytes) bytes.")
        }
    }

    func run() async throws {
        let settings: NodeSettings
        do {
            settings = try node.resolve()
        } catch let error as ConfigFileError {
            finish(SendReport.failure("\(error)", status: ExitStatus.badConfiguration))
        }
        ChatNode.bootstrapLogging(level: settings.logLevel)
        let logger = Logger(label: "meshchat.send")
        let chatNode: ChatNode
        let finder: PeerFinder?
        do {
            (chatNode, finder) = try await ChatNode.startHeadless(settings, logger: logger)
        } catch let error as DataDirectoryLock.Failure where error.isHeld {
            // A chat runs from the data directory: it sends the line, through its control socket.
            finish(await ChatControlSend(directory: settings.dataDirectory, target: to, text: text, timeout: timeout).run(held: error))
        } catch {
            finish(SendReport.failure("\(error)", status: ExitStatus.cannotStart))
        }
        chatNode.connectToGivenPeers()
        let delivery = OneShotDelivery(node: chatNode, finder: finder, target: to.map { $0.trimmingPrefix("@") }, text: text,
                                       timeout: .milliseconds(Int64((timeout * 1000).rounded())), logger: logger)
        let report = await delivery.run()
        withExtendedLifetime(chatNode) {}  // the data directory stays locked until the end
        finish(report)
    }

    /// Prints the report (stdout; a failure's sentence on stderr too when not JSON) and exits with its status.
    private func finish(_ report: SendReport) -> Never {
        if json {
            StandardOutput().writeLine(report.json.serialized)
        } else if report.status == ExitStatus.ok {
            StandardOutput().writeLine(report.sentence)
        } else {
            StandardStreams.write("meshchat send: \(report.sentence)\n", to: STDERR_FILENO)
        }
        Foundation.exit(report.status)
    }
}

extension String {
    /// Without `prefix` at the start.
    func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
