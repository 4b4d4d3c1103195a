import Foundation
import MeshChat
import MeshPlaces
import MeshRooms
import MeshSession
import MeshStore
import MeshTransport

extension ChatFront {
    /// The setting under which the peer of a private conversation typed lines go to (`/query`) is
    /// remembered: its node id in hex.
    static let activeQueryKey = "chat.query"
    /// The setting under which this node's away text (`/away`) is kept across restarts.
    static let awayKey = "chat.away"
    /// How many of the most recent stored lines `/search` looks through.
    public static let searchedLines = 10_000
    /// The most lines `/search` shows (the latest that match).
    public static let maxSearchResults = 50
    /// How many stored lines a buffer shows when it is looked at with no chat line in its
    /// scrollback (after a restart): dated, as `/history` shows them.
    public static let storedLinesShown = 20

    /// The lines `/search` shows: those whose text contains `text` (literally, case-insensitive),
    /// the latest ``maxSearchResults`` of them, oldest first (pure).
    /// - Parameters:
    ///   - messages: stored lines, oldest first.
    ///   - text: what to look for (typed; never a pattern).
    /// - Returns: the matching lines.
    static func search(_ messages: [StoredMessage], for text: String) -> [StoredMessage] {
        Array(messages.filter { $0.text.range(of: text, options: [.caseInsensitive]) != nil }.suffix(maxSearchResults))
    }

    /// Where typed lines go: the peer of `/query`, else the active room, else the mesh
    /// (remembered across restarts).
    func activeTarget() async -> ChatTarget {
        if let peer = await activeQuery() { return .peer(peer) }
        if let room = await activeRoom() { return .room(room) }
        return .mesh
    }

    /// The peer of the private conversation typed lines go to, read from the store once per run.
    private func activeQuery() async -> PeerID? {
        if let known = memory.query { return known }
        let store = messenger.store
        var peer: PeerID?
        if let hex = try? await EventLoops.runBlocking({ try store.setting(Self.activeQueryKey) }),
           let node = try? NodeID(hex: hex) {
            peer = await knownPeers().first { $0.id == node } ?? name(of: node)
        }
        memory.query = .some(peer)
        return peer
    }

    /// Makes a conversation the one typed lines go to (remembered), and shows its buffer.
    func setTarget(_ target: ChatTarget) async throws {
        let store = messenger.store
        var room: RoomRef?
        var peer: PeerID?
        switch target {
        case .mesh: break
        case .room(let ref): room = ref
        case .peer(let other): peer = other
        }
        let (roomKey, peerHex) = (room?.storageKey, peer?.id.hex)
        try await EventLoops.runBlocking {
            try store.setSetting(Self.activeRoomKey, to: roomKey)
            try store.setSetting(Self.activeQueryKey, to: peerHex)
        }
        memory.activeRoom = .some(room)
        memory.query = .some(peer)
        var scrollback = memory.select(target)
        let hasLines = scrollback.contains { entry in
            switch entry.output {
            case .message, .sent: true
            default: false
            }
        }
        if !hasLines {
            // Nothing seen this run (after a restart): the conversation's last stored lines, dated.
            let conversation: Conversation
            switch target {
            case .mesh: conversation = .mesh
            case .room(let ref): conversation = .room(ref)
            case .peer(let other): conversation = .direct(other.id)
            }
            if let stored = try? await messenger.history(limit: Self.storedLinesShown, conversation: conversation), !stored.isEmpty {
                scrollback.insert(Conversations.Entry(output: .history(stored.map(historyLine)), at: Date()), at: 0)
            }
        }
        emit(.target(target, scrollback: scrollback))
        emit(.buffers(memory.bufferStatus))
    }

    /// Says where typed lines go at the start (after a restart: where they went before).
    func showStartTarget() async {
        let target = await activeTarget()
        _ = memory.select(target)
        emit(.target(target))
        emit(.buffers(memory.bufferStatus))
        if target != .mesh { emit(.notice("your lines go to \(target.label), as before the restart (/switch mesh: to everyone)")) }
    }

    /// Sets the away text kept from before a restart (``awayKey``) in this node's advert, and says
    /// so. A stored text that breaks §17.7's rules (an edited database) is reported and not set.
    func restoreAway() async {
        let store = messenger.store
        guard let text = try? await EventLoops.runBlocking({ try store.setting(Self.awayKey) }), !text.isEmpty else { return }
        do {
            try await messenger.setAway(text)
            emit(.notice("you are away: \(text), as before the restart (/away alone clears it)"))
        } catch {
            emit(.error("the away text kept from before the restart was not set: \(error)"))
        }
    }

    /// Runs `/query`, `/window`, `/switch`, `/search`, `/away`, `/whois` and `/clear`.
    func handleConversations(_ command: ChatCommand) async {
        do {
            switch command {
            case .query(let name):
                guard let name else { return try await switchTo(.mesh) }
                if let peer = await peer(named: name, command: "/query") { try await switchTo(.peer(peer)) }
            case .window(let number):
                guard let number else { return emit(.notice("conversations: \(memory.statusLine) (/window N or Alt-N looks at one)")) }
                guard let target = memory.target(number: number) else {
                    return emit(.error("/window: there is no conversation \(number); open ones: \(memory.statusLine)"))
                }
                try await switchTo(target)
            case .switchTo(let argument):
                if let target = await switchTarget(argument) { try await switchTo(target) }
            case .search(let text):
                let stored = try await messenger.history(limit: Self.searchedLines)
                emit(.search(text, Self.search(stored, for: text).map(historyLine)))
            case .away(let text):
                // On disk first (nil clears it), then in the advert.
                let store = messenger.store
                try await EventLoops.runBlocking { try store.setSetting(Self.awayKey, to: text) }
                try await messenger.setAway(text)
                emit(.away(text))
            case .whois(let name):
                if let peer = await peer(named: name, command: "/whois") { emit(.whois(whois(peer))) }
            case .clear:
                // An empty scrollback redraws the terminal's screen empty; JSON and text have no line for it.
                emit(.target(memory.clearScrollback(), scrollback: []))
            default:
                break
            }
        } catch {
            emit(.error("\(error)"))
        }
    }

    /// ``setTarget(_:)``; without buffers (text to a pipe) a notice says where typed lines go now
    /// (a terminal's prompt says it).
    private func switchTo(_ target: ChatTarget) async throws {
        try await setTarget(target)
        guard !options.buffers else { return }
        switch target {
        case .mesh: emit(.notice("your lines go to everyone in the mesh"))
        case .room(let room): emit(.notice("your lines go to \(room)"))
        case .peer(let peer): emit(.notice("your lines go to \(peer.shownName) only, end-to-end encrypted"))
        }
    }

    /// A peer by name or id prefix, as `/msg` finds it (names bound to keys, §20.3), or `nil`
    /// after saying why not.
    private func peer(named name: String, command: String) async -> PeerID? {
        switch PeerLookup.match(name, in: await knownPeers(holding: name), noun: "peer", names: trust.book) {
        case .failure(let message):
            emit(.error("\(command): \(message)"))
            return nil
        case .success(let peer):
            return peer
        }
    }

    /// The conversation `/switch` names: `mesh`, a joined `#room` or a peer.
    private func switchTarget(_ argument: String) async -> ChatTarget? {
        if argument.lowercased() == "mesh" { return .mesh }
        guard argument.hasPrefix("#") else {
            return await peer(named: argument.trimmingPrefix("@"), command: "/switch").map(ChatTarget.peer)
        }
        let wantsPassword = argument.hasSuffix(" 🔒")
        let name: String
        do {
            name = try RoomKey.normalizedName(wantsPassword ? String(argument.dropLast(2)) : argument)
        } catch {
            emit(.error("/switch: \(error)"))
            return nil
        }
        let joined = ((try? await messenger.rooms().map(\.ref)) ?? []).filter { $0.name == name && (!wantsPassword || $0.hasPassword) }
        guard let room = joined.first else {
            emit(.error("/switch: you are not in \(name); join it with /join \(name)"))
            return nil
        }
        guard joined.count == 1 else {
            emit(.error("/switch: you are in two rooms called \(name); /join \(name) --public or /join \(name) --password goes to one"))
            return nil
        }
        return .room(room)
    }

    /// What `/whois` says of a peer.
    private func whois(_ peer: PeerID) -> ChatOutput.Whois {
        var whois = ChatOutput.Whois(peer: peer)
        whois.fingerprint = session.identityKey(of: peer).flatMap(SafetyNumber.half(rawKey:))
        whois.verified = trust.book.isVerified(peer.id)
        if let route = session.route(to: peer) {
            whois.hops = route.hops
            whois.route = route.path
        }
        if session.connectedPeers.contains(where: { $0.id == peer.id }) {
            whois.address = session.remoteAddress(of: peer)
            whois.suite = session.cipherSuite(of: peer)
        }
        whois.dataSets = places.placeSets(of: peer).map(\.name)
        whois.away = messenger.away(of: peer)
        return whois
    }
}
