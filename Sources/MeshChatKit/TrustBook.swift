import Foundation
import Synchronization
import MeshSession
import MeshStore

/// The chat's ``NameBook`` (PROTOCOL.md §20.3) with its storage: one row per node in the message
/// store's `name_record` table (the data directory's database, 0600 like the rest of the state).
///
/// Names are fed in as the session learns them (handshakes, signed adverts) and saved by
/// ``saveIfDirty(to:)``, which the chat calls every few seconds: a new node or name is saved at the
/// next call, a sighting that only moves a last-seen time at most every ``sightingsInterval``, and a
/// save writes only the nodes that changed (a flood of identities costs one row per new node, never
/// the whole book again); the user's `/trust`, `/untrust` and `/forget` are saved before they are
/// confirmed. Reading is bounded: at most ``NameBook/maxNodes`` rows of at most ``maxRecordBytes``
/// each; a longer or damaged row is left out and reported. Thread-safe.
public final class TrustBook: Sendable {
    /// The setting an earlier version kept the whole book under (its JSON, ``NameBook/encoded``);
    /// read once, then moved to rows.
    static let settingKey = "chat.names"
    /// The longest stored row read (16 names of 63 bytes, escaped, fit with room to spare).
    static let maxRecordBytes = 8_192
    /// The longest book kept under ``settingKey`` that is read.
    static let maxLegacyBytes = 16 << 20

    private struct State {
        var book = NameBook()
        /// Nodes added, renamed, verified, moved or forgotten since the last save.
        var changed: Set<NodeID> = []
        /// Nodes whose last-seen time alone changed since the last save.
        var sighted: Set<NodeID> = []
        /// The book came from ``settingKey``: the next save writes every row and removes the setting.
        var fromSetting = false
        /// When the book was last saved.
        var savedAt = ContinuousClock.now
        /// The claims already reported (node id and normalised name), so each is reported once a run.
        var reported: Set<String> = []

        mutating func noteEvicted() {
            changed.formUnion(book.takeEvicted())
        }
    }
    /// The most claims remembered as reported (then the set starts anew: a claim may be reported again).
    static let maxReported = 10_000
    /// The longest a sighting (a last-seen time) waits to be saved.
    static let sightingsInterval: Duration = .seconds(300)
    private let state = Mutex(State())

    /// An empty book.
    public init() {}

    /// A copy of the book now.
    public var book: NameBook { state.withLock { $0.book } }

    /// Loads the stored book, replacing this one.
    /// - Parameter store: the message store.
    /// - Returns: a sentence when stored rows were left out (too long, damaged, too many) or cannot
    ///   be read, else `nil`.
    public func load(from store: MessageStore) async -> String? {
        let maxNodes = NameBook().maxNodes
        do {
            let (rows, oversized, beyond) = try await Session.runBlocking { try store.nameRecords(maxBytes: Self.maxRecordBytes, limit: maxNodes) }
            var book = NameBook()
            var problems: [String] = []
            var fromSetting = false
            if rows.isEmpty, oversized == 0 {
                let (text, tooLong) = try await Session.runBlocking { try store.setting(Self.settingKey, maxBytes: Self.maxLegacyBytes) }
                if tooLong { problems.append("the stored name book is over \(Self.maxLegacyBytes) bytes") }
                if let text {
                    do {
                        book = try NameBook(decoding: Data(text.utf8))
                    } catch {
                        problems.append("the stored name book could not be read (\(error))")
                    }
                }
                fromSetting = text != nil || tooLong
            }
            var damaged = 0
            for (hex, text) in rows {
                guard let node = try? NodeID(hex: hex),
                      let record = try? JSONDecoder().decode(NameBook.Record.self, from: Data(text.utf8)),
                      (try? book.restore(node, record)) != nil else {
                    damaged += 1
                    continue
                }
            }
            if oversized > 0 { problems.append("\(oversized) longer than \(Self.maxRecordBytes) bytes") }
            if damaged > 0 { problems.append("\(damaged) damaged") }
            if beyond > 0 { problems.append("\(beyond) beyond \(maxNodes) nodes") }
            state.withLock {
                $0.book = book
                $0.fromSetting = fromSetting
            }
            return problems.isEmpty ? nil : "name book rows left out: " + problems.joined(separator: ", ") + "; those names are learnt anew"
        } catch {
            return "the name book could not be read (\(error)); names are learnt anew"
        }
    }

    /// Records that `peer` appeared under its display name (a handshake or a signed advert).
    /// - Parameters:
    ///   - peer: the peer with the name it claims.
    ///   - now: the wall clock.
    /// - Returns: the name's holder when `peer` is another key claiming it and this claim was not
    ///   reported yet in this run (say so once), else `nil`.
    func observe(_ peer: PeerID, now: Date = Date()) -> NodeID? {
        state.withLock { state in
            let before = state.book.records[peer.id]?.names
            let standing = state.book.observe(name: peer.displayName, node: peer.id, atMilliseconds: Self.milliseconds(now))
            if before == nil || before != state.book.records[peer.id]?.names {
                state.changed.insert(peer.id)
            } else {
                state.sighted.insert(peer.id)
            }
            state.noteEvicted()
            guard case .newKey(let holder) = standing else { return nil }
            if state.reported.count >= Self.maxReported { state.reported = [] }
            return state.reported.insert(peer.id.hex + " " + NameBook.normalised(peer.displayName)).inserted ? holder : nil
        }
    }

    /// Hands what the book knows of `old` to `new` after a verified key rotation (§20.2); saved at
    /// the next ``saveIfDirty(to:)``.
    /// - Returns: whether `new` is verified now, or `nil` when the book did not know `old`.
    func rotate(from old: NodeID, to new: NodeID) -> Bool? {
        state.withLock { state in
            guard old != new, state.book.records[old] != nil else { return nil }
            state.book.rotate(from: old, to: new)
            state.changed.formUnion([old, new])
            return state.book.isVerified(new)
        }
    }

    /// A retired key named a second successor (§20.2, it leaked): the verification `successor`
    /// holds is withdrawn, since it may have come by the rotation (the user compares safety numbers
    /// again). Its names stay with it. Saved at the next ``saveIfDirty(to:)``.
    /// - Returns: whether `successor` was verified.
    func dispute(_ successor: NodeID) -> Bool {
        state.withLock { state in
            guard state.book.isVerified(successor) else { return false }
            state.book.setVerified(successor, false, atMilliseconds: Self.milliseconds(Date()))
            state.changed.insert(successor)
            return true
        }
    }

    /// Releases a name (PROTOCOL.md §20.3: the user decided its holder is gone), and saves the book.
    /// - Parameters:
    ///   - name: the name, as typed.
    ///   - store: where the book is kept.
    /// - Returns: the node that held it, or `nil` when nobody did (nothing changes).
    /// - Throws: ``MeshStore/StoreError`` when saving fails (the change stays in memory).
    func forget(name: String, store: MessageStore) async throws -> NodeID? {
        let holder = state.withLock { state -> NodeID? in
            guard let holder = state.book.holder(of: name) else { return nil }
            state.book.forget(name: name)
            state.changed.insert(holder)
            return holder
        }
        guard holder != nil else { return nil }
        try await save(to: store)
        return holder
    }

    /// Feeds the book what a session event proves with a key (PROTOCOL.md §20.3): a neighbour's
    /// handshake, a signed advert (reachability, renames), a verified key rotation (§20.2). The chat
    /// and `meshchat send` both learn names this way.
    /// - Parameters:
    ///   - event: the event.
    ///   - me: this node (its own name is not bound).
    /// - Returns: for a key claiming a name another key holds, reported for the first time this run,
    ///   the claimant and the holder; else `nil`.
    public func learn(from event: SessionEvent, me: NodeID) -> (claimant: PeerID, holder: NodeID)? {
        let peer: PeerID
        switch event {
        case .peerChanged(let changed, .connected): peer = changed
        case .reachabilityChanged(let changed, .some): peer = changed
        case .peerRenamed(let changed, _): peer = changed
        case .keyRotated(let new, let previous):
            _ = rotate(from: previous, to: new.id)
            return nil
        case .keyRotationDisputed(_, _, let successor):
            _ = dispute(successor)
            return nil
        default: return nil
        }
        guard peer.id != me, let holder = observe(peer) else { return nil }
        return (peer, holder)
    }

    /// Marks a peer verified or not, and saves the book.
    /// - Parameters:
    ///   - peer: the peer.
    ///   - verified: whether the user compared the safety number.
    ///   - store: where the book is kept.
    /// - Throws: ``MeshStore/StoreError`` when saving fails (the change stays in memory).
    func setVerified(_ peer: PeerID, _ verified: Bool, store: MessageStore) async throws {
        state.withLock { state in
            state.book.setVerified(peer.id, verified, atMilliseconds: Self.milliseconds(Date()))
            state.changed.insert(peer.id)
            state.noteEvicted()
        }
        try await save(to: store)
    }

    /// Saves the book when a node or a name was added since the last save, or sightings are
    /// older than ``sightingsInterval``.
    /// - Parameters:
    ///   - store: where the book is kept.
    ///   - now: the clock (tests).
    func saveIfDirty(to store: MessageStore, now: ContinuousClock.Instant = .now) async {
        let due = state.withLock { !$0.changed.isEmpty || $0.fromSetting || (!$0.sighted.isEmpty && now - $0.savedAt >= Self.sightingsInterval) }
        guard due else { return }
        try? await save(to: store)
    }

    /// Saves the book if anything changed since the last save (at the end of a run).
    /// - Parameter store: where the book is kept.
    public func saveChanges(to store: MessageStore) async {
        guard state.withLock({ !$0.changed.isEmpty || !$0.sighted.isEmpty || $0.fromSetting }) else { return }
        try? await save(to: store)
    }

    /// Writes the rows of the nodes that changed (every row, once, after reading an earlier
    /// version's setting, which is then removed).
    private func save(to store: MessageStore) async throws {
        let (changes, nodes, all) = state.withLock { state -> ([String: String?], Set<NodeID>, Bool) in
            let all = state.fromSetting
            let nodes = all ? Set(state.book.records.keys) : state.changed.union(state.sighted)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var changes: [String: String?] = [:]
            for node in nodes {
                // updateValue, not a subscript: assigning nil through the subscript would drop the
                // entry, and the row of a node the book no longer holds (rotated away, evicted) would
                // stay on disk, its names then clashing with their new holder's at the next load.
                changes.updateValue(state.book.records[node].flatMap { try? encoder.encode($0) }.map { String(decoding: $0, as: UTF8.self) },
                                    forKey: node.hex)
            }
            state.changed = []
            state.sighted = []
            state.fromSetting = false
            state.savedAt = .now
            return (changes, nodes, all)
        }
        do {
            try await Session.runBlocking {
                try store.saveNameRecords(changes, replacingAll: all)
                if all { try store.setSetting(Self.settingKey, to: nil) }
            }
        } catch {
            state.withLock {
                $0.changed.formUnion(nodes)
                $0.fromSetting = $0.fromSetting || all
            }
            throw error
        }
    }

    /// Milliseconds since 1970, 0 for a clock before then (never traps).
    static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(exactly: (date.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
    }
}
