import Crypto
import struct Foundation.Data
import MeshLink
import MeshRatchet
import MeshRouting
import MeshSession
import MeshWire

/// The neighbour sealing to the node under test (§19.6): a node with the neighbour linked, the
/// signed prekey its advert publishes (§19.1), and the neighbour's sessions with it.
package struct SealedSender {
    /// The node under test.
    package let node: MeshNode
    /// Its static key and advertised prekey; `nil` if its advert carried none.
    package let prekey: PairSessions.PeerKeys?
    /// The neighbour's sessions with the node.
    package var sessions = PairSessions()
    private var generator = CountingGenerator()
    private let sender = FuzzKeys.neighbour.identity

    /// A fresh node and a neighbour with no session.
    package init() {
        node = MeshNode(peer: FuzzKeys.me, configuration: RoutingConfiguration(), logger: FuzzKeys.logger)
        let step = node.neighborUp(FuzzKeys.neighbour.peerID, staticKey: FuzzKeys.neighbour.identity.staticKey.publicKey.rawRepresentation,
                                   latency: nil)
        let me = FuzzKeys.me.identity
        prekey = step.sends.lazy.compactMap { _, routed -> PairSessions.PeerKeys? in
            guard case .linkState(let signed)? = routed.payload,
                  let advert = try? MeshSigning.verifiedLinkState(signed, origin: me.nodeID), advert.hasSignedPrekey,
                  let key = try? SignedPrekey(id: advert.signedPrekey.id, publicKey: advert.signedPrekey.publicKey,
                                              signature: advert.signedPrekey.signature).verified(by: me.signingKey.publicKey) else { return nil }
            return PairSessions.PeerKeys(staticKey: me.staticKey.publicKey, prekeyID: advert.signedPrekey.id, prekey: key)
        }.first
    }

    /// The routed packet from the neighbour to the node, relayed once, carrying `sealed`.
    func routed(_ sealed: Data, packet: UInt8) -> RoutedPayload {
        var routed = RoutedPayload()
        routed.origin = Data(sender.nodeID.bytes)
        routed.destination = Data(FuzzKeys.me.identity.nodeID.bytes)
        routed.packetID = Data(repeating: packet, count: PacketID.byteCount)
        routed.hopLimit = 7
        routed.hops = 1
        routed.sealed = sealed
        return routed
    }

    /// Delivers bytes as `Routed.sealed` to the node.
    @discardableResult
    package func deliver(_ sealed: Data, packet: UInt8) -> MeshNode.Step {
        node.received(routed(sealed, packet: packet), from: sender.nodeID)
    }

    /// Seals content to the node and delivers it; `nil` when it cannot be sealed.
    @discardableResult
    package mutating func send(_ content: SealedPayload.OneOf_Content, displayName: String = "mallory", at sealedAt: Int64,
                               packet: UInt8) -> MeshNode.Step? {
        let header = SealHeader(origin: sender.nodeID, destination: FuzzKeys.me.identity.nodeID,
                                packetID: Data(repeating: packet, count: PacketID.byteCount))
        guard let sealed = try? RatchetSealing.seal(content, displayName: displayName, sealedAtMilliseconds: sealedAt,
                                                    header: header, sessions: &sessions, peer: prekey, identity: sender,
                                                    using: &generator) else { return nil }
        return deliver(sealed.packet, packet: packet)
    }

    /// Sends a sealed ping and reads the node's sealed answers (so that the neighbour's next messages
    /// are session messages).
    /// - Returns: how many answers opened.
    package mutating func ping(packet: UInt8) -> Int {
        var ping = Meshchat_V1_Ping()
        ping.nonce = 0x6675_7a7a
        guard let step = send(.ping(ping), at: FuzzKeys.nowMilliseconds, packet: packet) else { return 0 }
        var opened = 0
        for (_, routed) in step.sends where !routed.sealed.isEmpty && routed.destination == Data(sender.nodeID.bytes) {
            guard let origin = try? NodeID(bytes: routed.origin) else { continue }
            let header = SealHeader(origin: origin, destination: sender.nodeID, packetID: routed.packetID)
            if let reply = try? RatchetSealing.open(routed.sealed, header: header, sessions: sessions, identity: sender,
                                                    prekey: { _ in nil }, using: &generator) {
                sessions = reply.sessions
                opened += 1
            }
        }
        return opened
    }
}

extension MeshFuzz {
    /// Sealed contents (§13.6, §19.6) with hostile fields but valid sealing, from the neighbour to this
    /// node: first in a prekey message (a new session on the node's advertised prekey), then, after a
    /// sealed ping whose sealed pong the neighbour reads, in a session message with a Diffie-Hellman
    /// step; within the freshness window and with the input's own clock. And the input itself as
    /// sealed bytes (a ratchet packet), to a node with and without a session with the sender.
    @Sendable static func fuzzSealed(_ bytes: [UInt8]) {
        var sender = SealedSender()
        let raw = Data(bytes.prefix(WireLimits.maxSealedSize))
        sender.deliver(raw, packet: 7)
        guard let plaintext = try? SealedPayload(decoding: Data(bytes), what: "sealed"), let content = plaintext.content else { return }
        // Within the freshness window (any Int64 clock is folded in), as a prekey message.
        guard sender.send(content, displayName: plaintext.displayName, at: FuzzKeys.nowMilliseconds &+ plaintext.sealedAtMs % 1_200_000,
                          packet: 8) != nil, sender.ping(packet: 9) > 0 else { return }
        // The clock exactly as the input has it (a skew computation once overflowed on Int64.min,
        // a remote crash), as a session message.
        sender.send(content, displayName: plaintext.displayName, at: plaintext.sealedAtMs, packet: 10)
        // The input as sealed bytes again, now that the node holds a session with the sender.
        sender.deliver(raw, packet: 11)
    }
}
