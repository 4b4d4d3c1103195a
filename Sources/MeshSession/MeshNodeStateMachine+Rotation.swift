import Crypto
import struct Foundation.Data
import Logging
import MeshLink
import MeshTrust
import MeshWire

/// What this node learned of other nodes' key rotations (PROTOCOL.md §20.2): the verdict on each
/// statement it checked, and the verified chain that leads to each node's current key.
///
/// A statement costs two Ed25519 verifications; adverts repeat their statements every refresh
/// (§13.2.3), so each statement is checked once and its verdict remembered (at most
/// ``maxChecked``, the oldest forgotten first). A value with no I/O, kept by ``MeshNodeStateMachine``.
struct RotationBook: Sendable {
    /// The most verdicts remembered.
    static let maxChecked = 4_096
    /// The most nodes whose chains are remembered.
    static let maxChains = 4_096

    /// A verified step from one node to its successor.
    struct Step: Sendable, Equatable {
        /// The node whose key was retired.
        var old: NodeID
        /// The node holding the new key.
        var new: NodeID
        /// Set when an earlier verified statement named another successor for `old` (the retired
        /// key signed twice: it leaked, §20.2): that successor, which keeps what it was given.
        var disputes: NodeID?
    }

    private var verdicts: [KeyRotation: Bool] = [:]
    private var verdictOrder: [KeyRotation] = []
    private var chains: [NodeID: [KeyRotation]] = [:]
    private var chainOrder: [NodeID] = []
    /// The successor the first verified statement named for each retired node (at most ``maxChains``).
    private var successors: [NodeID: NodeID] = [:]
    private var successorOrder: [NodeID] = []

    /// The verified statements that lead to a node's current key, newest first (empty when none).
    func chain(of node: NodeID) -> [KeyRotation] { chains[node] ?? [] }

    /// Records this node's own rotations (its identity's statements, newest first) as the first
    /// successors of its retired keys, so that a statement in which one of them names another
    /// key disputes them (§20.2): whoever made it holds a private key this node retired.
    mutating func recordOwn(_ statements: [KeyRotationPayload]) {
        for statement in statements.prefix(WireLimits.maxKeyRotations).reversed() {
            guard let old = Self.nodeID(statement.oldKey), let new = Self.nodeID(statement.newKey), successors[old] == nil else { continue }
            // Not in `successorOrder`: other nodes' chains must never evict this node's own
            // (at most WireLimits.maxKeyRotations of them).
            successors[old] = new
        }
    }

    /// Checks the statements a node's advert (newest first, at most ``WireLimits/maxKeyRotations``
    /// read) or handshake carried beside its identity key. The chain is followed while it holds: the
    /// first statement's new key must be `identityKey`, each further one's new key the previous
    /// one's old key, and both signatures must verify (§20.2); the first that fails ends it (logged).
    /// - Parameters:
    ///   - statements: as received.
    ///   - identityKey: the identity key the advert's signature or the handshake proved.
    ///   - logger: where refused statements are logged.
    /// - Returns: the steps verified for the first time, oldest first.
    mutating func learn(_ statements: [KeyRotationPayload], identityKey: Data, logger: Logger) -> [Step] {
        guard !statements.isEmpty, let holder = Self.nodeID(identityKey) else { return [] }
        var expected = identityKey
        var valid: [KeyRotation] = []
        var fresh: [Step] = []
        for payload in statements.prefix(WireLimits.maxKeyRotations) {
            // Malformed sizes are refused before anything is verified or remembered (a verdict
            // remembers the statement, so it must be small).
            guard payload.oldKey.count == 32, payload.oldSignature.count == 64, payload.newSignature.count == 64 else {
                logger.notice("ignored a key rotation with a key or signature of the wrong size", metadata: ["mesh.origin": "\(holder.shortHex)"])
                break
            }
            let statement = KeyRotation(payload)
            guard statement.newKey == expected else {
                logger.notice("ignored a key rotation whose new key is not the node's own (or the previous statement's old key)",
                              metadata: ["mesh.origin": "\(holder.shortHex)"])
                break
            }
            let seen = verdicts[statement]
            let good = seen ?? check(statement, holder: holder, logger: logger)
            guard good, let old = Self.nodeID(statement.oldKey), let new = Self.nodeID(statement.newKey) else { break }
            valid.append(statement)
            if seen == nil { fresh.append(step(old: old, new: new, logger: logger)) }
            expected = statement.oldKey
        }
        if let first = valid.first, chains[holder].map({ $0.first != first || $0.count < valid.count }) ?? true {
            if chains.updateValue(valid, forKey: holder) == nil { chainOrder.append(holder) }
            if chainOrder.count > Self.maxChains { chains[chainOrder.removeFirst()] = nil }
        }
        return fresh.reversed()
    }

    /// A statement verified for the first time: the first successor named for its old node is
    /// remembered; a later, different one disputes it (§20.2: first seen keeps, nothing more is carried).
    private mutating func step(old: NodeID, new: NodeID, logger: Logger) -> Step {
        if let first = successors[old] {
            guard first != new else { return Step(old: old, new: new) }
            logger.warning("a retired key named a second successor: its private key has leaked; nothing is carried over", metadata: [
                "mesh.previous": "\(old.shortHex)", "mesh.successor": "\(first.shortHex)", "mesh.claimant": "\(new.shortHex)",
            ])
            return Step(old: old, new: new, disputes: first)
        }
        successors[old] = new
        successorOrder.append(old)
        if successorOrder.count > Self.maxChains { successors[successorOrder.removeFirst()] = nil }
        return Step(old: old, new: new)
    }

    private mutating func check(_ statement: KeyRotation, holder: NodeID, logger: Logger) -> Bool {
        var good = true
        do {
            _ = try statement.verified()
        } catch {
            logger.notice("ignored a key rotation that does not verify", metadata: ["mesh.origin": "\(holder.shortHex)", "error": "\(error)"])
            good = false
        }
        verdicts[statement] = good
        verdictOrder.append(statement)
        if verdictOrder.count > Self.maxChecked { verdicts[verdictOrder.removeFirst()] = nil }
        return good
    }

    /// The node id of a raw Ed25519 key (§2.2), `nil` when it is not one.
    static func nodeID(_ key: Data) -> NodeID? {
        (try? Curve25519.Signing.PublicKey(rawRepresentation: key)).map(LocalIdentity.nodeID(identityKey:))
    }
}

extension MeshNodeStateMachine {
    // MARK: Key rotations (PROTOCOL.md §20.2)

    /// Learns the key rotations an advert or a handshake carried beside the identity key it proved.
    /// - Parameters:
    ///   - statements: the advert's `rotations` (newest first) or the handshake's `rotation`.
    ///   - identityKey: the identity key the advert or handshake proved.
    ///   - displayName: the name it carried, for the events.
    /// - Returns: ``SessionEvent/keyRotated(_:previous:)`` for each step verified for the first
    ///   time, oldest first; ``SessionEvent/keyRotationDisputed(_:previous:successor:)`` instead for
    ///   one whose old node already has another successor.
    mutating func learnRotations(_ statements: [KeyRotationPayload], identityKey: Data, displayName: String) -> [SessionEvent] {
        rotations.learn(statements, identityKey: identityKey, logger: logger).compactMap { step in
            guard step.old != identity.nodeID, step.new != identity.nodeID,
                  let peer = try? PeerID(id: step.new, displayName: displayName) else { return nil }
            if let successor = step.disputes { return .keyRotationDisputed(peer, previous: step.old, successor: successor) }
            return .keyRotated(peer, previous: step.old)
        }
    }

    /// The verified statements that lead to a node's current key, newest first.
    func keyRotations(of node: NodeID) -> [KeyRotation] { rotations.chain(of: node) }
}

extension KeyRotation {
    /// A statement as it travels (§20.2), unchecked.
    init(_ payload: KeyRotationPayload) {
        self.init(oldKey: payload.oldKey, newKey: payload.newKey, issuedAtMilliseconds: payload.issuedMs,
                  oldSignature: payload.oldSignature, newSignature: payload.newSignature)
    }

    /// The statement as it travels.
    var payload: KeyRotationPayload {
        var payload = KeyRotationPayload()
        payload.oldKey = oldKey
        payload.newKey = newKey
        payload.issuedMs = issuedAtMilliseconds
        payload.oldSignature = oldSignature
        payload.newSignature = newSignature
        return payload
    }
}
