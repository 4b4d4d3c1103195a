import Crypto
import Foundation
import MeshRatchet
import MeshWire

/// End-to-end encryption of packets for one node with the Double Ratchet (PROTOCOL.md §13.6,
/// §19.6): the ``SealedPayload`` plaintext sealed on one of the ``PairSessions`` the two nodes hold,
/// bound to the routing header so that a relay that changes the origin, the destination or the
/// packet id makes it fail to open. Pure functions over the sessions they are given.
///
/// A prekey message (the first messages of a session) carries the sender's identity key and the
/// signature binding its static key to it (§2.4) inside, checked before its session is kept; later
/// messages of the session carry neither (the session is bound to both static keys).
public enum RatchetSealing {
    /// What a prekey message's identity fields add to the plaintext: a tag and a length byte before
    /// the 32-byte identity key and before the 64-byte signature.
    static let identityFieldsSize = 34 + 66

    /// The label that starts the authenticated context.
    public static let contextLabel = Array("meshchat/3 sealed:".utf8)

    /// `"meshchat/3 sealed:" ‖ origin ‖ destination ‖ packet id` (§19.6): authenticated with the packet.
    /// - Parameter header: the routing header.
    /// - Returns: the bytes.
    public static func context(_ header: SealHeader) -> Data {
        Data(contextBytes(header))
    }

    /// ``context(_:)`` in an array, the form ``PairSessions`` takes on the sealed-packet path.
    static func contextBytes(_ header: SealHeader) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(contextLabel.count + 2 * NodeID.byteCount + header.packetID.count)
        bytes.append(contentsOf: contextLabel)
        bytes.append(contentsOf: header.origin.bytes)
        bytes.append(contentsOf: header.destination.bytes)
        header.packetID.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Seals content for a node on the preferred session with it, or a new one.
    /// - Parameters:
    ///   - content: what to send.
    ///   - displayName: the sender's display name (inside, unseen by relays).
    ///   - sealedAtMilliseconds: the sender's clock now, Unix ms (§13.6 freshness).
    ///   - header: the routing header it is bound to.
    ///   - sessions: the sessions with the recipient (changed: the sending chain moves on).
    ///   - peer: the recipient's static key and verified signed prekey, when known.
    ///   - identity: this node's keys.
    ///   - fresh: begin a new session (a repair, §19.7).
    ///   - limits: bounds of a new session.
    ///   - generator: the source of new keys.
    /// - Returns: the packet for `Routed.sealed`, and whether the sessions must be stored before it leaves.
    /// - Throws: ``EndToEndError`` `tooLarge`; `noPrekey` when no session can send and the recipient's
    ///   prekey is unknown; `cannotOpen` for a low-order key.
    public static func seal(
        _ content: SealedPayload.OneOf_Content, displayName: String, sealedAtMilliseconds: Int64, header: SealHeader,
        sessions: inout PairSessions, peer: PairSessions.PeerKeys?, identity: LocalIdentity, fresh: Bool = false,
        limits: RatchetLimits = RatchetLimits(), using generator: inout some RandomNumberGenerator
    ) throws(EndToEndError) -> PairSessions.Sealed {
        var plaintext = SealedPayload()
        plaintext.displayName = displayName
        plaintext.sealedAtMs = sealedAtMilliseconds
        plaintext.content = content
        // Only a prekey message carries the identity fields (fields 1 and 2: 34 + 66 bytes); they
        // are sized in before sealing and serialized only for the packet that needs them.
        let bare = plaintext.serialized
        guard bare.count + Self.identityFieldsSize <= WireLimits.maxSealedPlaintext else {
            throw EndToEndError(.tooLarge, "sealed plaintext of \(bare.count + Self.identityFieldsSize) bytes exceeds \(WireLimits.maxSealedPlaintext)")
        }
        // A local function, not a closure value: nothing is boxed for the session messages that never call it.
        func withIdentity() -> Data {
            var full = plaintext
            full.identityKey = identity.signingKey.publicKey.rawRepresentation
            full.staticSignature = identity.staticSignature
            return full.serialized
        }
        do {
            return try sessions.seal({ prekeyMessage in prekeyMessage ? withIdentity() : bare }, context: contextBytes(header), to: peer,
                                     localStaticKey: identity.staticKey, fresh: fresh, limits: limits, using: &generator)
        } catch {
            switch error.code {
            case .unknownSession: throw EndToEndError(.noPrekey, "no session with node \(header.destination.shortHex) and its signed prekey is not known")
            default: throw EndToEndError(.cannotOpen, "sealing for node \(header.destination.shortHex) failed: \(error)")
            }
        }
    }

    /// What opening gave: the checked plaintext, the sessions after it (for the caller to keep), and
    /// the session it came on.
    public struct Opened: Sendable {
        /// The plaintext; its sender is `header.origin`.
        public var payload: SealedPayload
        /// The sessions after opening.
        public var sessions: PairSessions
        /// The session it came on.
        public var sessionID: UInt64
    }

    /// Opens a packet sealed for this node and checks who sent it.
    /// - Parameters:
    ///   - sealed: `Routed.sealed`.
    ///   - header: the routing header it arrived with; its destination must be this node.
    ///   - sessions: the sessions with the origin (not changed: the result carries the new ones).
    ///   - identity: this node's keys.
    ///   - prekey: this node's prekeys' private keys by id.
    ///   - knownStaticKey: the origin's static key as this node verified it already (advert or
    ///     handshake): a new session on it needs no signature check.
    ///   - limits: bounds of a new session.
    ///   - generator: the source of new ratchet keys.
    /// - Returns: the plaintext and the sessions to keep.
    /// - Throws: ``EndToEndError``: `unknownSession` (a session this node does not hold or whose chain
    ///   ran more than MAX_SKIP ahead: repair, §19.7), `cannotOpen`, `malformed`,
    ///   `wrongOrigin`, `badSignature`.
    public static func open(
        _ sealed: Data, header: SealHeader, sessions: PairSessions, identity: LocalIdentity,
        prekey: (UInt32) -> Curve25519.KeyAgreement.PrivateKey?, knownStaticKey: Curve25519.KeyAgreement.PublicKey? = nil,
        limits: RatchetLimits = RatchetLimits(), using generator: inout some RandomNumberGenerator
    ) throws(EndToEndError) -> Opened {
        guard header.destination == identity.nodeID else {
            throw EndToEndError(.cannotOpen, "sealed for node \(header.destination.shortHex), this is node \(identity.nodeID.shortHex)")
        }
        let packet: RatchetPacket
        let opened: PairSessions.Opened
        let next: PairSessions
        do {
            packet = try RatchetPacket(decoding: sealed)
            (opened, next) = try sessions.opening(packet, context: contextBytes(header), localStaticKey: identity.staticKey,
                                                  prekey: prekey, limits: limits, using: &generator)
        } catch {
            // A message further ahead of its chain than MAX_SKIP cannot be opened on that session,
            // nor can any later one of the chain (§19.4): like an unknown session, it needs a new one.
            let code: EndToEndError.Code = switch error.code {
            case .unknownSession, .tooManySkipped: .unknownSession
            case .malformed: .malformed
            default: .cannotOpen
            }
            throw EndToEndError(code, "sealed packet from node \(header.origin.shortHex) does not open: \(error)")
        }
        let plaintext: SealedPayload
        do {
            plaintext = try SealedPayload(decoding: opened.plaintext, what: "sealed payload")
        } catch {
            throw EndToEndError(.malformed, "\(error)")
        }
        if let staticKey = opened.newSessionStaticKey {
            try checkBinding(plaintext, staticKey: staticKey, origin: header.origin, knownStaticKey: knownStaticKey)
        }
        if let problem = PeerID.displayNameProblem(plaintext.displayName) {
            throw EndToEndError(.malformed, "sealed display name: \(problem)")
        }
        return Opened(payload: plaintext, sessions: next, sessionID: opened.sessionID)
    }

    /// A new session's first message: its identity key derives to the origin and binds the static key
    /// the agreement used.
    private static func checkBinding(_ plaintext: SealedPayload, staticKey: Data, origin: NodeID,
                                     knownStaticKey: Curve25519.KeyAgreement.PublicKey?) throws(EndToEndError) {
        guard let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: plaintext.identityKey) else {
            throw EndToEndError(.malformed, "a prekey message's identity key has \(plaintext.identityKey.count) bytes, expected 32")
        }
        let claimed = LocalIdentity.nodeID(identityKey: identityKey)
        guard claimed == origin else {
            throw EndToEndError(.wrongOrigin, "sealed identity key belongs to node \(claimed.shortHex), the packet claims origin \(origin.shortHex)")
        }
        if knownStaticKey?.rawRepresentation == staticKey { return }
        guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: staticKey),
              LocalIdentity.verifyStaticSignature(plaintext.staticSignature, staticKey: key, identityKey: identityKey) else {
            throw EndToEndError(.badSignature, "a prekey message's static key is not signed by node \(origin.shortHex)")
        }
    }
}
