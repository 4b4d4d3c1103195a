import Foundation
import Logging
import MeshRooms
import MeshSession
import MeshStore

/// Everything a ``Messenger`` reports, in order.
public enum MessengerEvent: Sendable {
    /// A session event the messenger does not turn into one of its own (peers, reachability,
    /// invitations, data).
    case session(SessionEvent)
    /// A chat line arrived and is stored: private (in its sender's order) or to the whole mesh.
    case message(StoredMessage)
    /// One of this node's lines changed status: `sent`, `delivered` (the destination's receipt
    /// came back) or `expired` (given up after ``MeshStore/StoreLimits/maxMessageAge``).
    case status(StoredMessage)
    /// Storing or sending failed; the message is still safe where it was (for logs and people).
    case failure(String)
}

/// The chat application: lines to everyone and private lines with an outbox, receipts and history
/// on disk, on channel 1 of a ``Session`` (PROTOCOL.md §17).
///
/// The messenger registers ``MeshSession/ChannelID/chat`` with ``ChatLimits/channel`` when it is
/// created (one messenger per session). ``send(text:to:)`` writes a line to the ``MessageStore`` before it returns (so an accepted
/// line survives a crash at any moment), then sends it when a route exists: to the whole mesh as a
/// signed broadcast (held while no peer at all is connected), or to one node sealed end to end with
/// its per-destination sequence. Private lines stay in the outbox until the destination's receipt
/// arrives; they are sent again when a route to the destination appears and, while one exists, on
/// a backoff (``Configuration/retryInterval`` doubling up to ``Configuration/maxRetryInterval``),
/// until the store's age limit expires them. Received private lines are stored (deduplicated by id,
/// also across restarts), acknowledged, and reported in their sender's order; a receipt that finds
/// no route back is held (``PendingReceipts``) and sent when a route to the sender appears.
///
/// Run ``run()`` in its own task beside the session's; it ends when the session's events end.
/// This type is thread-safe (an actor).
public actor Messenger {
    /// Retry settings.
    public struct Configuration: Sendable {
        /// The wait before the first retransmission of an unacknowledged private line.
        public var retryInterval: Duration = .seconds(4)
        /// The longest wait between retransmissions.
        public var maxRetryInterval: Duration = .seconds(60)
        /// How often the outbox, held lines and expiry are checked.
        public var tick: Duration = .milliseconds(500)
        /// Creates the defaults.
        public init() {}
    }

    /// The session it sends through.
    public nonisolated let session: Session
    /// The chat's channel (channel 1) on ``session``.
    public nonisolated let channel: MeshChannel
    /// The store it keeps lines in.
    public nonisolated let store: MessageStore
    /// Everything the messenger reports. One consumer; ends after the session's events end.
    public nonisolated let events: EventQueue<MessengerEvent>
    private let configuration: Configuration
    private let logger: Logger
    private var me: PeerID { session.peer.peerID }
    private var lastPrune: Date?
    /// Room lines in and out (channel 2, PROTOCOL.md §15); `nil` when the channel was taken.
    private nonisolated let roomChannel: RoomChannel?
    /// The joined rooms' keys, loaded from the store on first use.
    private var roomKeys: [RoomRef: RoomKey]?
    /// Lines being accepted by ``send(text:to:action:announce:)``: their acceptance is not reported yet,
    /// so their status events wait (a receipt never precedes its line's `sent`).
    private var unannounced: Set<String> = []
    /// The latest status event of each unannounced line, reported right after its acceptance.
    private var heldStatus: [String: StoredMessage] = [:]
    /// Blocked nodes with the name they had, loaded from the store on first use.
    private var blockedNodes: [NodeID: String]?
    /// The setting under which blocked nodes are kept: one "hex name" per line.
    static let blockedKey = "chat.blocked"
    /// Receipts held until a route back to the line's sender appears (§17.4).
    private var pendingReceipts = PendingReceipts()

    /// Creates a messenger and registers the chat's channel on the session.
    /// - Parameters:
    ///   - session: a session (its ``Session/events`` must be consumed by this messenger only).
    ///   - store: the store for this node's lines.
    ///   - configuration: retry settings.
    ///   - logger: where failures are logged.
    /// - Throws: ``MeshSession/SessionError`` `channelInUse` when the session has channel 1 already.
    public init(session: Session, store: MessageStore, configuration: Configuration = Configuration(),
                logger: Logger = Logger(label: "meshchat.messenger", factory: { _ in SwiftLogNoOpLogHandler() })) throws(SessionError) {
        self.channel = try session.register(channel: .chat, limits: ChatLimits.channel)
        self.session = session
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.events = EventQueue(capacity: session.configuration.eventCapacity)
        do {
            self.roomChannel = try RoomChannel(session: session, logger: logger)
        } catch {
            logger.error("rooms are unavailable: channel 2 is taken", metadata: ["error": "\(error)"])
            self.roomChannel = nil
        }
    }

    /// Consumes the session's events and the chat channel's messages until the session's events
    /// end, and works the outbox meanwhile. The channel is closed when it returns.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                while !Task.isCancelled {
                    // On the session's loop clock (virtual on a test loop); throws only when cancelled.
                    do { try await session.sleep(for: configuration.tick) } catch { break }
                    await self.maintain()
                }
            }
            group.addTask { [self] in
                for await message in channel.messages {
                    await self.received(message)
                }
            }
            if let lines = roomChannel?.lines {
                group.addTask { [self] in
                    for await line in lines { await receivedRoom(line.chat, from: line.sender, hops: line.hops) }
                }
            }
            for await event in session.events {
                await handle(event)
            }
            channel.close()
            group.cancelAll()
            roomChannel?.channel.close()
        }
        events.finish()
    }

    // MARK: Sending

    /// Accepts a line: stores it durably, then sends it when it can.
    /// - Parameters:
    ///   - text: the line.
    ///   - peer: one node (private, end to end, with a receipt), or `nil` for the whole mesh.
    ///   - action: an action line (`/me`, PROTOCOL.md §17.8).
    ///   - announce: called with the stored line once it is on disk and its first try is over
    ///   (status `queued` or `sent`), before any status event of that line is reported: the
    ///   caller says "sent" there, and a receipt can never come first (PROTOCOL.md §17.6).
    /// - Returns: the stored line, status `queued` (or `sent` when it went out at once).
    /// - Throws: ``MeshStore/StoreError`` (`outboxFull` names the limit), or ``MeshSession/SessionError``
    ///   `payloadTooLarge`; nothing is stored then.
    @discardableResult
    public func send(text: String, to peer: PeerID?, action: Bool = false,
                     announce: @Sendable (StoredMessage) async -> Void = { _ in }) async throws -> StoredMessage {
        guard text.utf8.count <= ChatLimits.maxLineBytes else {
            throw MessengerError("a line of \(text.utf8.count) bytes is over the limit of \(ChatLimits.maxLineBytes)")
        }
        return try await accept(text: text, to: peer?.id, room: nil, action: action, announce: announce) { id in
            if let peer {
                if self.session.route(to: peer) != nil { await self.flush(to: peer.id, force: false, quietID: id) }
            } else {
                await self.flushBroadcasts(quietID: id)
            }
        }
    }

    /// Stores a line under a new id, held from status events until `announce` returned: the
    /// first try (`firstTry`) runs meanwhile.
    private func accept(text: String, to destination: NodeID?, room: RoomRef?, action: Bool,
                        announce: @Sendable (StoredMessage) async -> Void,
                        firstTry: (String) async -> Void) async throws -> StoredMessage {
        let id = NodeID.random().hex
        let (author, name) = (me.id, me.displayName)
        // Held before the line exists: the outbox tick may send it while the write returns.
        unannounced.insert(id)
        let entry: OutboxEntry
        do {
            entry = try await db { try $0.enqueue(text: text, to: destination, room: room, author: author, authorName: name, now: Date(), id: id,
                                                  isAction: action) }
        } catch {
            unannounced.remove(id)
            heldStatus[id] = nil
            throw error
        }
        // The caller learns the status from `announce`: no status event for this first try.
        await firstTry(entry.message.id)
        let stored = (try? await db { try $0.message(id: entry.message.id) }) ?? entry.message
        await announce(stored)
        unannounced.remove(entry.message.id)
        if let held = heldStatus.removeValue(forKey: entry.message.id), !(held.status == .sent && stored.status == .sent) {
            await events.push(.status(held))
        }
        return stored
    }

    /// Reports a status change of one of this node's lines, or holds it while the line's
    /// acceptance is not yet announced.
    private func reportStatus(_ message: StoredMessage) async {
        if unannounced.contains(message.id) {
            heldStatus[message.id] = message
            return
        }
        await events.push(.status(message))
    }

    /// Accepts a line for a joined room (PROTOCOL.md §15): stored durably, then broadcast
    /// encrypted with the room's key (held while no peer at all is connected).
    /// - Parameters:
    ///   - text: the line.
    ///   - room: a joined room (the public or the password room of its name).
    ///   - action: an action line (`/me`, PROTOCOL.md §17.8).
    ///   - announce: as for ``send(text:to:action:announce:)``.
    /// - Returns: the stored line.
    /// - Throws: ``MessengerError`` when the room is not joined or the line too long;
    ///   ``MeshStore/StoreError``.
    @discardableResult
    public func send(text: String, room: RoomRef, action: Bool = false,
                     announce: @Sendable (StoredMessage) async -> Void = { _ in }) async throws -> StoredMessage {
        guard try await keys()[room] != nil else { throw MessengerError("you are not in \(room): /join \(room.name) first") }
        guard text.utf8.count <= RoomLimits.maxTextBytes else {
            throw MessengerError("a line of \(text.utf8.count) bytes is over the room limit of \(RoomLimits.maxTextBytes)")
        }
        return try await accept(text: text, to: nil, room: room, action: action, announce: announce) { id in
            await self.flushBroadcasts(quietID: id)
        }
    }

    /// Joins a room: its key is stored, and its lines are read from now on.
    /// - Parameter key: the room's key (``MeshRooms/RoomKey``).
    /// - Throws: ``MeshStore/StoreError``.
    public func join(_ key: RoomKey) async throws {
        let room = JoinedRoom(name: key.name, key: key.key, hasPassword: key.hasPassword, joinedAt: Date())
        try await db { try $0.joinRoom(room) }
        var keys = try await keys()
        keys[room.ref] = key
        roomKeys = keys
    }

    /// Leaves a room: its key is forgotten (its history stays).
    /// - Parameter room: the room.
    /// - Returns: whether it was joined.
    /// - Throws: ``MeshStore/StoreError``.
    @discardableResult
    public func leave(_ room: RoomRef) async throws -> Bool {
        _ = try await keys()
        roomKeys?[room] = nil
        return try await db { try $0.leaveRoom(room) }
    }

    /// The joined rooms, in the order they were joined.
    /// - Throws: ``MeshStore/StoreError``.
    public func rooms() async throws -> [JoinedRoom] {
        try await db { try $0.rooms() }
    }

    /// Blocks a node: its lines to the mesh, to rooms and to this node are discarded unread
    /// from now on (private lines are still acknowledged, so its outbox does not retry them for
    /// days). Remembered across restarts.
    /// - Parameter peer: the node.
    /// - Throws: ``MeshStore/StoreError``.
    public func block(_ peer: PeerID) async throws {
        var blocked = try await blocked()
        blocked[peer.id] = peer.displayName
        try await saveBlocked(blocked)
    }

    /// Unblocks a node.
    /// - Parameter node: the node.
    /// - Returns: whether it was blocked.
    /// - Throws: ``MeshStore/StoreError``.
    @discardableResult
    public func unblock(_ node: NodeID) async throws -> Bool {
        var blocked = try await blocked()
        guard blocked.removeValue(forKey: node) != nil else { return false }
        try await saveBlocked(blocked)
        return true
    }

    /// The blocked nodes with the display name they had when blocked.
    /// - Throws: ``MeshStore/StoreError``.
    public func blocked() async throws -> [NodeID: String] {
        if let blockedNodes { return blockedNodes }
        let text = try await db { try $0.setting(Self.blockedKey) } ?? ""
        var nodes: [NodeID: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if let first = parts.first, let node = try? NodeID(hex: String(first)) {
                nodes[node] = parts.count > 1 ? String(parts[1]) : node.shortHex
            }
        }
        blockedNodes = nodes
        return nodes
    }

    private func saveBlocked(_ nodes: [NodeID: String]) async throws {
        let text = nodes.sorted { $0.key < $1.key }.map { "\($0.key.hex) \($0.value)" }.joined(separator: "\n")
        try await db { try $0.setSetting(Self.blockedKey, to: text.isEmpty ? nil : text) }
        blockedNodes = nodes
    }

    /// A blocked node that rotates its key stays blocked (§20.2): the new key is blocked under the
    /// name the old one was blocked with, and the old key stays blocked too (a key that was replaced
    /// may have leaked). Saved before the rotation's event goes on.
    private func blockFollowsRotation(from old: NodeID, to new: NodeID) async throws {
        var nodes = try await blocked()
        guard let name = nodes[old], nodes[new] == nil else { return }
        nodes[new] = name
        try await saveBlocked(nodes)
        logger.info("a blocked peer rotated its key: its new key is blocked", metadata: ["mesh.peer": "\(new)", "mesh.previous": "\(old)"])
    }

    private func isBlocked(_ node: NodeID) async -> Bool {
        (try? await blocked()[node]) != nil
    }

    private func keys() async throws -> [RoomRef: RoomKey] {
        if let roomKeys { return roomKeys }
        var keys: [RoomRef: RoomKey] = [:]
        for room in try await db({ try $0.rooms() }) {
            do {
                keys[room.ref] = try RoomKey(name: room.name, key: room.key, hasPassword: room.hasPassword)
            } catch {
                logger.error("a stored room is unreadable; leave and join it again", metadata: ["room": "\(room.name)", "error": "\(error)"])
            }
        }
        roomKeys = keys
        return keys
    }

    /// The most recent lines, oldest first.
    /// - Parameters:
    ///   - limit: how many.
    ///   - conversation: one conversation, or all.
    public func history(limit: Int, conversation: Conversation? = nil) async throws -> [StoredMessage] {
        try await db { try $0.history(limit: limit, conversation: conversation) }
    }

    /// The peers a private line can be addressed to: the reachable ones first, then `others`
    /// (peers the caller has seen), then the authors of received lines in the last 1,000 of the
    /// history (a line to one of those waits in the outbox until it is reachable). Each once,
    /// never this node.
    /// - Parameter others: more peers the caller knows of.
    /// - Returns: the peers, by node id once each.
    public func addressablePeers(adding others: [PeerID] = []) async -> [PeerID] {
        var peers: [PeerID] = []
        var seen: Set<NodeID> = [me.id]
        func add(_ peer: PeerID) {
            if seen.insert(peer.id).inserted { peers.append(peer) }
        }
        session.reachablePeers.forEach { add($0.peer) }
        others.forEach(add)
        for line in (try? await history(limit: 1000)) ?? [] where !line.isOutgoing {
            if !seen.contains(line.author), let peer = try? PeerID(id: line.author, displayName: line.authorName) { add(peer) }
        }
        return peers
    }

    private func flushBroadcasts(quietID: String? = nil) async {
        guard !session.connectedPeers.isEmpty else { return }
        let pending: [OutboxEntry]
        do {
            pending = try await db { try $0.pending(to: nil) }
        } catch {
            return report(error)
        }
        for entry in pending {
            do {
                let sentToNobody: Bool
                if case .room(let room) = entry.message.conversation {
                    guard let key = try await keys()[room] else {
                        // Left the room before the line went out: it stays queued until it expires.
                        continue
                    }
                    var text = RoomTextPayload()
                    text.room = room.name
                    text.messageID = Data(try NodeID(hex: entry.message.id).bytes)
                    text.text = entry.message.text
                    text.sentAtMs = Int64((entry.message.sentAt.timeIntervalSince1970 * 1000).rounded())
                    text.action = entry.message.isAction
                    guard let roomChannel else { continue }
                    sentToNobody = try await roomChannel.send(text, key: key)
                } else {
                    let line = ChatPayload.line(id: try NodeID(hex: entry.message.id), text: entry.message.text,
                                                sentAtMilliseconds: ChatPayload.milliseconds(entry.message.sentAt),
                                                action: entry.message.isAction)
                    sentToNobody = try await channel.broadcast(line.encoded)
                }
                if sentToNobody { return }
                try await db { try $0.broadcastSent(id: entry.message.id, now: Date()) }
                if entry.message.id != quietID, let stored = try await db({ try $0.message(id: entry.message.id) }) { await reportStatus(stored) }
            } catch {
                report(error)
            }
        }
    }

    /// Sends what waits for one node, in sequence order: everything when `force`, otherwise the
    /// lines whose retry time has come.
    private func flush(to node: NodeID, force: Bool, quietID: String? = nil) async {
        guard let route = session.reachablePeers.first(where: { $0.peer.id == node }) else { return }
        let pending: [OutboxEntry]
        let floor: UInt64
        do {
            (pending, floor) = try await db { (try $0.pending(to: node), try $0.floor(for: node)) }
        } catch {
            return report(error)
        }
        // The retry backoff runs on the session loop's clock (virtual on a test loop), read here
        // and stored as the attempt time; nothing else reads that time.
        let now = session.loopDate
        for entry in pending where force || isDue(entry, now: now) {
            do {
                let line = ChatPayload.privateLine(id: try NodeID(hex: entry.message.id), text: entry.message.text,
                                                   sentAtMilliseconds: ChatPayload.milliseconds(entry.message.sentAt),
                                                   sequence: entry.sequence, floor: floor, action: entry.message.isAction)
                try await channel.send(line.encoded, to: route.peer)
                let wasQueued = entry.message.status == .queued
                try await db { try $0.recordAttempt(ids: [entry.message.id], now: now) }
                if wasQueued, entry.message.id != quietID, let stored = try await db({ try $0.message(id: entry.message.id) }) { await reportStatus(stored) }
            } catch {
                logger.debug("private line not sent yet", metadata: ["message.id": "\(entry.message.id)", "error": "\(error)"])
                return
            }
        }
    }

    private func isDue(_ entry: OutboxEntry, now: Date) -> Bool {
        guard let last = entry.lastAttemptAt else { return true }
        let doublings = min(max(entry.attempts - 1, 0), 16)
        var wait = configuration.retryInterval
        for _ in 0..<doublings where wait < configuration.maxRetryInterval { wait *= 2 }
        wait = min(wait, configuration.maxRetryInterval)
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        return now.timeIntervalSince(last) >= seconds
    }

    /// Retries, expiry and held lines, every tick.
    private func maintain() async {
        let now = Date()
        do {
            if lastPrune.map({ now.timeIntervalSince($0) >= 600 }) ?? true {
                lastPrune = now
                try await db { try $0.prune(now: now) }
            }
            for expired in try await db({ try $0.expire(now: now) }) { await reportStatus(expired) }
            for released in try await db({ try $0.releaseHeld(now: now) }) { await events.push(.message(released)) }
            // Held receipts whose route appeared without this node hearing of it in order.
            for destination in pendingReceipts.destinations {
                if let route = session.reachablePeers.first(where: { $0.peer.id == destination }) { await flushReceipts(to: route.peer) }
            }
            for destination in try await db({ try $0.pendingDestinations() }) {
                if let destination { await flush(to: destination, force: false) } else { await flushBroadcasts() }
            }
        } catch {
            report(error)
        }
    }

    // MARK: Receiving

    /// A room line: opened with the key of the joined room it names (others are ignored: this
    /// node is not in that room), stored once, shown.
    private func receivedRoom(_ chat: RoomChatPayload, from sender: PeerID, hops: Int) async {
        if await isBlocked(sender.id) { return }
        do {
            guard let key = try await keys().values.first(where: { $0.id == chat.roomID }) else { return }
            let text = try key.open(chat, origin: sender.id)
            guard let id = try? NodeID(bytes: text.messageID), text.text.utf8.count <= RoomLimits.maxTextBytes else {
                logger.notice("dropped a room line: bad id or text over the limit", metadata: ["mesh.origin": "\(sender)"])
                return
            }
            let sentAt = Date(timeIntervalSince1970: Double(text.sentAtMs) / 1000)
            if let stored = try await db({ try $0.receiveBroadcast(id: id.hex, from: sender.id, fromName: sender.displayName, text: text.text,
                                                                 sentAt: sentAt, hops: hops, room: RoomRef(name: key.name, hasPassword: key.hasPassword),
                                                                 isAction: text.action, now: Date()) }) {
                await events.push(.message(stored))
            }
        } catch let error as RoomError {
            logger.notice("dropped a room line", metadata: ["mesh.origin": "\(sender)", "error": "\(error)"])
        } catch {
            report(error)
        }
    }

    private func handle(_ event: SessionEvent) async {
        switch event {
        case .reachabilityChanged(let peer, let route):
            await events.push(.session(event))
            if route != nil {
                await flushReceipts(to: peer)
                await flush(to: peer.id, force: true)
            }
        case .peerChanged(_, .connected):
            await events.push(.session(event))
            await flushBroadcasts()
        case .keyRotated(let peer, let previous):
            // A verified rotation (§20.2): the conversation and the lines queued for the old key
            // are the new key's, before its reachability (which comes next) flushes them.
            do {
                let moved = try await db { try $0.moveConversation(from: previous, to: peer.id) }
                logger.info("a peer rotated its key: its conversation moved", metadata: [
                    "mesh.peer": "\(peer.id)", "mesh.previous": "\(previous)", "chat.history": "\(moved.history)", "chat.queued": "\(moved.queued)"])
                try await blockFollowsRotation(from: previous, to: peer.id)
            } catch {
                report(error)
            }
            await events.push(.session(event))
        case .keyRotationDisputed(let peer, let previous, _):
            // A second successor of one retired key (§20.2): its conversation stays where the
            // first statement put it, but a block follows every claimant.
            do {
                try await blockFollowsRotation(from: previous, to: peer.id)
            } catch {
                report(error)
            }
            await events.push(.session(event))
        default:
            await events.push(.session(event))
        }
    }

    /// A message on the chat's channel: a line to everyone, a private line or a receipt (§17).
    /// Anything else is dropped with a logged reason; it never affects the link it came on.
    private func received(_ message: ChannelMessage) async {
        let sender = message.sender, hops = message.hops
        let payload: ChatPayload?
        do {
            payload = try ChatPayload.decode(message.payload, delivery: message.delivery)
        } catch {
            logger.notice("dropped a chat message", metadata: ["mesh.origin": "\(sender.id)", "reason": "\(error)"])
            return
        }
        switch payload {
        case .line(let id, let text, let sentAt, let action)?:
            if await isBlocked(sender.id) { return }
            do {
                if let stored = try await db({ try $0.receiveBroadcast(id: id.hex, from: sender.id, fromName: sender.displayName,
                                                                       text: text, sentAt: ChatPayload.date(sentAt), hops: hops,
                                                                       isAction: action, now: Date()) }) {
                    await events.push(.message(stored))
                }
            } catch {
                report(error)
            }
        case .privateLine(let id, let text, let sentAt, let sequence, let floor, let action)?:
            let incoming = IncomingPrivate(id: id.hex, from: sender.id, fromName: sender.displayName, text: text,
                                           sentAt: ChatPayload.date(sentAt), hops: hops, sequence: sequence, floor: floor,
                                           isAction: action)
            await receivedPrivate(incoming, from: sender)
        case .receipt(let ids)?:
            do {
                for stored in try await db({ try $0.delivered(ids: ids.map(\.hex), from: sender.id, now: Date()) }) { await reportStatus(stored) }
            } catch {
                report(error)
            }
        case nil:
            logger.debug("ignored a chat message of a kind this node does not know (a newer peer's)", metadata: ["mesh.origin": "\(sender.id)"])
        }
    }

    private func receivedPrivate(_ incoming: IncomingPrivate, from sender: PeerID) async {
        if await isBlocked(sender.id) {
            await acknowledge(incoming.id, to: sender)
            return
        }
        do {
            let outcome = try await db { try $0.receive(incoming, now: Date()) }
            if let refused = outcome.refused {
                logger.notice("refused a private line", metadata: ["mesh.peer": "\(sender.id)", "reason": "\(refused)"])
            }
            // Stored (or already stored) before the receipt goes out: a receipt means "on disk".
            if outcome.acknowledge {
                await acknowledge(incoming.id, to: sender)
            }
            for message in outcome.deliver { await events.push(.message(message)) }
        } catch {
            report(error)
        }
    }

    /// Sends a receipt, or holds it until a route back to `sender` appears (§17.4): a line can
    /// arrive over a route before the way back exists (a heal reaches one side first).
    private func acknowledge(_ id: String, to sender: PeerID) async {
        do {
            try await sendReceipt(for: [id], to: sender)
        } catch {
            logger.debug("receipt held until a route back appears", metadata: ["mesh.peer": "\(sender.id)", "message.id": "\(id)", "error": "\(error)"])
            pendingReceipts.hold(id, for: sender.id)
        }
    }

    /// Sends the receipts held for a node that just became reachable.
    private func flushReceipts(to peer: PeerID) async {
        let ids = pendingReceipts.take(for: peer.id)
        guard !ids.isEmpty else { return }
        do {
            try await sendReceipt(for: ids, to: peer)
            logger.debug("sent held receipts", metadata: ["mesh.peer": "\(peer.id)", "receipt.ids": "\(ids.count)"])
        } catch {
            for id in ids { pendingReceipts.hold(id, for: peer.id) }
        }
    }

    /// Sends receipts for lines from `peer`, at most ``ChatLimits/maxReceiptIDs`` ids in each,
    /// sealed on the chat's channel.
    private func sendReceipt(for ids: [String], to peer: PeerID) async throws {
        let nodes = ids.compactMap { try? NodeID(hex: $0) }
        var start = 0
        while start < nodes.count {
            let chunk = Array(nodes[start..<min(nodes.count, start + ChatLimits.maxReceiptIDs)])
            try await channel.send(ChatPayload.receipt(chunk).encoded, to: peer)
            start += ChatLimits.maxReceiptIDs
        }
    }

    /// Runs store calls off the event loops: they wait for fsync (durability, §17.6).
    private func db<T: Sendable>(_ body: @escaping @Sendable (MessageStore) throws -> T) async throws -> T {
        let store = self.store
        return try await Session.runBlocking { try body(store) }
    }

    private func report(_ error: any Error) {
        // Stopping cancels work in progress; that is no failure.
        if error is CancellationError || Task.isCancelled { return }
        logger.error("messenger: \(error)")
        _ = events.offer(.failure("\(error)"))
    }
}

/// A line the messenger refuses before storing it.
public struct MessengerError: Error, CustomStringConvertible {
    /// What was wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
