import Crypto
import Foundation
import Logging
import MeshLink
import MeshRatchet
import MeshWire
import NIOConcurrencyHelpers

/// The node's end-to-end sessions and signed prekeys (PROTOCOL.md §19.6–§19.8), in memory and, for a
/// node with a data directory, on disk where only its user can read them: `prekeys` and
/// `sessions/NODE-ID` (mode 0600, in directories of mode 0700).
///
/// The shell around ``PairSessions`` and ``PrekeyRing``: it holds them under one lock, seals and opens
/// with ``RatchetSealing``, and writes a pair's sessions to disk before a packet that needs it leaves
/// (a new session, a new sending chain, or the end of a reservation, §19.7), and otherwise at most a
/// second after they changed (``flush()``, which the session calls on its tick and when it closes).
/// A store before a packet leaves is one `pwrite` into the page cache (``SessionFiles``,
/// ``SessionFileFormat``: two checksummed slots per file, taken in turn), which a process killed right
/// after cannot lose; it cost a replace by rename up to session 16, about 1.25 ms on ext4 at every
/// turn of the ratchet, i.e. on every message of a conversation that takes turns.
///
/// Bounds: sessions with at most ``maxPairs`` nodes are kept (the least recently used are forgotten,
/// on disk too), and at most ``maxSkippedInMemory`` skipped message keys are held in memory across
/// them (beyond that the least recently used pairs are written out and dropped from memory, to be
/// read back when they are next used).
///
/// This type is thread-safe. The lock is held for one seal or open (symmetric work, plus an X25519
/// agreement when a session begins or the ratchet turns) and, rarely, one file write.
final class EndToEndStore: Sendable {
    /// The most nodes whose sessions are kept.
    static let maxPairs = 1_024
    /// The most skipped message keys held in memory across all pairs.
    static let maxSkippedInMemory = 50_000

    private struct Pair {
        var sessions: PairSessions
        var dirty = false
        var lastUsed: UInt64 = 0
    }

    private struct State {
        var pairs: [NodeID: Pair] = [:]
        var ring: PrekeyRing
        var signedPrekey: SignedPrekey
        var tick: UInt64 = 0
        var skippedInMemory = 0
        /// Nodes with sessions on disk (kept to bound them; filled from the directory at start).
        var onDisk: Set<NodeID> = []
        /// The session files, for a node with a data directory.
        var files: SessionFiles?
    }

    private let identity: LocalIdentity
    private let directory: String?
    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    /// The ratchet's limits for sealed packets (§19.4): a message may make this node derive at most 128
    /// skipped keys (a forged header costs that many chain steps, one ChaCha20 block each, before the
    /// tag fails: well under a millisecond, not the 10–20 ms of the general MAX_SKIP of 1,000), and a session keeps at most 512.
    /// Larger gaps end in a repair (§19.7).
    let limits: RatchetLimits = {
        var limits = RatchetLimits()
        limits.maxSkip = 128
        limits.maxStoredSkipped = 512
        return limits
    }()

    /// Opens the store, reading (or making) the prekeys.
    /// - Parameters:
    ///   - identity: this node's keys.
    ///   - dataDirectory: the node's data directory; `nil` keeps everything in memory (lost on exit).
    ///   - logger: where damaged files and write failures are logged.
    init(identity: LocalIdentity, dataDirectory: String?, logger: Logger) {
        self.identity = identity
        self.logger = logger
        let now = MeshNode.nowMilliseconds
        var random = SystemRandomNumberGenerator()
        var ring: PrekeyRing?
        var onDisk: Set<NodeID> = []
        if let dataDirectory {
            let directory = dataDirectory + "/sessions"
            self.directory = directory
            Self.makeDirectory(directory, logger: logger)
            if let stored = Self.read(dataDirectory + "/prekeys", limit: 4_096, logger: logger) {
                do {
                    ring = try PrekeyRing(serialized: stored)
                } catch {
                    logger.warning("the stored prekeys are damaged; making new ones (sessions begun on the old ones will be begun again)",
                                   metadata: ["e2e.error": "\(error)"])
                }
            }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                if let node = try? NodeID(hex: name) { onDisk.insert(node) }
            }
        } else {
            self.directory = nil
        }
        var current = ring ?? PrekeyRing(now: now, using: &random)
        let rotated = current.rotateIfDue(now: now, using: &random)
        let signed = current.signed(by: identity.signingKey)
        state = NIOLockedValueBox(State(ring: current, signedPrekey: signed, onDisk: onDisk,
                                        files: directory.map { SessionFiles(directory: $0) }))
        if ring == nil || rotated, let dataDirectory {
            Self.write(current.serialized, to: dataDirectory + "/prekeys", logger: logger)
        }
    }

    deinit {
        state.withLockedValue { $0.files?.closeAll() }
    }

    /// The current signed prekey, for adverts and handshakes.
    var signedPrekey: SignedPrekey { state.withLockedValue { $0.signedPrekey } }

    /// Replaces the current prekey when a week has passed (§19.1).
    /// - Returns: the new signed prekey to publish, or `nil` when nothing changed.
    func rotatePrekeyIfDue() -> SignedPrekey? {
        var random = SystemRandomNumberGenerator()
        let now = MeshNode.nowMilliseconds
        let (changed, bytes): (SignedPrekey?, Data?) = state.withLockedValue { state in
            let before = state.ring.ids
            guard state.ring.rotateIfDue(now: now, using: &random) || state.ring.ids != before else { return (nil, nil) }
            let rotated = state.ring.ids.first != before.first
            if rotated { state.signedPrekey = state.ring.signed(by: identity.signingKey) }
            return (rotated ? state.signedPrekey : nil, state.ring.serialized)
        }
        if let bytes, let directory { Self.write(bytes, to: (directory as NSString).deletingLastPathComponent + "/prekeys", logger: logger) }
        return changed
    }

    /// Seals content for a node (§19.6), storing its sessions first when that is needed.
    /// - Parameters:
    ///   - content: what to send.
    ///   - displayName: this node's name.
    ///   - sealedAtMilliseconds: the wall clock.
    ///   - header: the routing header.
    ///   - peer: the node's static key and verified prekey, when known.
    ///   - fresh: begin a new session (a repair).
    /// - Returns: the bytes for `Routed.sealed`.
    /// - Throws: ``EndToEndError``.
    func seal(_ content: SealedPayload.OneOf_Content, displayName: String, sealedAtMilliseconds: Int64, header: SealHeader,
              peer: PairSessions.PeerKeys?, fresh: Bool = false) throws(EndToEndError) -> Data {
        var random = SystemRandomNumberGenerator()
        let node = header.destination
        let result: Result<Data, EndToEndError> = state.withLockedValue { state in
            var pair = load(node, in: &state)
            do throws(EndToEndError) {
                let sealed = try RatchetSealing.seal(content, displayName: displayName, sealedAtMilliseconds: sealedAtMilliseconds,
                                                     header: header, sessions: &pair.sessions, peer: peer, identity: identity,
                                                     fresh: fresh, limits: limits, using: &random)
                pair.dirty = true
                if sealed.mustStore { store(&pair, node: node, in: &state) }
                keep(pair, node: node, in: &state)
                return .success(sealed.packet)
            } catch {
                keep(pair, node: node, in: &state)
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Opens a packet sealed for this node; the sessions change only when it opens and checks out.
    /// - Parameters:
    ///   - sealed: `Routed.sealed`.
    ///   - header: its routing header.
    ///   - knownStaticKey: the origin's static key as verified already, if any.
    /// - Returns: the plaintext and the session it came on.
    /// - Throws: ``EndToEndError`` (`unknownSession` asks for a repair, §19.7).
    func open(_ sealed: Data, header: SealHeader, knownStaticKey: Curve25519.KeyAgreement.PublicKey?) throws(EndToEndError) -> (SealedPayload, UInt64) {
        var random = SystemRandomNumberGenerator()
        let node = header.origin
        let result: Result<(SealedPayload, UInt64), EndToEndError> = state.withLockedValue { state in
            var pair = load(node, in: &state)
            let ring = state.ring
            do throws(EndToEndError) {
                let opened = try RatchetSealing.open(sealed, header: header, sessions: pair.sessions, identity: identity,
                                                     prekey: { ring.privateKey(id: $0) }, knownStaticKey: knownStaticKey,
                                                     limits: limits, using: &random)
                pair.sessions = opened.sessions
                pair.dirty = true
                keep(pair, node: node, in: &state)
                return .success((opened.payload, opened.sessionID))
            } catch {
                if !pair.sessions.isEmpty || state.pairs[node] != nil { keep(pair, node: node, in: &state) }
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// What opening `sealed` from `origin` would cost (§13.11), for charging it to the neighbour it
    /// came from before doing it. Reads only what is in memory: a pair kept on disk only counts as
    /// the most a packet may cost (its next open reads it in).
    /// - Parameters:
    ///   - sealed: the packet (`Routed.sealed`).
    ///   - origin: the node that sealed it.
    func openingWork(of sealed: Data, from origin: NodeID) -> RatchetWork {
        state.withLockedValue { state in
            if let pair = state.pairs[origin] { return pair.sessions.openingWork(of: sealed) }
            if state.onDisk.contains(origin) { return .most(limits) }
            return PairSessions().openingWork(of: sealed)
        }
    }

    /// The other end could not open a session's messages: stop preferring it (§19.7).
    func demote(_ sessionID: UInt64, of node: NodeID) {
        state.withLockedValue { state in
            var pair = load(node, in: &state)
            pair.sessions.demote(sessionID)
            pair.dirty = true
            keep(pair, node: node, in: &state)
        }
    }

    /// Writes every pair changed since it was last stored.
    func flush() {
        state.withLockedValue { state in
            for (node, var pair) in state.pairs where pair.dirty {
                store(&pair, node: node, mayCompact: true, in: &state)
                state.pairs[node] = pair
            }
        }
    }

    /// Forgets every session, in memory and on disk (for tests: a node that lost its state).
    func forgetAll() {
        state.withLockedValue { state in
            for node in Array(state.pairs.keys) + Array(state.onDisk) { forget(node, in: &state) }
        }
    }

    /// How many nodes' sessions are held in memory (for tests).
    var pairsInMemory: Int { state.withLockedValue { $0.pairs.count } }

    /// How many session files are open (for tests; at most ``SessionFiles/maxOpenDescriptors``).
    var openSessionFiles: Int { state.withLockedValue { $0.files?.openDescriptorCount ?? 0 } }

    // MARK: Internals (called with the lock held)

    private func load(_ node: NodeID, in state: inout State) -> Pair {
        state.tick += 1
        if var pair = state.pairs[node] {
            pair.lastUsed = state.tick
            return pair
        }
        var pair = Pair(sessions: PairSessions(), lastUsed: state.tick)
        guard state.onDisk.contains(node), let read = state.files?.read(node, logger: logger) else { return pair }
        var damage: String?
        switch read {
        case .none:
            break
        case .damaged(let reason):
            damage = reason
        case .sessions(let bytes):
            do {
                pair.sessions = try PairSessions(serialized: bytes, limits: limits)
                // Restoring moved sending chains past their reservations: store that before any send.
                pair.dirty = true
            } catch {
                damage = "\(error)"
            }
        }
        if let damage {
            logger.warning("a stored end-to-end session is damaged; it will be begun again", metadata: [
                "mesh.node": "\(node.shortHex)", "e2e.error": "\(damage)",
            ])
            state.files?.remove(node)
            state.onDisk.remove(node)
        }
        return pair
    }

    /// Puts a pair back, then enforces the bounds.
    private func keep(_ pair: Pair, node: NodeID, in state: inout State) {
        let before = state.pairs[node]?.sessions.skippedCount ?? 0
        state.pairs[node] = pair
        state.skippedInMemory += pair.sessions.skippedCount - before
        while state.pairs.count > 1, state.skippedInMemory > Self.maxSkippedInMemory || state.pairs.count > Self.maxPairs {
            guard let victim = state.pairs.filter({ $0.key != node }).min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { break }
            let oldest = victim.key
            var evicted = victim.value
            if state.pairs.count > Self.maxPairs {
                forget(oldest, in: &state)
            } else {
                if evicted.dirty { store(&evicted, node: oldest, in: &state) }
                if directory == nil { forget(oldest, in: &state) }  // nowhere to keep it
                else { state.skippedInMemory -= evicted.sessions.skippedCount; state.pairs[oldest] = nil }
            }
        }
        if state.onDisk.count > Self.maxPairs, let victim = state.onDisk.first(where: { state.pairs[$0] == nil }) {
            forget(victim, in: &state)
        }
    }

    private func forget(_ node: NodeID, in state: inout State) {
        state.skippedInMemory -= state.pairs[node]?.sessions.skippedCount ?? 0
        state.pairs[node] = nil
        if state.onDisk.remove(node) != nil { state.files?.remove(node) }
    }

    /// Stores a pair's sessions (one `pwrite` unless its file must be written anew, ``SessionFiles``).
    /// `mayCompact` only off the packet path.
    private func store(_ pair: inout Pair, node: NodeID, mayCompact: Bool = false, in state: inout State) {
        pair.dirty = false
        guard state.files != nil else { return }
        if state.files?.write(pair.sessions.serialized, for: node, mayCompact: mayCompact, logger: logger) == true {
            state.onDisk.insert(node)
        }
    }

    // MARK: Files

    private static func makeDirectory(_ path: String, logger: Logger) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            logger.error("could not make the end-to-end session directory; sessions will not survive a restart",
                         metadata: ["e2e.path": "\(path)", "e2e.error": "\(error)"])
        }
    }

    static func read(_ path: String, limit: Int, logger: Logger) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1) else { return nil }
        guard data.count <= limit else {
            logger.warning("ignored an oversized end-to-end state file", metadata: ["e2e.path": "\(path)", "e2e.limit": "\(limit)"])
            return nil
        }
        return data
    }

    /// Writes a file of mode 0600 by a rename, so a reader sees the old or the new bytes, never half.
    @discardableResult
    static func write(_ data: Data, to path: String, logger: Logger) -> Bool {
        let temporary = path + ".new"
        let descriptor = Foundation.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            logger.error("could not write end-to-end state", metadata: ["e2e.path": "\(path)", "e2e.errno": "\(errno)"])
            return false
        }
        let written = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let count = Foundation.write(descriptor, base + offset, bytes.count - offset)
                if count < 0 { if errno == EINTR { continue } else { return false } }
                offset += count
            }
            return true
        }
        _ = fchmod(descriptor, 0o600)
        close(descriptor)
        guard written, rename(temporary, path) == 0 else {
            logger.error("could not write end-to-end state", metadata: ["e2e.path": "\(path)", "e2e.errno": "\(errno)"])
            unlink(temporary)
            return false
        }
        return true
    }
}
