import Foundation
import MeshLink
import MeshSession
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

    @Test("a private line from A reaches C through B, sealed, and C's receipt comes back")
    func privateLineAndReceipt() async throws {
        var (a, b, c, ra, _, rc) = try await Self.line()
        #expect(a.session.connectedPeers.map(\.id) == [b.id.id])
        #expect(a.session.reachablePeers.map(\.peer.id).contains(c.id.id))
        let id = String(repeating: "ab", count: 16)
        try await a.session.sendPrivate(text: "only for carol", id: id, sentAt: Date(), order: MessageOrder(sequence: 1, floor: 1), to: c.id)
        let received = try await rc.next { event -> ReceivedMessage? in
            if case .received(let message) = event { return message }
            return nil
        }
        #expect(received.sender.id == a.id.id)
        #expect(received.sender.displayName == "alice")
        #expect(received.hops == 2)
        #expect(received.isPrivate)
        guard case .text(let text) = received.content else { Issue.record("not text"); return }
        #expect(text.text == "only for carol")
        #expect(text.id == id)
        #expect(text.order == MessageOrder(sequence: 1, floor: 1))

        try await c.session.sendReceipt(for: [id], to: received.sender)
        let carol = c.id.id
        let ids = try await ra.next { event -> [String]? in
            if case .receipt(let from, let ids) = event, from.id == carol { return ids }
            return nil
        }
        #expect(ids == [id])
        for node in [a, b, c] { await node.stop() }
    }

    @Test("a broadcast reaches every node once, with its hop count; data reaches a node two hops away")
    func broadcastAndRelayedData() async throws {
        var (a, b, c, _, rb, rc) = try await Self.line()
        let sent = try await a.session.broadcast(text: "hello, mesh")
        #expect(!sent.sentToNobody)
        for (reader, hops) in [(rb, 1), (rc, 2)] {
            var reader = reader
            let message = try await reader.next { event -> ReceivedMessage? in
                if case .received(let message) = event, case .text = message.content { return message }
                return nil
            }
            #expect(message.hops == hops)
            #expect(!message.isPrivate)
            guard case .text(let text) = message.content else { return }
            #expect(text.text == "hello, mesh" && text.id == sent.id)
        }
        try await a.session.send(Data("relayed bytes".utf8), to: [c.id], mode: .reliable)
        let data = try await rc.next { event -> ReceivedMessage? in
            if case .received(let message) = event, case .data = message.content { return message }
            return nil
        }
        #expect(data.content == .data(Data("relayed bytes".utf8)))
        #expect(data.hops == 2)
        // Exactly once: the broadcast is not delivered again (a second broadcast is the next text).
        _ = try await a.session.broadcast(text: "second")
        let next = try await rc.next { event -> String? in
            if case .received(let message) = event, case .text(let text) = message.content { return text.text }
            return nil
        }
        #expect(next == "second")
        _ = rb
        for node in [a, b, c] { await node.stop() }
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
}
