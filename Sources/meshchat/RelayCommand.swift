import ArgumentParser
import Dispatch
import Foundation
import Logging
import MeshChatKit
import MeshChat
import MeshSession
import MeshStore
import MeshTransport

/// The root of `meshchat relay …`.
struct RelayTool: SubcommandRoot {
    static let subcommandName = "relay"
    static let configuration = CommandConfiguration.root(
        abstract: "Peer-to-peer encrypted chat between Linux machines; `relay` runs an always-on relay node.", subcommand: RelayCommand.self)
}

/// `meshchat relay`: a headless node that keeps serving (routes, relays, holds its own lines)
/// until SIGTERM or SIGINT, without a terminal or standard input; logs go to stderr (the journal
/// under systemd).
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Run an always-on relay node: no terminal, no input; logs on stderr; SIGTERM stops it.",
        discussion: """
            Starts a node as the chat does (same data directory, identity, discovery, --connect, --service and \
            configuration file) and serves the mesh: it relays lines, files and routes between peers that reach \
            each other only through it, and keeps lines sent to it in its history. It reads no input and needs \
            no terminal; it logs to stderr (with systemd: the journal; scripts/install writes a user unit). \
            SIGTERM or SIGINT says goodbye to every peer and exits with status 0.
            Exit status: 0 after SIGTERM or SIGINT; 1 the node cannot start (a port in use, another meshchat \
            running with the same data directory); 64 a bad command line; 78 a bad configuration file.
            """)

    @OptionGroup var node: NodeOptions

    func run() async throws {
        let settings: NodeSettings
        do {
            settings = try node.resolve()
        } catch let error as ConfigFileError {
            StandardStreams.write("meshchat relay: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(ExitStatus.badConfiguration)
        }
        ChatNode.bootstrapLogging(level: settings.logLevel)
        let logger = Logger(label: "meshchat.relay")
        let chatNode: ChatNode
        let finder: PeerFinder?
        do {
            (chatNode, finder) = try await ChatNode.startHeadless(settings, logger: logger)
        } catch {
            logger.error("\(error)")
            throw ExitCode(ExitStatus.cannotStart)
        }
        // One line a supervisor can wait for (stderr: stdout is not the journal's business).
        logger.notice("relay ready", metadata: ["node.id": "\(chatNode.me.peerID.id.hex)", "node.port": "\(chatNode.port)",
                                                 "node.name": "\(chatNode.me.peerID.displayName)"])
        chatNode.connectToGivenPeers()
        let stops = Self.stopSignals { signal in
            logger.notice("stopping", metadata: ["signal": "\(signal)"])
            Task { await chatNode.session.disconnect() }
        }
        await Self.serve(chatNode, finder: finder, logger: logger)
        withExtendedLifetime((chatNode, stops)) {}
    }

    /// Runs the node until its session ends (after ``Session/disconnect()``).
    private static func serve(_ node: ChatNode, finder: PeerFinder?, logger: Logger) async {
        let (session, messenger) = (node.session, node.messenger)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do { try await session.run() } catch { logger.error("\(error)") }
                return true
            }
            group.addTask {
                await messenger.run()
                return false
            }
            if let finder {
                group.addTask {
                    await finder.run()
                    return false
                }
            }
            group.addTask {
                for await event in messenger.events {
                    switch event {
                    case .session(let event):
                        finder?.sessionEvent(event)
                        if case .peerChanged(let peer, let state) = event {
                            logger.info("peer \(state)", metadata: ["peer.id": "\(peer.id.shortHex)", "peer.name": "\(peer.displayName)"])
                        }
                    case .message(let message):
                        logger.info("a line for this node", metadata: ["message.id": "\(message.id)"])
                    case .failure(let text):
                        logger.warning("\(text)")
                    case .status:
                        break
                    }
                }
                return false
            }
            while let sessionEnded = await group.next() {
                if sessionEnded { group.cancelAll() }
            }
        }
    }

    /// Calls `stop` (once per signal) on SIGTERM and SIGINT instead of dying at once.
    /// - Returns: the signal sources; keep them as long as the handler should run.
    private static func stopSignals(_ stop: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop(number) }
            source.resume()
            return source
        }
    }
}
