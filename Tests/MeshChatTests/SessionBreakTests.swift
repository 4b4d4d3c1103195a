import Foundation
import MeshChat
import MeshLink
@testable import MeshSession
import MeshStore
import MeshTestSupport
import MeshTrust
import Testing

/// The chat's promises across what breaks an end-to-end session (issue 15 item 5, PROTOCOL.md §17,
/// §19.7, §20.2), on the in-memory tier: A—B—C, messengers on A and C, virtual time.
@Suite("Chat across end-to-end session breaks and key rotations")
struct SessionBreakTests {
    /// Every line a messenger reported received, in order (read from its events for the mesh's lifetime).
    actor Received {
        var lines: [StoredMessage] = []
        var texts: [String] { lines.map(\.text) }
        func append(_ line: StoredMessage) { lines.append(line) }
    }

    static func collect(_ messenger: Messenger, in mesh: TestMesh) -> Received {
        let received = Received()
        mesh.spawn {
            for await event in messenger.events {
                if case .message(let message) = event { await received.append(message) }
            }
        }
        return received
    }

    /// A—B—C with messengers on A and C that have both handled the other's reachability (its
    /// outbox and receipt flush done), so that no resend of an earlier line races the break.
    static func settledLine(_ mesh: TestMesh) async throws -> (TestNode, TestNode, Messenger, Messenger) {
        let a = try await mesh.node("alice", readsEvents: false), b = try await mesh.node("bob")
        let c = try await mesh.node("carol", readsEvents: false)
        let alice = try ChatInMemoryTests.messenger(on: a, in: mesh), carol = try ChatInMemoryTests.messenger(on: c, in: mesh)
        try await mesh.link(a, b)
        try await mesh.link(b, c)
        try await mesh.advance(until: "A and C reach each other") {
            a.session.route(to: c.peer)?.hops == 2 && c.session.route(to: a.peer)?.hops == 2
        }
        for (messenger, other) in [(alice, c.peer.id), (carol, a.peer.id)] {
            _ = try await mesh.next(messenger.events) { event -> Bool? in
                if case .session(.reachabilityChanged(let peer, _?)) = event, peer.id == other { return true }
                return nil
            }
        }
        return (a, c, alice, carol)
    }

    static func delivered(_ ids: [String], at messenger: Messenger) -> Bool {
        ids.allSatisfy { (try? messenger.store.message(id: $0))?.status == .delivered }
    }

    @Test("carol loses every end-to-end session (a wiped sessions/ dir) while alice sends: each line arrives once, in order, and each gets its receipt; the outbox goes on")
    func receiverLostSessions() async throws {
        try await withTestMesh { mesh in
            let (a, c, alice, carol) = try await Self.settledLine(mesh)
            let received = Self.collect(carol, in: mesh)
            let first = try await alice.send(text: "before the break", to: c.peer)
            try await mesh.advance(until: "the first line is acknowledged") { Self.delivered([first.id], at: alice) }
            // Carol's sessions vanish, in memory and on disk; alice's session with her goes on.
            c.session.mesh.endToEnd.forgetAll()
            var ids = [first.id]
            for n in 1...3 { ids.append(try await alice.send(text: "line \(n)", to: c.peer).id) }
            // The first of them cannot open at carol (she answers with a repair); the outbox sends
            // what was not acknowledged again, on a new session.
            try await mesh.advance(until: "every line is acknowledged", limit: .seconds(120)) { Self.delivered(ids, at: alice) }
            #expect(c.logs.all.contains { $0.contains("dropped a sealed packet") }, "the break was hit: a line did not open at carol")
            // Retries that were already on their way, and any retry due later, change nothing.
            await mesh.advance(by: .seconds(30))
            #expect(await received.texts == ["before the break", "line 1", "line 2", "line 3"])
            #expect(try alice.store.pending(to: c.peer.id).isEmpty)
            let after = try await alice.send(text: "after the repair", to: c.peer)
            try await mesh.advance(until: "a line after the repair is acknowledged") { Self.delivered([after.id], at: alice) }
            #expect(await received.texts == ["before the break", "line 1", "line 2", "line 3", "after the repair"])
        }
    }

    @Test("both ends lose their sessions with each other at different times: lines both ways arrive once each and are acknowledged")
    func bothEndsLoseSessions() async throws {
        try await withTestMesh { mesh in
            let (a, c, alice, carol) = try await Self.settledLine(mesh)
            let atCarol = Self.collect(carol, in: mesh), atAlice = Self.collect(alice, in: mesh)
            let hello = try await alice.send(text: "hello", to: c.peer)
            try await mesh.advance(until: "hello is acknowledged") { Self.delivered([hello.id], at: alice) }
            // Alice loses her sessions, then carol hers. The end that kept its sessions sends first,
            // on one the other end no longer holds; then the other end sends.
            for (round, lost) in [a, c].enumerated() {
                lost.session.mesh.endToEnd.forgetAll()
                let order = round == 0 ? [(carol, a, "carol"), (alice, c, "alice")] : [(alice, c, "alice"), (carol, a, "carol")]
                var sent: [(Messenger, String)] = []
                for (messenger, to, name) in order {
                    sent.append((messenger, try await messenger.send(text: "from \(name) \(round)", to: to.peer).id))
                }
                let lines = sent
                try await mesh.advance(until: "round \(round)'s lines are acknowledged", limit: .seconds(120)) {
                    lines.allSatisfy { Self.delivered([$0.1], at: $0.0) }
                }
                #expect(lost.logs.all.contains { $0.contains("dropped a sealed packet") }, "the break was hit at \(lost.name)")
            }
            await mesh.advance(by: .seconds(30))
            #expect(await atCarol.texts == ["hello", "from alice 0", "from alice 1"])
            #expect(await atAlice.texts == ["from carol 0", "from carol 1"])
        }
    }
}

extension SessionBreakTests {
    /// New keys with a valid statement retiring `retired` for them (§20.2).
    static func successor(of retired: LocalIdentity) throws -> LocalIdentity {
        var identity = try LocalIdentity.generate()
        identity.rotations = [try KeyRotation(retiring: retired.signingKey, for: identity.signingKey,
                                              issuedAtMilliseconds: 1_800_000_000_000).payload]
        return identity
    }

    @Test("two nodes retire one blocked key by valid statements: the second is reported as a dispute naming the first, and the block covers both")
    func disputedRotation() async throws {
        try await withTestMesh { mesh in
            let retired = try LocalIdentity.generate()
            let a = try await mesh.node("alice", readsEvents: false)
            let alice = try ChatInMemoryTests.messenger(on: a, in: mesh)
            try await alice.block(try PeerID(id: retired.nodeID, displayName: "bob"))
            let first = try await mesh.node("bob", identity: try Self.successor(of: retired))
            try await mesh.link(first, a)
            try await mesh.advance(until: "alice blocks the first successor") { (try? await alice.blocked()[first.peer.id]) != nil }
            let second = try await mesh.node("bob2", identity: try Self.successor(of: retired))
            try await mesh.link(second, a)
            let (claimant, previous, successor) = try await mesh.next(alice.events) { event -> (NodeID, NodeID, NodeID)? in
                if case .session(.keyRotationDisputed(let peer, let previous, let successor)) = event { return (peer.id, previous, successor) }
                return nil
            }
            #expect(claimant == second.peer.id && previous == retired.nodeID && successor == first.peer.id)
            #expect(try await alice.blocked()[second.peer.id] == "bob", "a block of the retired key covers every claimant")
            #expect(try await alice.blocked()[first.peer.id] == "bob")
        }
    }

    @Test("a blocked peer that rotates its key with a valid statement stays blocked: its new key is blocked and its private line is acknowledged, never stored")
    func blockFollowsRotation() async throws {
        try await withTestMesh { mesh in
            let retired = try LocalIdentity.generate()
            let identity = try Self.successor(of: retired)
            let old = retired.nodeID
            let a = try await mesh.node("alice", readsEvents: false)
            let alice = try ChatInMemoryTests.messenger(on: a, in: mesh)
            try await alice.block(try PeerID(id: old, displayName: "mallory"))
            let m = try await mesh.node("mallory", readsEvents: false, identity: identity)
            let mallory = try ChatInMemoryTests.messenger(on: m, in: mesh)
            let received = Self.collect(alice, in: mesh)
            try await mesh.link(m, a)
            try await mesh.advance(until: "alice blocks mallory's new key") { (try? await alice.blocked()[m.peer.id]) == "mallory" }
            #expect(try await alice.blocked()[old] == "mallory", "the retired key stays blocked")
            let line = try await mallory.send(text: "let me in", to: a.peer)
            try await mesh.advance(until: "mallory's line is acknowledged") { Self.delivered([line.id], at: mallory) }
            #expect(try alice.store.message(id: line.id) == nil)
            #expect(await received.texts.isEmpty)
        }
    }
}
