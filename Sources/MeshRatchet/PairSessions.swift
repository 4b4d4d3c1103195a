import Crypto
import Foundation

/// The end-to-end sessions this node holds with one other node, and the rules that pick one for each
/// message (PROTOCOL.md §19.7). A value: ``seal(_:context:to:localStaticKey:fresh:limits:using:)``
/// mutates it, ``opening(_:context:localStaticKey:prekey:limits:using:)`` returns the changed value
/// for the caller to keep once it has checked what the message says (a failed open changes nothing).
///
/// - A message is sealed on the *preferred* session: the one a message was last received on, else
///   the newest one this end began. With none, a new one begins by X3DH on the peer's signed prekey,
///   and its messages carry the prekey header until a reply arrives on it.
/// - A prekey message for a session this end does not hold starts it (the responder's side) and makes
///   it preferred; so two ends that began sessions at the same time each end up sending on one both hold.
/// - At most ``maxSessions`` are kept; the least preferred is forgotten first.
/// - Sending never reuses a message key across a restart: the stored state reserves the next
///   ``reservation`` message numbers of the current chain, and ``seal(_:context:to:localStaticKey:fresh:limits:using:)``
///   says when the state must be stored before the message leaves (past the reservation, a new chain,
///   or a new session). A restored state skips the reserved numbers.
public struct PairSessions: Sendable {
    /// One session.
    struct Entry: Sendable {
        var id: UInt64
        var ratchet: DoubleRatchet
        /// Set while this end began the session and has received nothing on it.
        var pending: PrekeyHeader?
        /// The other end's X25519 static key, as the agreement bound it.
        var peerStaticKey: Data
        /// The sending chain (its ratchet key) and the message number up to which stored state covers sends.
        var reservedKey: Data?
        var reservedThrough: UInt32 = 0

        /// Seals the next message of this session: its packet, and whether the reservation moved (the
        /// state must then be stored before the packet leaves). On failure nothing changes.
        mutating func seal(_ plaintext: (_ prekeyMessage: Bool) -> Data, context: [UInt8]) throws(RatchetError) -> (Data, reserved: Bool) {
            let number = ratchet.nextMessageNumber
            let (pending, id) = (self.pending, self.id)
            // `context ‖ prefix` is the message's additional data, and the prefix starts the packet.
            let message = try ratchet.encrypt(plaintext(pending != nil),
                                              additionalCount: context.count + RatchetPacket.minimumPrekeyCount) { bytes in
                bytes.append(contentsOf: context)
                RatchetPacket.appendPrefix(prekey: pending, sessionID: id, to: &bytes)
            }
            let sendingKey = message.header.ratchetKey
            let reserved = reservedKey != sendingKey || number >= reservedThrough
            if reserved {
                reservedKey = sendingKey
                reservedThrough = number &+ PairSessions.reservation < number ? UInt32.max : number + PairSessions.reservation
            }
            return (RatchetPacket.encoded(prekey: pending, sessionID: id, message), reserved)
        }
    }

    /// The most sessions kept with one node.
    public static let maxSessions = 3
    /// How many message numbers a stored state reserves ahead of the sending position.
    public static let reservation: UInt32 = 64

    /// Sessions, preferred first.
    var entries: [Entry] = []

    /// No sessions.
    public init() {}

    /// Whether no session is held.
    public var isEmpty: Bool { entries.isEmpty }

    /// How many sessions are held.
    public var count: Int { entries.count }

    /// The ids of the sessions, preferred first.
    public var sessionIDs: [UInt64] { entries.map(\.id) }

    /// The skipped message keys stored across the sessions.
    public var skippedCount: Int { entries.reduce(0) { $0 + $1.ratchet.skippedCount } }

    /// What a sender knows of the other node: its static key and its current signed prekey (verified).
    public struct PeerKeys: Sendable {
        /// The node's X25519 static key.
        public var staticKey: Curve25519.KeyAgreement.PublicKey
        /// Its signed prekey's id.
        public var prekeyID: UInt32
        /// Its signed prekey, verified against its identity key.
        public var prekey: Curve25519.KeyAgreement.PublicKey

        /// Creates the keys.
        public init(staticKey: Curve25519.KeyAgreement.PublicKey, prekeyID: UInt32, prekey: Curve25519.KeyAgreement.PublicKey) {
            self.staticKey = staticKey
            self.prekeyID = prekeyID
            self.prekey = prekey
        }
    }

    /// A sealed packet and whether the sessions must be stored before it is sent.
    public struct Sealed: Sendable {
        /// The packet's bytes (``RatchetPacket/encoded``).
        public var packet: Data
        /// The session it was sealed on.
        public var sessionID: UInt64
        /// True when the changed state must be on disk before the packet leaves (§19.7).
        public var mustStore: Bool
    }

    /// Seals a message on the preferred session, or on a new one.
    /// - Parameters:
    ///   - plaintext: the message.
    ///   - context: bytes the carrying layer authenticates with it (the routed header, §19.6).
    ///   - peer: the other node's keys; needed to begin a session, and a session bound to another
    ///     static key is not used.
    ///   - localStaticKey: this node's X25519 static key.
    ///   - fresh: begin a new session even when one can send (a repair, §19.7).
    ///   - limits: the bounds of a new session.
    ///   - generator: the source of new keys.
    /// - Returns: the packet.
    /// - Throws: ``RatchetError`` `unknownSession` when no session can send and no prekey is known;
    ///   `invalidKey` for a low-order key; `tooManySkipped` at the end of a chain.
    public mutating func seal(_ plaintext: some DataProtocol, context: Data, to peer: PeerKeys?,
                              localStaticKey: Curve25519.KeyAgreement.PrivateKey, fresh: Bool = false,
                              limits: RatchetLimits = RatchetLimits(),
                              using generator: inout some RandomNumberGenerator) throws(RatchetError) -> Sealed {
        let bytes = Data(plaintext)
        return try seal({ _ in bytes }, context: [UInt8](context), to: peer, localStaticKey: localStaticKey, fresh: fresh,
                        limits: limits, using: &generator)
    }

    /// Seals a message whose plaintext depends on whether it goes as a prekey message (which carries
    /// what binds the sender's static key to its identity, §19.6).
    /// - Parameters:
    ///   - plaintext: the message, given `true` for a prekey message.
    ///   - context: bytes the carrying layer authenticates with it.
    ///   - peer: the other node's keys.
    ///   - localStaticKey: this node's X25519 static key.
    ///   - fresh: begin a new session.
    ///   - limits: the bounds of a new session.
    ///   - generator: the source of new keys.
    /// - Returns: the packet.
    /// - Throws: ``RatchetError`` as the other form.
    public mutating func seal(_ plaintext: (_ prekeyMessage: Bool) -> Data, context: Data, to peer: PeerKeys?,
                              localStaticKey: Curve25519.KeyAgreement.PrivateKey, fresh: Bool = false,
                              limits: RatchetLimits = RatchetLimits(),
                              using generator: inout some RandomNumberGenerator) throws(RatchetError) -> Sealed {
        try seal(plaintext, context: [UInt8](context), to: peer, localStaticKey: localStaticKey, fresh: fresh, limits: limits,
                 using: &generator)
    }

    /// ``seal(_:context:to:localStaticKey:fresh:limits:using:)`` with the context in an array: the
    /// form the sealed-packet path uses (the context goes straight into the message's associated data).
    public mutating func seal(_ plaintext: (_ prekeyMessage: Bool) -> Data, context: [UInt8], to peer: PeerKeys?,
                              localStaticKey: Curve25519.KeyAgreement.PrivateKey, fresh: Bool = false,
                              limits: RatchetLimits = RatchetLimits(),
                              using generator: inout some RandomNumberGenerator) throws(RatchetError) -> Sealed {
        var mustStore = false
        let index: Int
        let peerStaticKey = peer?.staticKey.rawRepresentation
        if !fresh, let usable = entries.firstIndex(where: { entry in
            entry.ratchet.canSend && (peerStaticKey.map { $0 == entry.peerStaticKey } ?? true)
        }) {
            index = usable
        } else {
            guard let peer else {
                throw RatchetError(.unknownSession, "no session can send and the node's prekey is not known")
            }
            try begin(with: peer, localStaticKey: localStaticKey, limits: limits, using: &generator)
            index = 0
            mustStore = true
        }
        // In place (the array's element is not copied out and back): `seal` changes it only once it succeeded.
        let (packet, reserved) = try entries[index].seal(plaintext, context: context)
        return Sealed(packet: packet, sessionID: entries[index].id, mustStore: mustStore || reserved)
    }

    /// What opening a packet gave.
    public struct Opened: Sendable {
        /// The plaintext.
        public var plaintext: Data
        /// The session it came on.
        public var sessionID: UInt64
        /// Set when the packet began a session here: the initiator's static key, which the caller must
        /// find bound to the sender's identity (the plaintext's §2.4 signature) before keeping the result.
        public var newSessionStaticKey: Data?
    }

    /// Opens a packet from the other node. Returns the changed sessions instead of changing these, so
    /// the caller keeps them only once the plaintext checks out.
    /// - Parameters:
    ///   - packet: the decoded packet.
    ///   - context: the bytes the sender authenticated with it.
    ///   - localStaticKey: this node's X25519 static key.
    ///   - prekey: this node's signed prekeys' private keys by id (`nil` for one it does not hold).
    ///   - limits: the bounds of a new session.
    ///   - generator: the source of new ratchet keys.
    /// - Returns: what it carried and the sessions after it.
    /// - Throws: ``RatchetError``: `unknownSession` (a session or prekey this node does not hold),
    ///   `authenticationFailed`, `tooManySkipped`, `malformed`, `invalidKey`.
    public func opening(_ packet: RatchetPacket, context: Data, localStaticKey: Curve25519.KeyAgreement.PrivateKey,
                        prekey: (UInt32) -> Curve25519.KeyAgreement.PrivateKey?, limits: RatchetLimits = RatchetLimits(),
                        using generator: inout some RandomNumberGenerator) throws(RatchetError) -> (Opened, PairSessions) {
        try opening(packet, context: [UInt8](context), localStaticKey: localStaticKey, prekey: prekey, limits: limits,
                    using: &generator)
    }

    /// ``opening(_:context:localStaticKey:prekey:limits:using:)`` with the context in an array.
    public func opening(_ packet: RatchetPacket, context: [UInt8], localStaticKey: Curve25519.KeyAgreement.PrivateKey,
                        prekey: (UInt32) -> Curve25519.KeyAgreement.PrivateKey?, limits: RatchetLimits = RatchetLimits(),
                        using generator: inout some RandomNumberGenerator) throws(RatchetError) -> (Opened, PairSessions) {
        // `context ‖ prefix`, the message's additional data, appended straight into its associated data.
        func appendAdditional(_ bytes: inout [UInt8]) {
            bytes.append(contentsOf: context)
            packet.appendPrefix(to: &bytes)
        }
        let additionalCount = context.count + RatchetPacket.minimumPrekeyCount
        var next = self
        if let index = entries.firstIndex(where: { $0.id == packet.sessionID }) {
            if case .prekey(let header, _) = packet, header.initiatorStaticKey != entries[index].peerStaticKey {
                throw RatchetError(.authenticationFailed, "a prekey message whose static key differs from its session's")
            }
            // On `next`'s own copy of the entry, in place (`next` is dropped if this throws).
            let plaintext = try next.entries[index].ratchet.decrypt(packet.message, additionalCount: additionalCount,
                                                                    appendAdditional: appendAdditional, using: &generator)
            next.entries[index].pending = nil
            if index != 0 {
                next.entries.insert(next.entries.remove(at: index), at: 0)
            }
            return (Opened(plaintext: plaintext, sessionID: packet.sessionID, newSessionStaticKey: nil), next)
        }
        guard case .prekey(let header, let message) = packet else {
            throw RatchetError(.unknownSession, "a message of a session this node does not hold")
        }
        guard let prekeyKey = prekey(header.prekeyID) else {
            throw RatchetError(.unknownSession, "a session begun on prekey \(header.prekeyID), which this node does not hold")
        }
        guard let initiator = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: header.initiatorStaticKey),
              let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: header.ephemeralKey) else {
            throw RatchetError(.malformed, "a prekey message with an invalid key")
        }
        let (secret, associatedData) = try PrekeyAgreement.respond(identity: localStaticKey, prekey: prekeyKey,
                                                                   initiatorIdentity: initiator, initiatorEphemeral: ephemeral)
        var ratchet = DoubleRatchet(responderSecret: secret, ratchetKey: prekeyKey, associatedData: associatedData, limits: limits)
        let plaintext = try ratchet.decrypt(message, additionalCount: additionalCount, appendAdditional: appendAdditional,
                                            using: &generator)
        next.insertFront(Entry(id: header.sessionID, ratchet: ratchet, pending: nil, peerStaticKey: header.initiatorStaticKey))
        return (Opened(plaintext: plaintext, sessionID: header.sessionID, newSessionStaticKey: header.initiatorStaticKey), next)
    }

    /// Stops preferring a session the other end said it cannot open (a repair, §19.7): it is kept,
    /// last, for late messages, until newer sessions push it out.
    /// - Parameter sessionID: the session.
    public mutating func demote(_ sessionID: UInt64) {
        guard let index = entries.firstIndex(where: { $0.id == sessionID }) else { return }
        let entry = entries.remove(at: index)
        entries.append(entry)
    }

    // MARK: Internals

    private mutating func begin(with peer: PeerKeys, localStaticKey: Curve25519.KeyAgreement.PrivateKey,
                                limits: RatchetLimits, using generator: inout some RandomNumberGenerator) throws(RatchetError) {
        let ephemeral = DoubleRatchet.newRatchetKey(using: &generator)
        let agreed = try PrekeyAgreement.initiate(identity: localStaticKey, responderIdentity: peer.staticKey,
                                                  responderPrekey: peer.prekey, ephemeral: ephemeral)
        let ratchet = try DoubleRatchet(initiatorSecret: agreed.secret, responderRatchetKey: peer.prekey,
                                        associatedData: agreed.associatedData, limits: limits, using: &generator)
        let header = PrekeyHeader(prekeyID: peer.prekeyID, ephemeralKey: agreed.ephemeralKey,
                                  initiatorStaticKey: localStaticKey.publicKey.rawRepresentation)
        insertFront(Entry(id: header.sessionID, ratchet: ratchet, pending: header, peerStaticKey: peer.staticKey.rawRepresentation))
    }

    private mutating func insertFront(_ entry: Entry) {
        entries.removeAll { $0.id == entry.id }
        entries.insert(entry, at: 0)
        if entries.count > Self.maxSessions { entries.removeLast(entries.count - Self.maxSessions) }
    }
}
