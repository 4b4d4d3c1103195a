import Crypto
import Foundation
import MeshLink
import MeshRatchet
import MeshWire

/// Hands out fixed keys as a ``RandomNumberGenerator``: each 32-byte key as four `next()` values,
/// little-endian, in order (the order ``DoubleRatchet`` and ``PairSessions`` draw new keys in), so a
/// sealed vector is deterministic. Running out is a test's programming error.
public struct ReplayedKeys: RandomNumberGenerator, Sendable {
    private var words: [UInt64]

    /// A generator that yields `keys` in order.
    /// - Parameter keys: 32-byte keys.
    public init(_ keys: [[UInt8]]) {
        words = keys.flatMap { bytes in
            (0..<4).map { i in bytes[i * 8 ..< i * 8 + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        }
    }

    /// A generator that yields hex-encoded keys in order.
    /// - Parameter hexKeys: 32-byte keys in hex.
    /// - Throws: when one is not hex.
    public init(hex hexKeys: [String]) throws {
        self.init(try hexKeys.map { try Hex.decode($0) })
    }

    /// The next eight bytes of the next key.
    public mutating func next() -> UInt64 {
        precondition(!words.isEmpty, "ReplayedKeys ran out of keys: the code under test drew more keys than the vector gives")
        return words.removeFirst()
    }
}

/// The fixed keys and steps of the sealed vectors (PROTOCOL.md §11, §19.6): every sealed case in
/// `Protocol/vectors/` is the first message of a new Double Ratchet session from alice to bob, a
/// prekey message on bob's signed prekey 1 (private key 0xa0…, signed by bob's identity key, Ed25519
/// being deterministic), alice's ephemeral key `EK_I` 0xf0… and first ratchet key 0xd0…. mesh.json
/// goes on with bob's reply (his next ratchet key 0xb0…) and alice's next message (0xc0…).
public enum SealedVectors {
    /// 32 consecutive bytes from `first`.
    public static func pattern(_ first: UInt8) -> [UInt8] { (0..<32).map { first &+ UInt8($0) } }

    /// bob's signed prekey id.
    public static let bobPrekeyID: UInt32 = 1
    /// bob's signed prekey's private key.
    public static let bobPrekeyPrivateKey = pattern(0xa0)
    /// alice's ephemeral key `EK_I` of the session (its first 8 bytes' public key name the session).
    public static let aliceEphemeralPrivateKey = pattern(0xf0)
    /// alice's first ratchet key.
    public static let aliceRatchetPrivateKey = pattern(0xd0)
    /// bob's ratchet key after he reads alice's first message (it seals his reply).
    public static let bobRatchetPrivateKey = pattern(0xb0)
    /// alice's ratchet key after she reads bob's reply (it seals her next message).
    public static let aliceNextRatchetPrivateKey = pattern(0xc0)

    /// The keys alice draws, in order: `EK_I`, her first ratchet key, her next one.
    public static var aliceKeys: ReplayedKeys { ReplayedKeys([aliceEphemeralPrivateKey, aliceRatchetPrivateKey, aliceNextRatchetPrivateKey]) }
    /// The keys bob draws: his ratchet key when alice's first message arrives.
    public static var bobKeys: ReplayedKeys { ReplayedKeys([bobRatchetPrivateKey]) }

    /// bob's signed prekey, signed by `bob`.
    public static func bobSignedPrekey(_ bob: LocalIdentity) -> SignedPrekey {
        try! SignedPrekey(id: bobPrekeyID, key: .init(rawRepresentation: bobPrekeyPrivateKey), identity: bob.signingKey)
    }

    /// What alice knows of bob to begin a session: his static key and signed prekey.
    public static func peerKeys(_ bob: LocalIdentity) -> PairSessions.PeerKeys {
        PairSessions.PeerKeys(staticKey: bob.staticKey.publicKey, prekeyID: bobPrekeyID,
                              prekey: try! .init(rawRepresentation: bobSignedPrekey(bob).publicKey))
    }

    /// bob's prekeys by id: prekey 1 only.
    public static func bobPrekeys(_ id: UInt32) -> Curve25519.KeyAgreement.PrivateKey? {
        id == bobPrekeyID ? try! .init(rawRepresentation: bobPrekeyPrivateKey) : nil
    }

    /// The vector's fixed keys as JSON members, hex, after the file's own fields.
    public static let jsonMembers: [OrderedJSON.Member] = [
        .init("bobPrekeyID", .integer(Int64(bobPrekeyID))),
        .init("bobPrekeyPrivateKey", .string(Hex.encode(bobPrekeyPrivateKey))),
        .init("aliceEphemeralPrivateKey", .string(Hex.encode(aliceEphemeralPrivateKey))),
        .init("aliceRatchetPrivateKey", .string(Hex.encode(aliceRatchetPrivateKey))),
    ]

    /// alice's first message to bob on a new session: a prekey message.
    /// - Parameters:
    ///   - content: the sealed content.
    ///   - sentAt: the sealing time, Unix ms.
    ///   - header: the routing header (alice to bob).
    ///   - alice: alice's keys.
    ///   - bob: bob's keys.
    ///   - keys: alice's key source; ``aliceKeys`` by default.
    /// - Returns: the `Routed.sealed` bytes and alice's sessions after it.
    public static func sealFirst(_ content: SealedPayload.OneOf_Content, sentAt: Int64, header: SealHeader,
                                 alice: LocalIdentity, bob: LocalIdentity,
                                 keys: inout ReplayedKeys) throws -> (packet: Data, sessions: PairSessions) {
        var sessions = PairSessions()
        let sealed = try RatchetSealing.seal(content, displayName: "alice", sealedAtMilliseconds: sentAt, header: header,
                                             sessions: &sessions, peer: peerKeys(bob), identity: alice, using: &keys)
        return (sealed.packet, sessions)
    }

    /// alice's first message to bob on a new session, with the fixed keys.
    public static func sealFirst(_ content: SealedPayload.OneOf_Content, sentAt: Int64, header: SealHeader,
                                 alice: LocalIdentity, bob: LocalIdentity) throws -> Data {
        var keys = aliceKeys
        return try sealFirst(content, sentAt: sentAt, header: header, alice: alice, bob: bob, keys: &keys).packet
    }

    /// Opens a sealed packet as its recipient with bob's prekeys (fresh sessions unless given).
    /// - Parameters:
    ///   - sealed: `Routed.sealed`.
    ///   - header: the routing header.
    ///   - recipient: who opens it.
    ///   - sessions: the recipient's sessions with the origin.
    ///   - knownStaticKey: the origin's static key as already verified.
    /// - Returns: what opening gave.
    /// - Throws: ``EndToEndError``.
    public static func open(_ sealed: Data, header: SealHeader, as recipient: LocalIdentity,
                            sessions: PairSessions = PairSessions(),
                            knownStaticKey: Curve25519.KeyAgreement.PublicKey? = nil) throws -> RatchetSealing.Opened {
        var keys = bobKeys
        return try RatchetSealing.open(sealed, header: header, sessions: sessions, identity: recipient, prekey: bobPrekeys,
                                       knownStaticKey: knownStaticKey, using: &keys)
    }

    /// Checks that only `bob` opens a first message: the same packet addressed to `other` (who is
    /// even given bob's prekey) does not open. Returns bob's plaintext.
    /// - Parameters:
    ///   - sealed: `Routed.sealed`.
    ///   - header: the routing header (to bob).
    ///   - bob: the recipient.
    ///   - other: another node.
    /// - Returns: the plaintext and whether `other` failed to open it.
    public static func openAsBobOnly(_ sealed: Data, header: SealHeader, bob: LocalIdentity,
                                     other: LocalIdentity) throws -> (payload: SealedPayload, otherFailed: Bool) {
        var misdirected = header
        misdirected.destination = other.nodeID
        let otherFailed = (try? open(sealed, header: misdirected, as: other)) == nil
        return (try open(sealed, header: header, as: bob).payload, otherFailed)
    }
}
