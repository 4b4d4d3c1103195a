import Foundation
import MeshTestSupport
import Testing

/// `meshchat rotate-key` between real processes (PROTOCOL.md §20.2): peers carry a verified
/// rotation's name, verification and conversation over to the new key.
@Suite("key rotation in the chat", .serialized)
struct KeyRotationTests {
    @Test("bob rotates his key while away: alice shows him with the new id still verified, queued and new /msg @bob reach the new key, a fresh key named bob stays flagged")
    func rotationCarriesOver() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await TwoPeerTests.connectedPair(directory)
        let oldID = try #require(JSONLine(bob.output[0])?.string("id"))
        alice.send("/trust @bob")
        let trusted = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"trust\"")))
        #expect(trusted.object("peer")?["verified"] as? Bool == true)

        // Not while bob runs from the directory.
        let refused = try ChatProcess(["rotate-key", "--data-dir", directory.appending("bob")], label: "rotate while running")
        #expect(try await refused.waitForExit() == 1)
        #expect(refused.errors.contains("another meshchat"), "\(refused.errors)")

        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        try await alice.waitForEvent("\"event\":\"peer\"", oldID, "\"state\":\"notConnected\"")
        alice.send("/msg @bob queued for the old key")
        let queued = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "queued for the old key")))
        #expect(queued.string("status") == "queued")

        let rotate = try ChatProcess(["rotate-key", "--data-dir", directory.appending("bob")], label: "rotate")
        #expect(try await rotate.waitForExit() == 0, "\(rotate.errors)")
        #expect(rotate.output.joined().contains("succeeds \(oldID)"), "\(rotate.output)")

        let again = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                     "--connect", "127.0.0.1:\(port)"], label: "bob rotated")
        let newID = try #require(JSONLine(try await again.waitForEvent("\"event\":\"ready\""))?.string("id"))
        #expect(newID != oldID)
        let rotated = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"keyRotated\"")))
        #expect(rotated.string("old") == oldID)
        #expect(rotated.string("new") == newID)
        #expect(rotated.object("peer")?["verified"] as? Bool == true)
        let connected = try await alice.waitForEvent("\"event\":\"peer\"", newID, "\"state\":\"connected\"")
        #expect(connected.contains("\"verified\":true") && !connected.contains("newKey"), "\(connected)")
        #expect(!alice.output.contains { $0.contains("\"event\":\"nameConflict\"") })

        // The line queued for the old key reaches the new one; @bob now means the new key.
        try await again.waitForEvent("\"event\":\"message\"", "queued for the old key")
        alice.send("/msg @bob after the rotation")
        let sent = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "after the rotation")))
        #expect((sent.object["to"] as? [[String: Any]])?.first?["id"] as? String == newID)
        try await again.waitForEvent("\"event\":\"message\"", "after the rotation")

        // A fresh key under bob's name is still a newcomer.
        let (impostor, impostorID) = try await TrustTests.impostor(directory, connectingTo: port)
        let conflict = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"nameConflict\"")))
        #expect(conflict.object("peer")?["id"] as? String == impostorID)
        #expect(conflict.object("holder")?["id"] as? String == newID)

        for process in [impostor, again, alice] { process.send("/quit") }
        for process in [impostor, again, alice] { #expect(try await process.waitForExit() == 0) }
    }
}
