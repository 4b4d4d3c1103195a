import Foundation
import Logging
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import MeshFiles

/// The line-mode chat loop: reads user lines, runs commands, and shows session events.
///
/// Input and output are injected (an async sequence of lines, and a line writer or an output
/// handler), so tests drive it without a terminal. Every output goes through ``emit(_:)``: with a
/// line writer it is rendered as JSON (`--json`) or text; an output handler such as
/// ``TerminalIO/show(_:)`` renders it itself. When the input ends the front disconnects, unless
/// `keepRunningAfterInput` is set.
public struct ChatFront: Sendable {
    /// Options of the front.
    public struct Options: Sendable {
        /// One JSON object per line instead of text.
        public var json = false
        /// Keep serving peers after the input ends (until the process is stopped).
        public var keepRunningAfterInput = false
        /// Stdout is a terminal: `/map` draws a picture (else it lists what it would show).
        public var isTerminal = false
        /// Colour may be used (`/map`'s picture): stdout is a terminal and `NO_COLOR` is not set
        /// (see ``ColourMode/detect(isTerminal:environment:)``).
        public var colour = false
        /// The size of `/map`'s picture in terminal cells (the executable uses the terminal's size).
        public var mapSize = (width: 60, height: 20)
        /// The terminal's size now (columns, rows), asked at each `/map` so that it follows a
        /// resize; `nil`: use ``mapSize``.
        public var screenSize: (@Sendable () -> (columns: Int, rows: Int)?)?
        /// Lines of a conversation not looked at stay in its buffer (counted in the status line)
        /// instead of being shown: the interactive terminal. Off, every output is shown in order
        /// (`--json`, text to a pipe).
        public var buffers = false
        /// What calls the user: mention words and the bell (the configuration's `bell`, `mentions`).
        public var attention = Attention()
        /// How peers coming and going are shown in text (the configuration's `presence`); `--json` shows every change.
        public var presence = PresenceMode.summary
        /// Invitations go out by `/invite` only (`--manual`): "inviting bob" answers a command, never summarised.
        public var invitesByHand = false
        /// The terminal's resizes (``TerminalIO/resizes``): each draws the conversation looked at
        /// again for the new size (``redrawForResize()``); `nil` without a terminal.
        public var resizes: AsyncStream<Void>?
        /// Creates the defaults.
        public init() {}
    }

    let session: Session
    let messenger: Messenger
    let places: PlaceService
    let memory = FrontMemory()
    private let book = PeerBook()
    /// Which key holds each name, and who is verified (PROTOCOL.md §20.3), kept in the store.
    let trust = TrustBook()
    /// Opened once ``run(lines:)`` has loaded the name book and the blocked peers: control
    /// requests wait for it (``control(_:)``).
    let loaded = Latch()
    let options: Options
    let finder: PeerFinder?
    let files: FileTransfers?
    private let show: @Sendable (ChatOutput) -> Void
    private let logger: Logger

    /// Creates a front that writes each output as one line of JSON (`options.json`) or text.
    /// - Parameters:
    ///   - session: a started session.
    ///   - messenger: the outbox, receipts and history over that session (it owns the session's events).
    ///   - places: place lookups and pins over that session.
    ///   - options: output options.
    ///   - finder: discovery, or `nil` without it (`--no-discovery`).
    ///   - files: file transfer (`/send`), or `nil` without it.
    ///   - logger: for diagnostics (stderr in the executable).
    ///   - write: writes one line of output (stdout in the executable).
    public init(session: Session, messenger: Messenger, places: PlaceService, options: Options, finder: PeerFinder? = nil, files: FileTransfers? = nil, logger: Logger,
                write: @escaping @Sendable (String) -> Void) {
        let json = options.json
        self.init(session: session, messenger: messenger, places: places, options: options, finder: finder, files: files, logger: logger,
                  show: { output in if let line = Self.render(output, json: json) { write(line) } })
    }

    /// Creates a front that hands each output to `show`, which renders it (an interactive
    /// terminal: ``TerminalIO/show(_:)``).
    /// - Parameters:
    ///   - session: a started session.
    ///   - messenger: the outbox, receipts and history over that session (it owns the session's events).
    ///   - places: place lookups and pins over that session.
    ///   - options: output options.
    ///   - finder: discovery, or `nil` without it (`--no-discovery`).
    ///   - files: file transfer (`/send`), or `nil` without it.
    ///   - logger: for diagnostics (stderr in the executable).
    ///   - show: shows one output; called from several tasks, so it must be thread-safe.
    public init(session: Session, messenger: Messenger, places: PlaceService, options: Options, finder: PeerFinder? = nil, files: FileTransfers? = nil, logger: Logger,
                show: @escaping @Sendable (ChatOutput) -> Void) {
        self.session = session
        self.messenger = messenger
        self.places = places
        self.finder = finder
        self.files = files
        self.options = options
        self.logger = logger
        self.show = show
    }

    /// Shows one output, with peers marked by their standing in the name book (``PeerMarks``).
    ///
    /// A line that mentions me is marked (`mention`); one that calls me (a mention, a private
    /// line) is followed by ``ChatOutput/bell`` when the bell is on. With ``Options/buffers``, a
    /// line of a conversation not looked at is kept in its buffer and only the status line is
    /// shown (my own lines are shown wherever I typed them).
    ///
    /// In text, peers coming and going pass through ``PresenceSummary`` first: a burst is one line
    /// when its window ends (``Options/presence``).
    /// - Parameter output: what to show.
    public func emit(_ output: ChatOutput) {
        if !options.json {
            switch memory.takePresence(output, mode: options.presence, invitesByHand: options.invitesByHand, at: .now) {
            case .show:
                // "bob connected" before bob's first line, not 2 s after it.
                if let held = memory.releasePresence(before: output) { present(held) }
            case .dropped, .heldInWindow:
                return
            case .held(let end):
                Task {
                    try? await Task.sleep(until: end, clock: .continuous)
                    // Names in a summary marked as everywhere else (✓, "new key"): the book is set while it is made.
                    if let line = PeerMarks.$book.withValue(trust.book, operation: { memory.flushPresence(at: end) }) { present(line) }
                }
                return
            }
        }
        present(output)
    }

    /// Shows one output now: files it in its buffer, marks a mention, rings the bell.
    private func present(_ output: ChatOutput) {
        var output = output
        var calls = false
        if case .message(let id, let from, let text, let sentAt, let hops, let isPrivate, let room, _, let action) = output,
           from.id != session.peer.peerID.id {
            let mention = options.attention.calls(text, isPrivate: false, myName: session.peer.peerID.displayName)
            calls = mention || isPrivate
            if mention {
                output = .message(id: id, from: from, text: text, sentAt: sentAt, hops: hops, isPrivate: isPrivate, room: room,
                                  mention: true, action: action)
            }
        }
        let placement = memory.record(output, mention: calls)
        PeerMarks.$book.withValue(trust.book) {
            if case .elsewhere = placement, options.buffers {
                if case .sent = output { show(output) }
                show(.buffers(memory.bufferStatus))
            } else {
                show(output)
            }
            if calls && options.attention.bell { show(.bell) }
        }
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
        if let problem = await trust.load(from: messenger.store) {
            logger.warning("\(problem)", metadata: ["trust.setting": "\(TrustBook.settingKey)"])
        }
        if let blocked = try? await messenger.blocked() {
            await places.setBlocked(Set(blocked.keys))
            await files?.setBlocked(Set(blocked.keys))
        }
        loaded.open()
        // The prompt says where typed lines go from the start, also after a restart.
        await showStartTarget()
        await restoreAway()
        try await withThrowingTaskGroup(of: RunChild.self) { group in
            group.addTask {
                try await session.run()
                return .session
            }
            group.addTask {
                await self.messenger.run()
                return .other
            }
            group.addTask {
                await self.showEvents()
                return .other
            }
            group.addTask {
                await self.places.run { await self.show($0) }
                return .other
            }
            if let finder {
                group.addTask {
                    await finder.run()
                    return .other
                }
            }
            if let files {
                group.addTask {
                    await files.run()
                    return .other
                }
                group.addTask {
                    for await event in files.events { self.emit(.file(event)) }
                    return .other
                }
            }
            group.addTask {
                await self.keepNameBook()
                return .other
            }
            if let resizes = options.resizes {
                group.addTask {
                    for await _ in resizes { await self.redrawForResize() }
                    return .other
                }
            }
            group.addTask {
                for try await line in lines {
                    if await self.handle(line) == .quit { break }
                }
                await self.trust.saveChanges(to: self.messenger.store)
                if !self.options.keepRunningAfterInput {
                    // Files still on their way stay with the session, on disk: they resume at the next start.
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

    /// Stops the chat as `/quit` does: keeps the trust changes, says goodbye to every peer and
    /// ends the session. Lines already accepted are on disk (the outbox sends them at the next start).
    public func quit() async {
        await trust.saveChanges(to: messenger.store)
        await session.disconnect()
    }

    /// The `status` of a `sent` output: `queued`, or `sent` once the line went out (a receipt
    /// that came back meanwhile follows as its own output).
    static func sentStatus(_ stored: StoredMessage) -> String {
        stored.status == .queued ? "queued" : "sent"
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
            await say(text, action: false)
        case .me(let text):
            await say(text, action: true)
        case .privateMessage(let target, let text):
            switch PeerLookup.match(target, in: await knownPeers(holding: target), noun: "peer", names: trust.book) {
            case .failure(let message):
                emit(.error("/msg: \(message); nothing was sent"))
            case .success(let peer):
                await sendPrivate(text, to: peer)
            }
        case .reply(let text):
            guard let peer = memory.lastPrivateSender else {
                emit(.error("/reply: nobody has sent you a private line yet; use /msg @NAME TEXT"))
                break
            }
            await sendPrivate(text, to: peer)
        case .query, .window, .switchTo, .search, .away, .whois, .clear:
            await handleConversations(command)
        case .sendFile(let target, let path):
            await sendFile(to: target, path: path)
        case .files:
            await listFiles()
        case .cancelFile(let prefix):
            await cancelFile(prefix)
        case .mesh:
            emit(.mesh(meshRows()))
        case .ping(let target):
            switch PeerLookup.match(target, in: session.reachablePeers.map(\.peer), noun: "reachable peer", names: trust.book) {
            case .failure(let message):
                emit(.error("/ping: \(message)"))
            case .success(let peer):
                let hops = session.route(to: peer)?.hops ?? 1
                do {
                    emit(.pong(peer, roundTrip: try await session.ping(peer), hops: hops))
                } catch {
                    emit(.error("/ping: \(error)"))
                }
            }
        case .verify(let target):
            verify(target)
        case .trust(let target):
            await trust(target, verified: true)
        case .untrust(let target):
            await trust(target, verified: false)
        case .block, .unblock:
            await handleBlocking(command)
        case .forget(let name):
            await forget(name)
        case .route(let target):
            switch PeerLookup.match(target, in: session.reachablePeers.map(\.peer), noun: "reachable peer", names: trust.book) {
            case .failure(let message):
                emit(.error("/route: \(message)"))
            case .success(let peer):
                guard let route = session.route(to: peer) else { emit(.error("/route: \(peer) is no longer reachable")); break }
                emit(.route(peer, links: zip(route.path, route.hopLatencies).map { ChatOutput.RouteLink(peer: $0, latency: $1) }))
            }
        case .history(let count):
            do {
                let lines = try await messenger.history(limit: count).map(historyLine)
                emit(.history(lines))
            } catch {
                emit(.error("/history: \(error)"))
            }
        case .peers:
            emit(.peers(peerRows()))
        case .invite(let name):
            guard let finder else { emit(.error("discovery is off: use /connect HOST:PORT")); break }
            if let problem = finder.invite(name) { emit(.error(problem)) }
        case .accept(let name), .decline(let name):
            guard let finder else { emit(.error("discovery is off: there are no invitations")); break }
            var accept = false
            if case .accept = command { accept = true }
            if let problem = finder.answer(name, accept: accept) { emit(.error(problem)) }
        case .nick(let name):
            let previous = session.peer.peerID.displayName
            guard name != previous else { emit(.notice("you are already called \(name)")); break }
            do {
                try await session.rename(to: name)
                finder?.rename(to: name)
                emit(.nick(session.peer.peerID, previous: previous, isMe: true))
            } catch {
                emit(.error("/nick: \(error)"))
            }
        case .help(let topic):
            emit(.help(Self.helpText(topic)))
        case .connect(let host, let port):
            session.connect(host: host, port: port, redial: true)
            emit(.notice("connecting to \(Session.format(host: host, port: port)) (kept: dialled again whenever the link is down)"))
        case .connectCode(let data):
            let address = PeerAddress.code(data)
            address.keep(in: session)
            emit(.notice("connecting to \(address) (kept: dialled again whenever the link is down)"))
        case .code:
            do {
                emit(.code(try session.nearbyConnectionData().text))
            } catch {
                emit(.error("/code: \(error)"))
            }
        case .disconnect(let host, let port):
            let address = Session.format(host: host, port: port)
            if session.stopRedialing(host: host, port: port) {
                emit(.notice("stopped keeping the link to \(address)"))
            } else {
                let kept = session.redialedAddresses
                emit(.error("/disconnect: \(address) is not kept; kept: \(kept.isEmpty ? "none" : kept.joined(separator: ", "))"))
            }
        case .here, .near, .nearMore, .pin, .pins, .unpin, .map:
            await handlePlaces(command)
        case .join, .leave, .rooms:
            await handleRooms(command)
        case .quit:
            await quit()
            return .quit
        }
        return .carryOn
    }

    /// Peers a line can be addressed to: reachable now, seen since the start, or known from the
    /// history (a line to one of those waits in the outbox until it is reachable).
    func knownPeers() async -> [PeerID] {
        await messenger.addressablePeers(adding: book.all)
    }

    /// A node with its latest name: reachable now or seen this run, else its id prefix as the name.
    func name(of node: NodeID) -> PeerID {
        if let route = session.reachablePeers.first(where: { $0.peer.id == node }) { return route.peer }
        if let known = book.all.first(where: { $0.id == node }) { return known }
        return (try? PeerID(id: node, displayName: node.shortHex)) ?? session.peer.peerID
    }

    func historyLine(_ message: StoredMessage) -> ChatOutput.HistoryLine {
        let author = (try? PeerID(id: message.author, displayName: message.authorName)) ?? name(of: message.author)
        var with: PeerID?
        var room: RoomRef?
        if case .direct(let node) = message.conversation { with = message.isOutgoing ? name(of: node) : session.peer.peerID }
        if case .room(let ref) = message.conversation { room = ref }
        return ChatOutput.HistoryLine(id: message.id, from: author, with: with, text: message.text, sentAt: message.sentAt,
                                      isOutgoing: message.isOutgoing, status: message.status.rawValue, hops: message.hops, room: room,
                                      isAction: message.isAction)
    }

    private func showEvents() async {
        for await event in messenger.events {
            switch event {
            case .session(let event):
                await show(event)
                for change in await places.handle(event) { await show(change) }
            case .message(let message):
                var isPrivate = false
                var room: RoomRef?
                if case .direct = message.conversation {
                    isPrivate = true
                    if !message.isOutgoing, let sender = try? PeerID(id: message.author, displayName: message.authorName) {
                        memory.lastPrivateSender = sender
                    }
                }
                if case .room(let ref) = message.conversation { room = ref }
                let author = (try? PeerID(id: message.author, displayName: message.authorName)) ?? name(of: message.author)
                book.note(author)
                emit(.message(id: message.id, from: author, text: message.text, sentAt: message.sentAt,
                              hops: message.hops ?? 1, isPrivate: isPrivate, room: room, action: message.isAction))
            case .status(let message):
                var to: PeerID?
                if case .direct(let node) = message.conversation { to = name(of: node) }
                emit(.receipt(id: message.id, status: message.status.rawValue, to: to))
            case .failure(let text):
                emit(.error(text))
            }
        }
    }

    private func show(_ event: SessionEvent) async {
        finder?.sessionEvent(event)
        switch event {
        case .peerChanged(let peer, _), .reachabilityChanged(let peer, _), .invitationFailed(let peer, _):
            book.note(peer)
        default:
            break
        }
        learnName(from: event)
        switch event {
        case .peerChanged(let peer, let state):
            var reason: DisconnectReason?
            if case .notConnected(let why) = state { reason = why }
            emit(.peer(peer, state: state.description, address: session.remoteAddress(of: peer), reason: reason))
        case .received(let message):
            switch message.content {
            case .text(let text):
                emit(.message(id: text.id, from: message.sender, text: text.text, sentAt: text.sentAt,
                              hops: message.hops, isPrivate: message.isPrivate))
            case .data(let data):
                emit(.data(from: message.sender, mode: message.mode, payload: data))
            }
        case .connectFailed(let address, let reason):
            // A kept address reports the first failure of a run only: say that it goes on.
            let kept = session.redialedAddresses.contains(address)
            emit(.connectFailed(address: address, reason: kept ? "\(reason); dialling again until it answers (/disconnect \(address) stops)" : reason))
        case .invitationFailed(let peer, let failure):
            emit(.invitationFailed(peer, kind: failure.kind.rawValue, message: failure.message))
        case .reachabilityChanged(let peer, let route):
            emit(.reachability(peer, hops: route?.hops, via: route?.nextHop))
        case .peerRenamed(let peer, let previous):
            book.note(peer)
            if memory.lastPrivateSender?.id == peer.id { memory.lastPrivateSender = peer }
            emit(.nick(peer, previous: previous, isMe: false))
        case .keyRotated(let peer, let previous):
            await keyRotated(peer, previous: previous)
        case .keyRotationDisputed(let peer, let previous, let successor):
            await keyRotationDisputed(peer, previous: previous, successor: successor)
        }
    }
}
