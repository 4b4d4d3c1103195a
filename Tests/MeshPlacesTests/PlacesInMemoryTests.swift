import Foundation
import MeshPlaces
import MeshSession
import MeshStore
import MeshTestSupport
import Places
import Testing

/// Places alone on the in-memory tier: A—B—C on an `InMemoryFabric` (no sockets, virtual time),
/// a ``PlaceService`` on A (holding a data set) and on C (none); B only relays.
@Suite("Places on the in-memory mesh")
struct PlacesInMemoryTests {
    /// A places service on a node, fed the node's session events, run for the mesh's lifetime.
    static func places(on node: TestNode, local: LocalPlaces, in mesh: TestMesh) async throws -> (PlaceService, EventQueue<PlacesEvent>) {
        let service = try PlaceService(session: node.session, store: try MessageStore.inMemory(), local: local,
                                       logger: node.logs.logger(label: "\(node.name).places"))
        await service.advertise()
        let shown = EventQueue<PlacesEvent>(capacity: 64)
        let session = node.session
        mesh.spawn { for await event in session.events { _ = await service.handle(event) } }
        mesh.spawn { await service.run { await shown.push($0) } }
        return (service, shown)
    }

    @Test("C learns A's data set across B, its lookup is answered from A's data 2 hops away, and A's pin and withdrawal reach C")
    func lookupAndPinAcrossHops() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice", readsEvents: false)
            let b = try await mesh.node("bob")
            let c = try await mesh.node("carol", readsEvents: false)
            let (alice, _) = try await Self.places(on: a, local: LocalPlacesTests.local([("london", LocalPlacesTests.places)]), in: mesh)
            let (carol, shownAtC) = try await Self.places(on: c, local: LocalPlaces(), in: mesh)
            try await mesh.link(a, b)
            try await mesh.link(b, c)
            try await mesh.advance(until: "C learns A's data set") { !carol.peersWithData.isEmpty }
            let (peer, sets) = try #require(carol.peersWithData.first)
            #expect(peer.id == a.peer.id && sets.map(\.name) == ["london"])
            #expect(c.session.route(to: a.peer)?.hops == 2)

            let result = await carol.lookup(try PlaceLookup(centre: LocalPlacesTests.london, radius: .kilometres(2), text: "pizza"))
            #expect(result.hits.map(\.name) == ["Pizza Express", "PIZZA hut"])
            #expect(result.hits.allSatisfy { $0.source?.id == a.peer.id })

            let (pin, _) = try await alice.pin(LocalPlacesTests.london, label: "Meet here")
            let added = try await mesh.next(shownAtC) { event -> SharedPin? in
                if case .pinAdded(let pin) = event { return pin }
                return nil
            }
            #expect(added.id == pin.id && added.author.id == a.peer.id)
            #expect(try await alice.unpin([pin.id]).map(\.id) == [pin.id])
            let withdrawn = try await mesh.next(shownAtC) { event -> SharedPin? in
                if case .pinWithdrawn(let pin) = event { return pin }
                return nil
            }
            #expect(withdrawn.id == pin.id)
            #expect(try await carol.pins().isEmpty)
        }
    }

    @Test("a pin with a 1-minute lifetime reaches C when C becomes reachable, is live there until 60 s of virtual time have passed, then is gone at A and C")
    func pinExpiresOnVirtualTime() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice", readsEvents: false)
            let c = try await mesh.node("carol", readsEvents: false)
            let (alice, _) = try await Self.places(on: a, local: LocalPlaces(), in: mesh)
            let (carol, shownAtC) = try await Self.places(on: c, local: LocalPlaces(), in: mesh)
            // Pinned before C is reachable, so that C gets it in A's catch-up (a catch-up read
            // before a pin and sent after it would withdraw it at C).
            let started = mesh.elapsed
            let (pin, nobody) = try await alice.pin(LocalPlacesTests.london, label: "Short stay", lifetime: .seconds(60))
            #expect(nobody)
            try await mesh.link(a, c)
            _ = try await mesh.next(shownAtC) { event -> Bool? in
                if case .pinAdded(let added) = event, added.id == pin.id { return true }
                return nil
            }
            await mesh.advance(by: .seconds(59))
            #expect(try await carol.pins().map(\.id) == [pin.id], "live before its lifetime ends")
            // Each node's own expiry timer fires at the same virtual instant, on its own task: wait for
            // both (checking A once C is empty raced A's timer task).
            try await mesh.advance(until: "the pin expires at C and at its author A", step: .seconds(1), limit: .seconds(10)) {
                let goneAtC = (try? await carol.pins().isEmpty) ?? false
                let goneAtA = (try? await alice.pins().isEmpty) ?? false
                return goneAtC && goneAtA
            }
            #expect(mesh.elapsed - started >= .seconds(60))
        }
    }

    @Test("C's lookups beyond A's burst of 10 are refused while virtual time stands still; 1 s of it refills the bucket and A answers again")
    func queryRateOnVirtualTime() async throws {
        try await withTestMesh { mesh in
            let a = try await mesh.node("alice", readsEvents: false)
            let c = try await mesh.node("carol", readsEvents: false)
            _ = try await Self.places(on: a, local: LocalPlacesTests.local([("london", LocalPlacesTests.places)]), in: mesh)
            let (carol, _) = try await Self.places(on: c, local: LocalPlaces(), in: mesh)
            try await mesh.link(a, c)
            try await mesh.advance(until: "C learns A's data set") { !carol.peersWithData.isEmpty }
            func outcome() async -> LookupResult.Outcome? {
                // A new lookup (a new id) each time.
                guard let lookup = try? PlaceLookup(centre: LocalPlacesTests.london, radius: .kilometres(2), text: "pizza") else { return nil }
                return await carol.lookup(lookup).sources.first { $0.peer?.id == a.peer.id }?.outcome
            }
            let burst = Int(PlacesLimits.queriesPerNodeBurst)
            for index in 0..<burst {
                let answered = await outcome()
                guard case .answered = answered else {
                    Issue.record("lookup \(index + 1) of the burst: \(String(describing: answered))")
                    return
                }
            }
            let over = await outcome()
            guard case .refused = over else {
                Issue.record("lookup \(burst + 1) was not refused: \(String(describing: over))")
                return
            }
            await mesh.advance(by: .seconds(1))
            let refilled = await outcome()
            guard case .answered = refilled else {
                Issue.record("after 1 s of virtual time: \(String(describing: refilled))")
                return
            }
        }
    }
}
