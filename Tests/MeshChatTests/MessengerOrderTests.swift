import Foundation
import MeshChat
import MeshSession
import MeshStore
import Testing

/// ``Messenger`` on real loopback sessions: a line's acceptance (`announce`, where the chat says
/// `sent`) always comes before any status event of that line, however fast the receipt is.
@Suite("Messenger: sent before its receipt", .serialized)
struct MessengerOrderTests {
    @Test("a receipt that comes back and is on disk while the line is still being announced waits: the consumer sees sent, then delivered")
    func receiptWaitsForAnnouncement() async throws {
        let alice = try await Peer("alice")
        let bob = try await Peer("bob")
        let aliceStore = try MessageStore.inMemory()
        let aliceMessenger = try Messenger(session: alice.session, store: aliceStore)
        let bobMessenger = try Messenger(session: bob.session, store: try MessageStore.inMemory())
        let runners = [Task { await aliceMessenger.run() }, Task { await bobMessenger.run() }]
        let timeline = Timeline()
        let consumer = Task {
            for await event in aliceMessenger.events {
                if case .status(let message) = event { timeline.append("\(message.status) \(message.id)") }
            }
        }
        defer { consumer.cancel() }
        alice.session.connect(host: "127.0.0.1", port: bob.port)
        let bobID = bob.id
        try await waitUntil("a route from alice to bob") { alice.session.route(to: bobID) != nil }

        let stored = try await aliceMessenger.send(text: "hi bob", to: bob.id) { stored in
            // Bob's receipt arrives and is written to alice's store while the line is announced
            // (the chat would be printing `sent` here).
            try? await waitUntil("the receipt on disk") { (try? aliceStore.message(id: stored.id))?.status == .delivered }
            // One more turn of the messenger: the receipt's handler has reported its status by now.
            _ = try? await aliceMessenger.history(limit: 1)
            timeline.append("announced \(stored.id) \(stored.status)")
        }
        try await waitUntil("the delivered status event") { timeline.all.contains("delivered \(stored.id)") }
        let entries = timeline.all
        #expect(entries.first?.hasPrefix("announced \(stored.id)") == true, "\(entries)")
        #expect(entries.last == "delivered \(stored.id)", "\(entries)")
        #expect(entries.count == 2, "one status event after the announcement: \(entries)")

        await alice.stop()
        await bob.stop()
        for runner in runners { await runner.value }
    }
}
