import Foundation
import Synchronization
import MeshSession
import MeshStore

/// The chat's ``NameBook`` (PROTOCOL.md §20.3) with its storage: the setting ``settingKey`` of
/// the message store (the data directory's database, 0600 like the rest of the state).
///
/// Names are fed in as the session learns them (handshakes, signed adverts) and saved by
/// ``saveIfDirty(to:)``, which the chat calls every few seconds: a new node or name is saved at the
/// next call (so a flood of identities costs one write per call, not one per node), a sighting that
/// only moves a last-seen time at most every ``sightingsInterval``; the user's `/trust` and
/// `/untrust` are saved before they are confirmed. Thread-safe.
public final class TrustBook: Sendable {
    /// The setting the book is kept under (its JSON, ``NameBook/encoded``).
    static let settingKey = "chat.names"

    private struct State {
        var book = NameBook()
        /// A node or a name was added (or the user's verification changed) since the last save.
        var dirty = false
        /// Only last-seen times changed since the last save.
        var seen = false
        /// When the book was last saved.
        var savedAt = ContinuousClock.now
        /// The claims already reported (node id and normalised name), so each is reported once a run.
        var reported: Set<String> = []
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
    /// - Returns: a sentence when a stored book exists but cannot be read (the book starts empty),
    ///   else `nil`.
    public func load(from store: MessageStore) async -> String? {
        do {
            let text = try await Session.runBlocking { try store.setting(Self.settingKey) }
            guard let text else { return nil }
            let book = try NameBook(decoding: Data(text.utf8))
            state.withLock { $0.book = book }
            return nil
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
                state.dirty = true
            } else {
                state.seen = true
            }
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
            state.dirty = true
            return state.book.isVerified(new)
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
            state.dirty = true
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
            state.dirty = true
        }
        try await save(to: store)
    }

    /// Saves the book when a node or a name was added since the last save, or sightings are
    /// older than ``sightingsInterval``.
    /// - Parameters:
    ///   - store: where the book is kept.
    ///   - now: the clock (tests).
    func saveIfDirty(to store: MessageStore, now: ContinuousClock.Instant = .now) async {
        let due = state.withLock { $0.dirty || ($0.seen && now - $0.savedAt >= Self.sightingsInterval) }
        guard due else { return }
        try? await save(to: store)
    }

    /// Saves the book if anything changed since the last save (at the end of a run).
    /// - Parameter store: where the book is kept.
    public func saveChanges(to store: MessageStore) async {
        guard state.withLock({ $0.dirty || $0.seen }) else { return }
        try? await save(to: store)
    }

    private func save(to store: MessageStore) async throws {
        let text = state.withLock { state in
            state.dirty = false
            state.seen = false
            state.savedAt = .now
            return String(decoding: state.book.encoded, as: UTF8.self)
        }
        do {
            try await Session.runBlocking { try store.setSetting(Self.settingKey, to: text) }
        } catch {
            state.withLock { $0.dirty = true }
            throw error
        }
    }

    /// Milliseconds since 1970, 0 for a clock before then (never traps).
    static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(exactly: (date.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
    }
}
