import Foundation
import Logging
import MeshSession

/// The line-mode chat loop: reads user lines, runs commands, and shows session events.
///
/// Input and output are injected (an async sequence of lines and a line writer), so tests drive it
/// without a terminal. Every output goes through ``emit(_:)``, which renders JSON (`--json`) or text.
/// When the input ends the front disconnects, unless `keepRunningAfterInput` is set.
public struct ChatFront: Sendable {
    /// Options of the front.
    public struct Options: Sendable {
        /// One JSON object per line instead of text.
        public var json = false
        /// Keep serving peers after the input ends (until the process is stopped).
        public var keepRunningAfterInput = false
        /// Creates the defaults.
        public init() {}
    }

    private let session: Session
    private let options: Options
    private let finder: PeerFinder?
    private let write: @Sendable (String) -> Void
    private let logger: Logger

    /// Creates a front.
    /// - Parameters:
    ///   - session: a started session.
    ///   - options: output options.
    ///   - finder: discovery, or `nil` without it (`--no-discovery`).
    ///   - logger: for diagnostics (stderr in the executable).
    ///   - write: writes one line of output (stdout in the executable).
    public init(session: Session, options: Options, finder: PeerFinder? = nil, logger: Logger,
                write: @escaping @Sendable (String) -> Void) {
        self.session = session
        self.finder = finder
        self.options = options
        self.logger = logger
        self.write = write
    }

    /// Shows one output.
    /// - Parameter output: what to show.
    public func emit(_ output: ChatOutput) {
        if let line = Self.render(output, json: options.json) { write(line) }
    }

    /// The line for an output: JSON (`--json`) or text; `nil` when the output has no line in that form.
    /// - Parameters:
    ///   - output: what to show.
    ///   - json: JSON or text.
    /// - Returns: the line without its newline.
    public static func render(_ output: ChatOutput, json: Bool) -> String? {
        json ? JSONRenderer().render(output) : TextRenderer().render(output)
    }

    /// Runs until `/quit`, the end of input, or the session ends.
    /// - Parameter lines: the user's lines.
    public func run<Lines: AsyncSequence & Sendable>(lines: Lines) async throws where Lines.Element == String {
        let session = self.session
        try await withThrowingTaskGroup(of: RunChild.self) { group in
            group.addTask {
                try await session.run()
                return .session
            }
            group.addTask {
                await self.showEvents()
                return .other
            }
            if let finder {
                group.addTask {
                    await finder.run()
                    return .other
                }
            }
            group.addTask {
                for try await line in lines {
                    if await self.handle(line) == .quit { break }
                }
                if !self.options.keepRunningAfterInput {
                    await session.disconnect()
                }
                return .other
            }
            // The session's run() ends after disconnect; then discovery (which runs until
            // cancelled) stops too.
            while let child = try await group.next() {
                if child == .session { group.cancelAll() }
            }
        }
    }

    /// Which child task of ``run(lines:)`` ended.
    private enum RunChild: Sendable { case session, other }

    private enum Outcome { case carryOn, quit }

    private func handle(_ line: String) async -> Outcome {
        let command: ChatCommand
        do {
            command = try ChatCommand.parse(line)
        } catch {
            emit(.error(error.message))
            return .carryOn
        }
        switch command {
        case .empty:
            break
        case .say(let text):
            let peers = session.connectedPeers
            guard !peers.isEmpty else {
                let hint = finder == nil ? "use --connect HOST:PORT or /connect" : "peers on this network connect by themselves; or use /connect HOST:PORT"
                emit(.error("no peers connected; nothing was sent (\(hint))"))
                break
            }
            do {
                let id = try await session.send(text: text, to: peers)
                emit(.sent(id: id, text: text, to: peers))
            } catch {
                emit(.error(error.message))
            }
        case .peers:
            let connected = session.connectedPeers
            var rows = connected.map {
                ChatOutput.PeerRow(id: $0.id.hex, name: $0.displayName, state: "connected", address: session.remoteAddress(of: $0))
            }
            let pending = Set(finder?.pendingInvitations ?? [])
            for (peer, address) in finder?.discovered ?? [] where !connected.contains(peer) {
                rows.append(ChatOutput.PeerRow(id: peer.id.hex, name: peer.displayName,
                                               state: pending.contains(peer) ? "invitedYou" : "found", address: address))
            }
            emit(.peers(rows))
        case .invite(let name):
            guard let finder else { emit(.error("discovery is off: use /connect HOST:PORT")); break }
            if let problem = finder.invite(name) { emit(.error(problem)) }
        case .accept(let name), .decline(let name):
            guard let finder else { emit(.error("discovery is off: there are no invitations")); break }
            var accept = false
            if case .accept = command { accept = true }
            if let problem = finder.answer(name, accept: accept) { emit(.error(problem)) }
        case .help(let topic):
            emit(.help(Self.helpText(topic)))
        case .connect(let host, let port):
            session.connect(host: host, port: port)
            emit(.notice("connecting to \(host):\(port)"))
        case .quit:
            await session.disconnect()
            return .quit
        }
        return .carryOn
    }

    private func showEvents() async {
        for await event in session.events {
            finder?.sessionEvent(event)
            switch event {
            case .peerChanged(let peer, let state):
                var reason: DisconnectReason?
                if case .notConnected(let why) = state { reason = why }
                emit(.peer(peer, state: state.description, address: session.remoteAddress(of: peer), reason: reason))
            case .received(let message):
                switch message.content {
                case .text(let text):
                    emit(.message(id: text.id, from: message.sender, text: text.text, sentAt: text.sentAt))
                case .data(let data):
                    emit(.data(from: message.sender, mode: message.mode, payload: data))
                }
            case .connectFailed(let address, let reason):
                emit(.connectFailed(address: address, reason: reason))
            case .invitationFailed(let peer, let failure):
                emit(.invitationFailed(peer, kind: failure.kind.rawValue, message: failure.message))
            case .reachabilityChanged, .receipt:
                break
            }
        }
    }

    /// The text of `/help` or `/help COMMAND`.
    /// - Parameter topic: a command name, or `nil` for the list.
    /// - Returns: the help text.
    public static func helpText(_ topic: String?) -> String {
        if let topic {
            let topic = ChatCommand.aliases[topic] ?? topic
            guard let entry = ChatCommand.usages.first(where: { $0.name == topic }) else {
                return "no command /\(topic); type /help for the list"
            }
            return "\(entry.usage)\n  \(entry.summary)"
        }
        let width = ChatCommand.usages.map(\.usage.count).max() ?? 0
        let lines = ChatCommand.usages.map { "  \($0.usage.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        return (["Type a line to send it to every connected peer (start it with // to send a leading /). Commands:"] + lines)
            .joined(separator: "\n")
    }
}

