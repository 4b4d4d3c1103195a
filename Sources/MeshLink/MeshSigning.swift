import Crypto
import struct Foundation.Data
import MeshWire

/// Signatures on mesh payloads that every node may read but no relay may forge or alter:
/// link-state adverts and broadcasts (PROTOCOL.md §13.4).
///
/// The origin signs `context ‖ body` with its Ed25519 identity key, where `body` is the serialized
/// ``LinkStatePayload`` or ``BroadcastPayload`` exactly as carried in ``SignedPayload/body``. The
/// routing header (hop limit, hops) is outside the signature so relays can update it. A verifier
/// checks that the body's identity key derives to the packet's origin (§2.2), then the signature.
/// Pure functions; thread-safe.
public enum MeshSigning {
    /// The signature context of link-state adverts (§13.4).
    public static let linkStateContext = Array("meshchat/1 link-state:".utf8)
    /// The signature context of broadcasts (§13.4).
    public static let broadcastContext = Array("meshchat/1 broadcast:".utf8)

    /// Signs a serialized body.
    /// - Parameters:
    ///   - body: the serialized payload.
    ///   - context: ``linkStateContext`` or ``broadcastContext``.
    ///   - identity: the origin's keys.
    /// - Returns: the body with its signature.
    public static func sign(_ body: Data, context: [UInt8], identity: LocalIdentity) -> SignedPayload {
        var signed = SignedPayload()
        signed.body = body
        // Ed25519 signing with a valid key does not fail.
        signed.signature = try! identity.signingKey.signature(for: context + body)
        return signed
    }

    /// Signs a link-state advert, filling in the origin's keys.
    /// - Parameters:
    ///   - advert: the advert (display name, sequence, neighbours).
    ///   - identity: the origin's keys.
    /// - Returns: the signed advert.
    public static func signLinkState(_ advert: LinkStatePayload, identity: LocalIdentity) -> SignedPayload {
        var advert = advert
        advert.identityKey = identity.signingKey.publicKey.rawRepresentation
        advert.staticKey = identity.staticKey.publicKey.rawRepresentation
        advert.staticSignature = identity.staticSignature
        advert.rotations = Array(identity.rotations.prefix(WireLimits.maxKeyRotations))
        return sign(advert.serialized, context: linkStateContext, identity: identity)
    }

    /// Signs a broadcast, filling in the origin's identity key.
    /// - Parameters:
    ///   - broadcast: the broadcast (packet id, name, time, content).
    ///   - identity: the origin's keys.
    /// - Returns: the signed broadcast.
    public static func signBroadcast(_ broadcast: BroadcastPayload, identity: LocalIdentity) -> SignedPayload {
        var broadcast = broadcast
        broadcast.identityKey = identity.signingKey.publicKey.rawRepresentation
        return sign(broadcast.serialized, context: broadcastContext, identity: identity)
    }

    /// Verifies and decodes a link-state advert (§13.2, §13.4).
    /// - Parameters:
    ///   - signed: the signed advert from a routed packet.
    ///   - origin: the routed packet's origin.
    /// - Returns: the advert, whose identity key, static key and static-key binding all verified.
    /// - Throws: ``EndToEndError``: `malformed`, `wrongOrigin` or `badSignature`.
    public static func verifiedLinkState(_ signed: SignedPayload, origin: NodeID) throws(EndToEndError) -> LinkStatePayload {
        let advert: LinkStatePayload
        do {
            advert = try LinkStatePayload(decoding: signed.body, what: "link state")
        } catch {
            throw EndToEndError(.malformed, "\(error)")
        }
        let identityKey = try verify(signed, identityKey: advert.identityKey, origin: origin,
                                     context: linkStateContext, what: "link state")
        guard let staticKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: advert.staticKey) else {
            throw EndToEndError(.malformed, "link state static key has \(advert.staticKey.count) bytes, expected 32")
        }
        guard LocalIdentity.verifyStaticSignature(advert.staticSignature, staticKey: staticKey, identityKey: identityKey) else {
            throw EndToEndError(.badSignature, "link state static key is not signed by the origin's identity key")
        }
        if let problem = PeerID.displayNameProblem(advert.displayName) {
            throw EndToEndError(.malformed, "link state display name: \(problem)")
        }
        guard advert.neighbors.count <= WireLimits.maxAdvertNeighbors else {
            throw EndToEndError(.malformed, "link state lists \(advert.neighbors.count) neighbours (maximum \(WireLimits.maxAdvertNeighbors))")
        }
        for neighbor in advert.neighbors where neighbor.nodeID.count != NodeID.byteCount {
            throw EndToEndError(.malformed, "link state neighbour id has \(neighbor.nodeID.count) bytes, expected \(NodeID.byteCount)")
        }
        return advert
    }

    /// Verifies and decodes a broadcast (§13.5, §13.4).
    /// - Parameters:
    ///   - signed: the signed broadcast from a routed packet.
    ///   - origin: the routed packet's origin.
    ///   - packetID: the routed packet's id, which the signed body must repeat.
    /// - Returns: the broadcast.
    /// - Throws: ``EndToEndError``: `malformed`, `wrongOrigin` or `badSignature`.
    public static func verifiedBroadcast(_ signed: SignedPayload, origin: NodeID, packetID: Data) throws(EndToEndError) -> BroadcastPayload {
        let broadcast: BroadcastPayload
        do {
            broadcast = try BroadcastPayload(decoding: signed.body, what: "broadcast")
        } catch {
            throw EndToEndError(.malformed, "\(error)")
        }
        _ = try verify(signed, identityKey: broadcast.identityKey, origin: origin, context: broadcastContext, what: "broadcast")
        guard broadcast.packetID == packetID else {
            throw EndToEndError(.malformed, "broadcast packet id differs from the routing header's (a relay re-labelled it)")
        }
        return broadcast
    }

    private static func verify(_ signed: SignedPayload, identityKey raw: Data, origin: NodeID, context: [UInt8],
                               what: String) throws(EndToEndError) -> Curve25519.Signing.PublicKey {
        guard let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            throw EndToEndError(.malformed, "\(what) identity key has \(raw.count) bytes, expected 32")
        }
        let claimed = LocalIdentity.nodeID(identityKey: identityKey)
        guard claimed == origin else {
            throw EndToEndError(.wrongOrigin, "\(what) identity key belongs to node \(claimed.shortHex), the packet claims origin \(origin.shortHex)")
        }
        guard identityKey.isValidSignature(signed.signature, for: context + signed.body) else {
            throw EndToEndError(.badSignature, "\(what) signature from node \(origin.shortHex) does not verify")
        }
        return identityKey
    }
}
