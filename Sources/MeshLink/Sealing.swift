import Crypto
import struct Foundation.Data
import MeshNoise
import MeshWire

/// The routing-header fields a sealed packet is bound to (PROTOCOL.md §13.6).
///
/// They form the Noise prologue, so a relay that changes the origin, the destination or the packet
/// id makes the packet fail to open; the hop fields stay outside so relays can update them.
public struct SealHeader: Sendable, Hashable {
    /// The sender's node id (`Routed.origin`).
    public var origin: NodeID
    /// The recipient's node id (`Routed.destination`).
    public var destination: NodeID
    /// The packet id (`Routed.packet_id`, 16 bytes).
    public var packetID: Data

    /// Creates a header.
    /// - Parameters:
    ///   - origin: the sender's node id.
    ///   - destination: the recipient's node id.
    ///   - packetID: the packet id.
    public init(origin: NodeID, destination: NodeID, packetID: Data) {
        self.origin = origin
        self.destination = destination
        self.packetID = packetID
    }

    /// The label that starts the prologue.
    public static let prologueLabel = Array("meshchat/1 sealed:".utf8)

    /// `"meshchat/1 sealed:" ‖ origin ‖ destination ‖ packet id` (§13.6).
    public var prologue: Data {
        Data(Self.prologueLabel + origin.bytes + destination.bytes + packetID)
    }
}

/// End-to-end encryption of private mesh packets with the one-way Noise pattern
/// `Noise_X_25519_ChaChaPoly_SHA256` (PROTOCOL.md §13.6).
///
/// The sender knows the recipient's Noise static key from its signed link-state advert (§13.2).
/// One handshake message carries everything: a fresh ephemeral key, the sender's static key
/// (encrypted), and the ``SealedPayload`` (encrypted), which names the sender's identity key and
/// the signature binding its static key to it (§2.4). Relays see only the routing header.
/// Forward secrecy is that of the X pattern: a later leak of the recipient's static key exposes
/// past messages; a leak of the sender's does not. Pure functions; thread-safe.
public enum Sealing {
    /// The Noise protocol name.
    public static let protocolName = "Noise_X_25519_ChaChaPoly_SHA256"
    /// Bytes a sealed packet adds to its plaintext: ephemeral key 32, encrypted static key 48, tag 16.
    public static let overhead = 96

    /// Seals content for a recipient.
    /// - Parameters:
    ///   - content: what to send.
    ///   - displayName: the sender's display name (carried inside, unseen by relays).
    ///   - sealedAtMilliseconds: the sender's clock now, Unix ms (§13.6 freshness).
    ///   - header: the routing header it is bound to.
    ///   - recipientStaticKey: the recipient's Noise static key, from its verified advert.
    ///   - identity: the sender's keys.
    ///   - ephemeralKey: a fixed ephemeral key, for test vectors only.
    /// - Returns: the sealed bytes for `Routed.sealed`.
    /// - Throws: ``EndToEndError`` `tooLarge` when the plaintext exceeds
    ///   ``WireLimits/maxSealedPlaintext``.
    public static func seal(
        _ content: SealedPayload.OneOf_Content, displayName: String, sealedAtMilliseconds: Int64,
        header: SealHeader, recipientStaticKey: Curve25519.KeyAgreement.PublicKey, identity: LocalIdentity,
        ephemeralKey: Curve25519.KeyAgreement.PrivateKey? = nil
    ) throws(EndToEndError) -> Data {
        var plaintext = SealedPayload()
        plaintext.identityKey = identity.signingKey.publicKey.rawRepresentation
        plaintext.staticSignature = identity.staticSignature
        plaintext.displayName = displayName
        plaintext.sealedAtMs = sealedAtMilliseconds
        plaintext.content = content
        let bytes = plaintext.serialized
        guard bytes.count <= WireLimits.maxSealedPlaintext else {
            throw EndToEndError(.tooLarge, "sealed plaintext of \(bytes.count) bytes exceeds \(WireLimits.maxSealedPlaintext)")
        }
        do {
            var handshake = try NoiseHandshake(
                protocolName: protocolName, initiator: true, prologue: header.prologue,
                staticKey: identity.staticKey, remoteStaticKey: recipientStaticKey, ephemeralKey: ephemeralKey)
            return try handshake.writeMessage(payload: bytes)
        } catch {
            // Only a message over 65,535 bytes could fail here, and the size was checked.
            throw EndToEndError(.tooLarge, "sealing failed: \(error)")
        }
    }

    /// Opens a packet sealed for this node and checks who sent it.
    /// - Parameters:
    ///   - sealed: `Routed.sealed`.
    ///   - header: the routing header it arrived with; its destination must be this node.
    ///   - identity: this node's keys.
    ///   - knownStaticKey: the origin's static key as this node already verified it (from the
    ///     origin's signed advert or a handshake), if any: when the packet's sender static key equals
    ///     it, the binding is known to hold and its Ed25519 signature is not checked again.
    /// - Returns: the plaintext, whose identity key derives to `header.origin` and whose static-key
    ///   binding verified against the static key the handshake authenticated.
    /// - Throws: ``EndToEndError``: `cannotOpen` (not for this node, altered, or moved to another
    ///   header), `malformed`, `wrongOrigin`, `badSignature`.
    public static func open(_ sealed: Data, header: SealHeader, identity: LocalIdentity,
                            knownStaticKey: Curve25519.KeyAgreement.PublicKey? = nil) throws(EndToEndError) -> SealedPayload {
        guard header.destination == identity.nodeID else {
            throw EndToEndError(.cannotOpen, "sealed for node \(header.destination.shortHex), this is node \(identity.nodeID.shortHex)")
        }
        var handshake: NoiseHandshake
        let bytes: Data
        do {
            handshake = try NoiseHandshake(protocolName: protocolName, initiator: false, prologue: header.prologue,
                                           staticKey: identity.staticKey)
            bytes = try handshake.readMessage(sealed)
        } catch {
            throw EndToEndError(.cannotOpen, "sealed packet from node \(header.origin.shortHex) does not open: \(error)")
        }
        let plaintext: SealedPayload
        do {
            plaintext = try SealedPayload(decoding: bytes, what: "sealed payload")
        } catch {
            throw EndToEndError(.malformed, "\(error)")
        }
        guard let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: plaintext.identityKey) else {
            throw EndToEndError(.malformed, "sealed identity key has \(plaintext.identityKey.count) bytes, expected 32")
        }
        let claimed = LocalIdentity.nodeID(identityKey: identityKey)
        guard claimed == header.origin else {
            throw EndToEndError(.wrongOrigin, "sealed identity key belongs to node \(claimed.shortHex), the packet claims origin \(header.origin.shortHex)")
        }
        guard let senderStatic = handshake.remoteStaticKey else {
            throw EndToEndError(.cannotOpen, "sealed packet carries no static key")
        }
        let alreadyVerified = knownStaticKey?.rawRepresentation == senderStatic.rawRepresentation
        guard alreadyVerified
                || LocalIdentity.verifyStaticSignature(plaintext.staticSignature, staticKey: senderStatic, identityKey: identityKey) else {
            throw EndToEndError(.badSignature, "sealed packet's static key is not signed by node \(header.origin.shortHex)")
        }
        if let problem = PeerID.displayNameProblem(plaintext.displayName) {
            throw EndToEndError(.malformed, "sealed display name: \(problem)")
        }
        return plaintext
    }
}
