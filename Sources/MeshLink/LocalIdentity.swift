import Crypto
import MeshRatchet
import struct Foundation.Data
import MeshWire

/// This node's long-term keys (PROTOCOL.md §2.1): an Ed25519 identity key and an X25519 Noise
/// static key.
///
/// The node id is derived from the identity key (§2.2), so it stays the same for as long as the key
/// material is kept. Never log or print the private keys; `description` shows the node id only.
public struct LocalIdentity: Sendable, CustomStringConvertible {
    /// The domain-separation prefix of the static-key signature (§2.4).
    public static let staticKeySignaturePrefix = Array("meshchat-noise-static-key:".utf8)

    /// The Ed25519 identity key.
    public let signingKey: Curve25519.Signing.PrivateKey
    /// The X25519 key used as the Noise static key `s`.
    public let staticKey: Curve25519.KeyAgreement.PrivateKey
    /// The node id derived from ``signingKey``'s public key.
    public let nodeID: NodeID
    /// The signature binding ``staticKey`` to ``signingKey`` (§2.4), computed once.
    public let staticSignature: Data
    /// The statements by which this node replaced its earlier identity keys (§20.2), newest first:
    /// the first one's new key is ``signingKey``'s public key, each older one's new key is the next
    /// one's old key. Its adverts carry the first ``WireLimits/maxKeyRotations``, its handshakes the
    /// first. Empty for a node that never rotated.
    public var rotations: [KeyRotationPayload] = []

    /// Creates an identity from existing keys.
    /// - Parameters:
    ///   - signingKey: the Ed25519 identity key.
    ///   - staticKey: the X25519 static key.
    /// - Throws: when signing fails (a swift-crypto error; not expected with valid keys).
    public init(signingKey: Curve25519.Signing.PrivateKey, staticKey: Curve25519.KeyAgreement.PrivateKey) throws {
        self.signingKey = signingKey
        self.staticKey = staticKey
        self.nodeID = Self.nodeID(identityKey: signingKey.publicKey)
        self.staticSignature = try signingKey.signature(
            for: Self.staticKeySignaturePrefix + staticKey.publicKey.rawRepresentation)
    }

    /// Creates an identity with fresh random keys.
    /// - Throws: when signing fails (not expected).
    public static func generate() throws -> LocalIdentity {
        try LocalIdentity(signingKey: .init(), staticKey: .init())
    }

    /// The node id of an identity key: the first 16 bytes of its SHA-256 (§2.2).
    /// - Parameter identityKey: an Ed25519 public key.
    /// - Returns: the node id.
    public static func nodeID(identityKey: Curve25519.Signing.PublicKey) -> NodeID {
        let digest = SHA256.hash(data: identityKey.rawRepresentation)
        return try! NodeID(bytes: Array(digest).prefix(NodeID.byteCount))
    }

    /// Whether `signature` binds `staticKey` to `identityKey` (§2.4).
    /// - Parameters:
    ///   - signature: the claimed signature.
    ///   - staticKey: the static key the Noise handshake authenticated.
    ///   - identityKey: the claimed identity key.
    /// - Returns: `true` when the signature verifies.
    public static func verifyStaticSignature(
        _ signature: Data,
        staticKey: Curve25519.KeyAgreement.PublicKey,
        identityKey: Curve25519.Signing.PublicKey
    ) -> Bool {
        identityKey.isValidSignature(signature, for: staticKeySignaturePrefix + staticKey.rawRepresentation)
    }

    /// The node id only; keys are never printed.
    public var description: String { "LocalIdentity(\(nodeID))" }
}

/// A remote peer as its handshake proved it (PROTOCOL.md §4.3, §4.4).
public struct RemotePeer: Sendable, Hashable, CustomStringConvertible {
    /// The node id derived from ``identityKey``.
    public let nodeID: NodeID
    /// The display name the peer chose; checked to be 1–63 bytes of UTF-8.
    public let displayName: String
    /// The peer's Ed25519 identity public key (32 raw bytes).
    public let identityKey: Data
    /// The peer's Noise static public key (32 raw bytes), authenticated by the handshake.
    public let staticKey: Data
    /// The protocol version the peer announced.
    public let protocolVersion: UInt32
    /// The capability tokens the peer announced (unknown ones kept, not acted on).
    public let capabilities: [String]
    /// The UDP port on which the peer accepts datagrams from us; 0 for none.
    public let udpPort: UInt16
    /// The peer's current signed prekey (§19.1), verified against ``identityKey``; `nil` when its
    /// handshake carried none.
    public var signedPrekey: SignedPrekey? = nil
    /// The peer's latest key rotation statement (§20.2), as sent: not verified here (the session
    /// checks it, once per statement).
    public var rotation: KeyRotationPayload? = nil

    /// The node id, display name and UDP port.
    public var description: String { "\(displayName) (\(nodeID.shortHex))" }
}
