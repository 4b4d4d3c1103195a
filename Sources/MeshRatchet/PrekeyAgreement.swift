import Crypto
import struct Foundation.Data

/// A medium-term X25519 key a node publishes, signed with its Ed25519 identity key, so that others
/// can start an end-to-end session with it while it is away (X3DH's signed prekey).
///
/// The signature covers `"meshchat-signed-prekey:" ‖ id (u32, big-endian) ‖ public key (32)`.
public struct SignedPrekey: Hashable, Sendable {
    /// The domain-separation prefix of the signature.
    public static let signaturePrefix = Data("meshchat-signed-prekey:".utf8)

    /// Which prekey of its owner this is (owners rotate them and keep a few recent ones).
    public var id: UInt32
    /// The X25519 public key (32 raw bytes).
    public var publicKey: Data
    /// The owner's Ed25519 signature (64 bytes).
    public var signature: Data

    /// Signs a prekey.
    /// - Parameters:
    ///   - id: its id.
    ///   - key: the prekey's private key (kept by the owner, never published).
    ///   - identity: the owner's Ed25519 identity key.
    /// - Throws: when signing fails (not expected with valid keys).
    public init(id: UInt32, key: Curve25519.KeyAgreement.PrivateKey, identity: Curve25519.Signing.PrivateKey) throws {
        self.id = id
        self.publicKey = key.publicKey.rawRepresentation
        self.signature = try identity.signature(for: Self.signedBytes(id: id, publicKey: publicKey))
    }

    /// A prekey as received, to be checked with ``verified(by:)``.
    /// - Parameters:
    ///   - id: its id.
    ///   - publicKey: 32 raw bytes.
    ///   - signature: 64 bytes.
    public init(id: UInt32, publicKey: Data, signature: Data) {
        self.id = id
        self.publicKey = publicKey
        self.signature = signature
    }

    /// The prekey's public key, once its signature is checked against its claimed owner.
    /// - Parameter identityKey: the owner's Ed25519 public key.
    /// - Returns: the X25519 public key.
    /// - Throws: ``RatchetError`` `invalidKey` when the key is malformed or the signature does not verify.
    public func verified(by identityKey: Curve25519.Signing.PublicKey) throws(RatchetError) -> Curve25519.KeyAgreement.PublicKey {
        guard publicKey.count == 32, signature.count == 64,
              identityKey.isValidSignature(signature, for: Self.signedBytes(id: id, publicKey: publicKey)),
              let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey) else {
            throw RatchetError(.invalidKey, "signed prekey \(id) does not verify against its owner's identity key")
        }
        return key
    }

    static func signedBytes(id: UInt32, publicKey: Data) -> Data {
        var data = signaturePrefix
        withUnsafeBytes(of: id.bigEndian) { data.append(contentsOf: $0) }
        data.append(publicKey)
        return data
    }
}

/// The key agreement that starts an end-to-end session: X3DH (Signal's "Extended Triple
/// Diffie-Hellman") without one-time prekeys, on X25519 and HKDF-SHA256.
///
/// With `IK` the nodes' X25519 static keys (the Noise static keys, bound to their identities),
/// `SPK` the responder's signed prekey and `EK` a fresh key of the initiator:
///
///     DH1 = DH(IK_i, SPK_r)   DH2 = DH(EK_i, IK_r)   DH3 = DH(EK_i, SPK_r)
///     SK  = HKDF-SHA256(salt: 32 zero bytes, ikm: 0xFF×32 ‖ DH1 ‖ DH2 ‖ DH3, info: "meshchat-x3dh", 32 bytes)
///     AD  = IK_i ‖ IK_r (public keys, 64 bytes)
///
/// The responder can answer only while it still holds the prekey's private key; once it deletes it
/// (after rotation), messages of sessions begun on it stay secret even if its static key leaks.
/// Without one-time prekeys an initiator's first message can be replayed to the responder; the
/// ratchet's receiver refuses a message key used twice, and the application's own ids deduplicate.
public enum PrekeyAgreement {
    static let info = Data("meshchat-x3dh".utf8)

    /// What the initiator gets: the secret, the associated data, and the ephemeral public key to send.
    public struct Initiated: Sendable {
        /// The shared secret for ``DoubleRatchet/init(initiatorSecret:responderRatchetKey:associatedData:limits:using:)``.
        public var secret: SymmetricKey
        /// `IK_i ‖ IK_r`.
        public var associatedData: Data
        /// The initiator's ephemeral public key (32 raw bytes), sent with its first messages.
        public var ephemeralKey: Data
    }

    /// The initiator's side.
    /// - Parameters:
    ///   - identity: the initiator's X25519 static key.
    ///   - responderIdentity: the responder's X25519 static key (authenticated by its identity).
    ///   - responderPrekey: the responder's verified signed prekey.
    ///   - ephemeral: a fresh key, used once.
    /// - Returns: the secret, associated data and ephemeral public key.
    /// - Throws: ``RatchetError`` `invalidKey` for a low-order key.
    public static func initiate(identity: Curve25519.KeyAgreement.PrivateKey,
                                responderIdentity: Curve25519.KeyAgreement.PublicKey,
                                responderPrekey: Curve25519.KeyAgreement.PublicKey,
                                ephemeral: Curve25519.KeyAgreement.PrivateKey) throws(RatchetError) -> Initiated {
        let secret = try derive(DoubleRatchet.agree(identity, responderPrekey),
                                DoubleRatchet.agree(ephemeral, responderIdentity),
                                DoubleRatchet.agree(ephemeral, responderPrekey))
        return Initiated(secret: secret,
                         associatedData: identity.publicKey.rawRepresentation + responderIdentity.rawRepresentation,
                         ephemeralKey: ephemeral.publicKey.rawRepresentation)
    }

    /// The responder's side.
    /// - Parameters:
    ///   - identity: the responder's X25519 static key.
    ///   - prekey: the private key of the signed prekey the initiator named.
    ///   - initiatorIdentity: the initiator's X25519 static key (authenticated by its identity).
    ///   - initiatorEphemeral: the ephemeral public key from the initiator's message.
    /// - Returns: the shared secret and the associated data.
    /// - Throws: ``RatchetError`` `invalidKey` for a low-order key.
    public static func respond(identity: Curve25519.KeyAgreement.PrivateKey, prekey: Curve25519.KeyAgreement.PrivateKey,
                               initiatorIdentity: Curve25519.KeyAgreement.PublicKey,
                               initiatorEphemeral: Curve25519.KeyAgreement.PublicKey) throws(RatchetError) -> (secret: SymmetricKey, associatedData: Data) {
        let secret = try derive(DoubleRatchet.agree(prekey, initiatorIdentity),
                                DoubleRatchet.agree(identity, initiatorEphemeral),
                                DoubleRatchet.agree(prekey, initiatorEphemeral))
        return (secret, initiatorIdentity.rawRepresentation + identity.publicKey.rawRepresentation)
    }

    private static func derive(_ dh1: SharedSecret, _ dh2: SharedSecret, _ dh3: SharedSecret) -> SymmetricKey {
        var material = Data(repeating: 0xFF, count: 32)
        for secret in [dh1, dh2, dh3] { secret.withUnsafeBytes { material.append(contentsOf: $0) } }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: material), salt: Data(count: 32),
                                      info: info, outputByteCount: 32)
    }
}
