import Foundation
import Crypto
import MeshLink
import MeshRatchet
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// Sessions relaying across the mesh on loopback (PROTOCOL.md §13): A—B—C where A and C have no
/// link, with real sockets, routing adverts, signatures and sealing.
@Suite("Mesh relay over loopback", .serialized)
struct MeshRelayTests {
    /// Starts A, B, C and links A—B and C—B; returns once A and C reach each other in 2 hops.
    static func line() async throws -> (Node, Node, Node, EventReader, EventReader, EventReader) {
        let a = try await Node("alice"), b = try await Node("bob"), c = try await Node("carol")
        var ra = EventReader(a), rb = EventReader(b), rc = EventReader(c)
        a.session.connect(host: "127.0.0.1", port: b.port)
        c.session.connect(host: "127.0.0.1", port: b.port)
        let cID = c.id.id, aID = a.id.id
        let route = try await ra.next { event -> MeshRoute? in
            if case .reachabilityChanged(let peer, let route?) = event, peer.id == cID { return route }
            return nil
        }
        #expect(route.hops == 2)
        #expect(route.nextHop.id == b.id.id)
        #expect(route.path.map(\.id) == [b.id.id, cID])
        #expect(route.peer.displayName == "carol")
        _ = try await rc.next { event -> Bool? in
            if case .reachabilityChanged(let peer, _?) = event, peer.id == aID { return true }
            return nil
        }
        return (a, b, c, ra, rb, rc)
    }

    /// Alice linked to bob, each with an event reader past the `connected` event; bob as alice sees him.
    static func linkedPair() async throws -> (Node, Node, EventReader, EventReader, PeerID) {
        let a = try await Node("alice"), b = try await Node("bob")
        var ra = EventReader(a), rb = EventReader(b)
        a.session.connect(host: "127.0.0.1", port: b.port)
        let bobSeenByA = try await ra.connected()
        _ = try await rb.connected()
        return (a, b, ra, rb, bobSeenByA)
    }

    @Test("data reaches a node two hops away, sealed, once")
    func relayedData() async throws {
        var (a, b, c, _, _, rc) = try await Self.line()
        try await a.session.send(Data("relayed bytes".utf8), to: [c.id], mode: .reliable)
        let data = try await rc.next { event -> ReceivedMessage? in
            if case .received(let message) = event, case .data = message.content { return message }
            return nil
        }
        #expect(data.content == .data(Data("relayed bytes".utf8)))
        #expect(data.hops == 2)
        #expect(data.isPrivate)
        // Exactly once: the next data C receives is the next one sent.
        try await a.session.send(Data("second".utf8), to: [c.id], mode: .reliable)
        let next = try await rc.next { event -> Data? in
            if case .received(let message) = event, case .data(let data) = message.content { return data }
            return nil
        }
        #expect(next == Data("second".utf8))
        for node in [a, b, c] { await node.stop() }
    }

    @Test("A renames itself: B and C report peerRenamed from the new advert, show the new name, and lines and new links carry it")
    func rename() async throws {
        var (a, b, c, _, rb, rc) = try await Self.line()
        let aID = a.id.id
        await #expect(throws: SessionError.self) { try await a.session.rename(to: "") }
        await #expect(throws: SessionError.self) { try await a.session.rename(to: String(repeating: "x", count: 64)) }
        #expect(a.session.peer.peerID.displayName == "alice")
        try await a.session.rename(to: "alicia")
        #expect(a.session.peer.peerID.displayName == "alicia")
        #expect(a.session.peer.peerID.id == aID)
        for reader in [rb, rc] {
            var reader = reader
            let (peer, previous) = try await reader.next { event -> (PeerID, String)? in
                if case .peerRenamed(let peer, let previous) = event, peer.id == aID { return (peer, previous) }
                return nil
            }
            #expect(peer.displayName == "alicia")
            #expect(previous == "alice")
        }
        #expect(b.session.connectedPeers.first { $0.id == aID }?.displayName == "alicia")
        #expect(c.session.reachablePeers.first { $0.peer.id == aID }?.peer.displayName == "alicia")
        // Sealed data carries the new name; a new link's handshake does too.
        try await a.session.send(Data("new name".utf8), to: [c.session.peer.peerID], mode: .reliable)
        let sender = try await rc.next { event -> PeerID? in
            if case .received(let message) = event, message.content == .data(Data("new name".utf8)) { return message.sender }
            return nil
        }
        #expect(sender.displayName == "alicia")
        let d = try await Node("dave")
        var rd = EventReader(d)
        d.session.connect(host: "127.0.0.1", port: a.port)
        let linked = try await rd.next { event -> PeerID? in
            if case .peerChanged(let peer, .connected) = event, peer.id == aID { return peer }
            return nil
        }
        #expect(linked.displayName == "alicia")
        for node in [a, b, c, d] { await node.stop() }
    }

    @Test("when B leaves, C becomes unreachable for A and sends to C fail with notConnected")
    func routeBreaks() async throws {
        var (a, b, c, ra, _, _) = try await Self.line()
        await b.stop()
        let cID = c.id.id
        _ = try await ra.next(timeout: .seconds(8)) { event -> Bool? in
            if case .reachabilityChanged(let peer, nil) = event, peer.id == cID { return true }
            return nil
        }
        #expect(a.session.route(to: c.id) == nil)
        await #expect(throws: SessionError.self) {
            try await a.session.send(Data("x".utf8), to: [c.id], mode: .reliable)
        }
        for node in [a, c] { await node.stop() }
    }

    @Test("a malformed routed packet closes that one link with protocolViolation; a forged broadcast is dropped and the link stays")
    func hostileRoutedPackets() async throws {
        var (a, b, ra, rb, bobSeenByA) = try await Self.linkedPair()

        // A broadcast whose signature does not verify: dropped, logged, the link stays up.
        var forged = RoutedPayload()
        forged.origin = Data(a.id.id.bytes)
        forged.packetID = Data(repeating: 7, count: 16)
        forged.hopLimit = 7
        var body = BroadcastPayload()
        body.identityKey = a.session.peer.identity.signingKey.publicKey.rawRepresentation
        body.packetID = forged.packetID
        body.displayName = "alice"
        var signed = SignedPayload()
        signed.body = body.serialized
        signed.signature = Data(repeating: 1, count: 64)
        forged.broadcast = signed
        try await a.session.sendReliable(.routed(forged), size: 256, to: [bobSeenByA])
        // The link is still up: a line after it arrives.
        try await a.session.send(text: "genuine", to: [bobSeenByA])
        let text = try await rb.next { event -> String? in
            if case .received(let message) = event, case .text(let text) = message.content { return text.text }
            return nil
        }
        #expect(text == "genuine")

        // A routed packet with a 3-byte origin: B closes this link with a reason.
        var malformed = RoutedPayload()
        malformed.origin = Data([1, 2, 3])
        malformed.packetID = Data(repeating: 8, count: 16)
        malformed.sealed = Data([0])
        try await a.session.sendReliable(.routed(malformed), size: 64, to: [bobSeenByA])
        let reason = try await ra.disconnectReason()
        #expect(reason.code == "protocolViolation")
        #expect(reason.isRemote)
        #expect(reason.message.contains("origin has 3 bytes"))
        // B, which closed the link, reports alice gone and drops her from its router (no ghost).
        let gone = try await rb.next { event -> PeerID? in
            if case .peerChanged(let peer, .notConnected) = event { return peer }
            return nil
        }
        #expect(gone.id == a.id.id)
        #expect(b.session.route(to: gone) == nil)
        // Her reconnect is a fresh `connected`.
        a.session.connect(host: "127.0.0.1", port: b.port)
        #expect(try await rb.connected().id == a.id.id)
        // B keeps serving: a new peer connects and chats.
        let c = try await Node("carol")
        var rc = EventReader(c)
        c.session.connect(host: "127.0.0.1", port: b.port)
        _ = try await rc.connected()
        for node in [a, b, c] { await node.stop() }
    }

    @Test("a direct chat line over 64 KiB is refused by the receiver: the link closes with protocolViolation, nothing is delivered")
    func oversizedDirectChat() async throws {
        var (a, b, ra, rb, bobSeenByA) = try await Self.linkedPair()
        let text = String(repeating: "x", count: WireLimits.maxChatTextBytes + 1)
        try await a.session.sendReliable(.chat(id: Data(count: 16), text: text, sentAtMilliseconds: 0), size: text.utf8.count + 64,
                                         to: [bobSeenByA])
        let reason = try await ra.disconnectReason()
        #expect(reason.code == "protocolViolation")
        #expect(reason.message.contains("a chat line of 65537 bytes"))
        let event = try await rb.next { event -> SessionEvent? in
            switch event {
            case .received, .peerChanged(_, .notConnected): return event
            default: return nil
            }
        }
        guard case .peerChanged = event else { Issue.record("delivered: \(event)"); return }
        for node in [a, b] { await node.stop() }
    }

    @Test("a replayed sealed packet is delivered once; data sealed 20 minutes ago is dropped as a replay (channels apply their own window: ChannelTests)")
    func sealedReplays() async throws {
        var (a, b, _, rb, bobSeenByA) = try await Self.linkedPair()
        let identity = a.session.peer.identity
        // Sealed the way alice's node seals, on a session of the test's own (bob begins it from the first).
        let prekey = b.session.mesh.endToEnd.signedPrekey
        let bobKeys = PairSessions.PeerKeys(staticKey: b.session.peer.identity.staticKey.publicKey, prekeyID: prekey.id,
                                            prekey: try Curve25519.KeyAgreement.PublicKey(rawRepresentation: prekey.publicKey))
        var sessions = PairSessions()
        var random = SystemRandomNumberGenerator()
        func sealed(_ text: String, sealedAt: Int64, packet: UInt8) throws -> RoutedPayload {
            var routed = RoutedPayload()
            routed.origin = Data(a.id.id.bytes)
            routed.destination = Data(b.id.id.bytes)
            routed.packetID = Data(repeating: packet, count: 16)
            routed.hopLimit = 7
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            routed.sealed = try RatchetSealing.seal(.data(data), displayName: "alice", sealedAtMilliseconds: sealedAt,
                                                    header: SealHeader(origin: a.id.id, destination: b.id.id, packetID: routed.packetID),
                                                    sessions: &sessions, peer: bobKeys, identity: identity, using: &random).packet
            return routed
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let staleData = try sealed("data from long ago", sealedAt: now - 20 * 60 * 1000, packet: 1)
        let fresh = try sealed("fresh", sealedAt: now, packet: 2)
        let last = try sealed("last", sealedAt: now, packet: 3)
        for routed in [staleData, fresh, fresh, last] {
            try await a.session.sendReliable(.routed(routed), size: 512, to: [bobSeenByA])
        }
        var texts: [String] = []
        while texts.last != "last" {
            texts.append(try await rb.next { event -> String? in
                guard case .received(let message) = event else { return nil }
                switch message.content {
                case .text(let text): return text.text
                case .data(let data): return String(decoding: data, as: UTF8.self)
                }
            })
        }
        #expect(texts == ["fresh", "last"])
        for node in [a, b] { await node.stop() }
    }
}
