import Foundation
import Logging
import MeshLink
import MeshPlaces
import MeshSession
import MeshStore
import Places
import Testing

/// The places application on channel 3 between two real sessions over loopback, built on the
/// public session API only (PROTOCOL.md §14): bob, with no data, learns alice's data set from her
/// advert's channel 3 attachment, looks places up from her data, and gets her pin and withdrawal.
@Suite("places on channel 3 over loopback", .serialized)
struct PlacesChannelTests {
    /// One node: a session, its places service, and what the service showed.
    final class Node: Sendable {
        let session: Session
        let places: PlaceService
        let shown = EventQueue<PlacesEvent>(capacity: 64)
        let port: Int
        let tasks: [Task<Void, Never>]

        init(_ name: String, local: LocalPlaces) async throws {
            var configuration = Session.Configuration()
            configuration.host = "127.0.0.1"
            let logger = Logger(label: "test.\(name)") { _ in SwiftLogNoOpLogHandler() }
            session = Session(peer: try LocalPeer(displayName: name, identity: try LocalIdentity.generate()), configuration: configuration,
                              logger: logger)
            places = try PlaceService(session: session, store: try MessageStore.inMemory(), local: local, logger: logger)
            await places.advertise()
            port = try await session.start()
            let (session, places, shown) = (session, places, shown)
            tasks = [
                Task { try? await session.run() },
                Task { for await event in session.events { _ = await places.handle(event) } },
                Task { await places.run { await shown.push($0) } },
            ]
        }

        func stop() async {
            await session.disconnect()
            for task in tasks { await task.value }
        }
    }

    /// The next thing a node's places service showed, or a failure at the deadline.
    static func next(_ node: Node, timeout: Duration = .seconds(10)) async throws -> PlacesEvent {
        try await withThrowingTaskGroup(of: PlacesEvent?.self) { group in
            group.addTask {
                var iterator = node.shown.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let event = first else { throw PlacesInputError("nothing shown within \(timeout)") }
            return event
        }
    }

    @Test("bob sees alice's data set in her attachment, his lookup is answered from her data, her pin and its withdrawal reach him")
    func lookupAndPins() async throws {
        let alice = try await Node("alice", local: LocalPlacesTests.local([("london", LocalPlacesTests.places)]))
        let bob = try await Node("bob", local: LocalPlaces())
        do {
            bob.session.connect(host: "127.0.0.1", port: alice.port)
            let deadline = ContinuousClock.now + .seconds(10)
            while bob.places.peersWithData.isEmpty {
                guard ContinuousClock.now < deadline else { throw PlacesInputError("alice's data set did not reach bob") }
                try await Task.sleep(for: .milliseconds(10))
            }
            let (peer, sets) = try #require(bob.places.peersWithData.first)
            #expect(peer.id == alice.session.peer.peerID.id)
            #expect(sets.map(\.name) == ["london"] && sets.map(\.count) == [4])
            #expect(alice.places.placeSets(of: bob.session.peer.peerID).isEmpty, "bob advertises no data")

            let result = await bob.places.lookup(try PlaceLookup(centre: LocalPlacesTests.london, radius: .kilometres(2), text: "pizza"))
            #expect(result.hits.map(\.name) == ["Pizza Express", "PIZZA hut"])
            #expect(result.hits.allSatisfy { $0.source?.id == peer.id })

            let (pin, _) = try await alice.places.pin(LocalPlacesTests.london, label: "Meet here")
            guard case .pinAdded(let added) = try await Self.next(bob) else { throw PlacesInputError("bob was shown no pin") }
            #expect(added.id == pin.id && added.label == "Meet here" && added.author.id == peer.id)
            #expect(try await bob.places.pins().map(\.id) == [pin.id])
            #expect(try await alice.places.unpin([pin.id]).map(\.id) == [pin.id])
            guard case .pinWithdrawn(let withdrawn) = try await Self.next(bob) else { throw PlacesInputError("bob was shown no withdrawal") }
            #expect(withdrawn.id == pin.id)
            #expect(try await bob.places.pins().isEmpty)
        } catch {
            Issue.record(error)
        }
        await bob.stop()
        await alice.stop()
    }
}
