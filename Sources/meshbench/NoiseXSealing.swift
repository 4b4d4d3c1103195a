import Crypto
import struct Foundation.Data
import MeshLink
import MeshNoise
import MeshWire

extension SealHeader {
    /// The label that starts the prologue.
    static let prologueLabel = Array("meshchat/1 sealed:".utf8)

    /// `"meshchat/1 sealed:" ‖ origin ‖ destination ‖ packet id` (version 2's §13.6).
    var prologue: Data {
        Data(Self.prologueLabel + origin.bytes + destination.bytes + packetID)
    }
}

/// Why ``Sealing`` refused (the failures `EndToEndError` had in version 2).
struct NoiseXError: Error, CustomStringConvertible {
    enum Code { case tooLarge, cannotOpen, malformed, wrongOrigin, badSignature }
    let code: Code
    let description: String
    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// Protocol version 2's end-to-end encryption of private mesh packets with the one-way Noise pattern
/// `Noise_X_25519_ChaChaPoly_SHA256` (§13.6 before version 3): no longer on the wire (version 3 seals
/// with the Double Ratchet, ``RatchetSealing``), kept here only as ``RatchetBench``'s baseline.
///
/// The sender knows the recipient's Noise static key from its signed link-state advert (§13.2).
/// One handshake message carries everything: a fresh ephemeral key, the sender's static key
/// (encrypted), and the ``SealedPayload`` (encrypted), which names the sender's identity key and
/// the signature binding its static key to it (§2.4). Relays see only the routing header.
/// Forward secrecy is that of the X pattern: a later leak of the recipient's static key exposes
/// past messages; a leak of the sender's does not. Pure functions; thread-safe.
enum Sealing {
    /// The Noise protocol name.
    static let protocolName = "Noise_X_25519_ChaChaPoly_SHA256"
    /// Bytes a sealed packet adds to its plaintext: ephemeral key 32, encrypted static key 48, tag 16.
    static let overhead = 96

    /// Seals content for a recipient.
    /// - Parameters:
    ///   - content: what to send.
    ///   - displayName: the sender's display name (carried inside, unseen by relays).
    ///   - sealedAtMilliseconds: the sender's clock now, Unix ms (§13.6 freshness).
    ///   - header: the routing header it is bound to.
    ///   - recipientStaticKey: the recipient's Noise static key, from its verified advert.
    ///   - identity: the sender's keys.
    /// - Returns: the sealed bytes for `Routed.sealed`.
    /// - Throws: ``NoiseXError`` `tooLarge` when the plaintext exceeds
    ///   ``WireLimits/maxSealedPlaintext``.
    static func seal(
        _ content: SealedPayload.OneOf_Content, displayName: String, sealedAtMilliseconds: Int64,
        header: SealHeader, recipientStaticKey: Curve25519.KeyAgreement.PublicKey, identity: LocalIdentity
    ) throws(NoiseXError) -> Data {
        var plaintext = SealedPayload()
        plaintext.identityKey = identity.signingKey.publicKey.rawRepresentation
        plaintext.staticSignature = identity.staticSignature
        plaintext.displayName = displayName
        plaintext.sealedAtMs = sealedAtMilliseconds
        plaintext.content = content
        let bytes = plaintext.serialized
        guard bytes.count <= WireLimits.maxSealedPlaintext else {
            throw NoiseXError(.tooLarge, "sealed plaintext of \(bytes.count) bytes exceeds \(WireLimits.maxSealedPlaintext)")
        }
        do {
            var handshake = try NoiseHandshake(
                protocolName: protocolName, initiator: true, prologue: header.prologue,
                staticKey: identity.staticKey, remoteStaticKey: recipientStaticKey)
            return try handshake.writeMessage(payload: bytes)
        } catch {
            // Only a message over 65,535 bytes could fail here, and the size was checked.
            throw NoiseXError(.tooLarge, "sealing failed: \(error)")
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
    /// - Throws: ``NoiseXError``: `cannotOpen` (not for this node, altered, or moved to another
    ///   header), `malformed`, `wrongOrigin`, `badSignature`.
    static func open(_ sealed: Data, header: SealHeader, identity: LocalIdentity,
                            knownStaticKey: Curve25519.KeyAgreement.PublicKey? = nil) throws(NoiseXError) -> SealedPayload {
        guard header.destination == identity.nodeID else {
            throw NoiseXError(.cannotOpen, "sealed for node \(header.destination.shortHex), this is node \(identity.nodeID.shortHex)")
        }
        var handshake: NoiseHandshake
        let bytes: Data
        do {
            handshake = try NoiseHandshake(protocolName: protocolName, initiator: false, prologue: header.prologue,
                                           staticKey: identity.staticKey)
            bytes = try handshake.readMessage(sealed)
        } catch {
            throw NoiseXError(.cannotOpen, "sealed packet from node \(header.origin.shortHex) does not open: \(error)")
        }
        let plaintext: SealedPayload
        do {
            plaintext = try SealedPayload(decoding: bytes, what: "sealed payload")
        } catch {
            throw NoiseXError(.malformed, "\(error)")
        }
        guard let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: plaintext.identityKey) else {
            throw NoiseXError(.malformed, "sealed identity key has \(plaintext.identityKey.count) bytes, expected 32")
        }
        let claimed = LocalIdentity.nodeID(identityKey: identityKey)
        guard claimed == header.origin else {
            throw NoiseXError(.wrongOrigin, "sealed identity key belongs to node \(claimed.shortHex), the packet claims origin \(header.origin.shortHex)")
        }
        guard let senderStatic = handshake.remoteStaticKey else {
            throw NoiseXError(.cannotOpen, "sealed packet carries no static key")
        }
        let alreadyVerified = knownStaticKey?.rawRepresentation == senderStatic.rawRepresentation
        guard alreadyVerified
                || LocalIdentity.verifyStaticSignature(plaintext.staticSignature, staticKey: senderStatic, identityKey: identityKey) else {
            throw NoiseXError(.badSignature, "sealed packet's static key is not signed by node \(header.origin.shortHex)")
        }
        if let problem = PeerID.displayNameProblem(plaintext.displayName) {
            throw NoiseXError(.malformed, "sealed display name: \(problem)")
        }
        return plaintext
    }
}
