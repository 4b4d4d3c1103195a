import Foundation
import MeshTestSupport
import Testing

/// `/trust` and names bound to keys between real `meshchat` processes (PROTOCOL.md §20.3).
@Suite("verified peers and names bound to keys in the chat", .serialized)
struct TrustTests {
    @Test("an impostor named bob is flagged, /msg @bob goes to the real bob (also when it is away), and /trust survives a restart")
    func impostor() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await TwoPeerTests.connectedPair(directory)
        let bobID = try #require(JSONLine(bob.output[0])?.string("id"))

        alice.send("/trust @bob")
        let trusted = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"trust\"")))
        #expect(trusted.object("peer")?["id"] as? String == bobID)
        #expect(trusted.object("peer")?["verified"] as? Bool == true)
        alice.send("/peers")
        let peers = try await alice.waitForEvent("\"event\":\"peers\"", bobID)
        #expect(peers.contains("\"verified\":true"))

        let impostor = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("impostor"),
                                        "--connect", "127.0.0.1:\(port)"], label: "impostor")
        let impostorID = try #require(JSONLine(try await impostor.waitForEvent("\"event\":\"ready\""))?.string("id"))
        #expect(impostorID != bobID)
        let conflict = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"nameConflict\"")))
        #expect(conflict.object("peer")?["id"] as? String == impostorID)
        #expect(conflict.object("peer")?["newKey"] as? Bool == true)
        #expect(conflict.object("holder")?["id"] as? String == bobID)
        let flagged = try await alice.waitForEvent("\"event\":\"peer\"", impostorID, "\"state\":\"connected\"")
        #expect(flagged.contains("\"newKey\":true") && flagged.contains("\"nameHolder\":\"\(bobID)\""))

        alice.send("/msg @bob for the real bob")
        let sent = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "for the real bob")))
        #expect((sent.object["to"] as? [[String: Any]])?.first?["id"] as? String == bobID)
        try await bob.waitForEvent("\"event\":\"message\"", "for the real bob")
        // The newcomer is reached by its id prefix only.
        alice.send("/msg @\(impostorID.prefix(8)) who are you")
        try await impostor.waitForEvent("\"event\":\"message\"", "who are you")

        // The real bob goes away: @bob still means him (queued), never the impostor still connected.
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        try await alice.waitForEvent("\"event\":\"peer\"", bobID, "\"state\":\"notConnected\"")
        alice.send("/msg @bob while you are away")
        let queued = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "while you are away")))
        #expect((queued.object["to"] as? [[String: Any]])?.first?["id"] as? String == bobID)
        #expect(queued.string("status") == "queued")

        impostor.send("/quit")
        alice.send("/quit")
        #expect(try await impostor.waitForExit() == 0)
        #expect(try await alice.waitForExit() == 0)

        // After a restart bob is still verified and still holds the name.
        let again = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice")], label: "alice again")
        try await again.waitForEvent("\"event\":\"ready\"")
        again.send("/trust")
        let list = try #require(JSONLine(try await again.waitForEvent("\"event\":\"trusted\"")))
        #expect((list.object["peers"] as? [[String: Any]])?.map { $0["id"] as? String } == [bobID])
        again.send("/untrust @bob")
        let untrusted = try #require(JSONLine(try await again.waitForEvent("\"event\":\"trust\"")))
        #expect(untrusted.object["verified"] as? Bool == false)
        again.send("/quit")
        #expect(try await again.waitForExit() == 0)
    }

    @Test("meshchat send --to @bob never picks another key named bob: exit 67 naming the claimant, nothing stored")
    func sendRefusesClaimant() async throws {
        let directory = TemporaryDirectory()
        let bobID = try await Self.metAndStopped(directory)

        let impostor = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--keep-running",
                                        "--data-dir", directory.appending("impostor")], label: "impostor")
        let port = try await CommandLineTests.readyPort(impostor)
        let impostorID = try #require(JSONLine(impostor.output[0])?.string("id"))
        let send = try SendCommandTests.send(["--connect", "127.0.0.1:\(port)", "--to", "@bob", "--timeout", "2", "for bob only"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 67, "stderr: \(send.errors)")
        let result = try SendCommandTests.result(send)
        #expect(result.string("status") == "unknownPeer")
        let message = try #require(result.string("message"))
        #expect(message.contains(String(bobID.prefix(8))) && message.contains("\(impostorID.prefix(8)) is another key"), "\(message)")
        #expect(result.string("id") == nil)
        // Its id prefix reaches the newcomer.
        let byID = try SendCommandTests.send(["--connect", "127.0.0.1:\(port)", "--to", "@\(impostorID.prefix(8))", "--timeout", "20", "hello newcomer"],
                                             in: directory, label: "send by id")
        #expect(try await byID.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(byID.errors)")
        try await impostor.waitForEvent("\"event\":\"message\"", "hello newcomer")
        #expect(!impostor.output.contains { $0.contains("for bob only") })
        impostor.closeInput()
    }

    @Test("after a restart with only an impostor about, /msg @bob waits in the outbox for the real bob and reaches him when he is back")
    func queuedForHolderAfterRestart() async throws {
        let directory = TemporaryDirectory()
        let bobID = try await Self.metAndStopped(directory)
        let again = try ChatProcess.local("alice", directory)
        let port = try await CommandLineTests.readyPort(again)
        let (impostor, impostorID) = try await Self.impostor(directory, connectingTo: port)
        try await again.waitForEvent("\"event\":\"peer\"", impostorID, "\"state\":\"connected\"")
        again.send("/msg @bob only for the real bob")
        let queued = try #require(JSONLine(try await again.waitForEvent("\"event\":\"sent\"", "only for the real bob")))
        #expect((queued.object["to"] as? [[String: Any]])?.first?["id"] as? String == bobID)
        #expect(queued.string("status") == "queued")

        let back = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                    "--connect", "127.0.0.1:\(port)"], label: "bob back")
        try await back.waitForEvent("\"event\":\"message\"", "only for the real bob")
        #expect(!impostor.output.contains { $0.contains("only for the real bob") })
        for process in [impostor, back, again] { process.send("/quit") }
        for process in [impostor, back, again] { #expect(try await process.waitForExit() == 0) }
    }

    @Test("meshchat send learns names as the chat does: a key it met under bob holds the name in the chat's later runs")
    func sendFeedsNameBook() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        let bobPort = try await CommandLineTests.readyPort(bob)
        let bobID = try #require(JSONLine(bob.output[0])?.string("id"))
        let send = try SendCommandTests.send(["--connect", "127.0.0.1:\(bobPort)", "--to", "@bob", "--timeout", "20", "first contact"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(send.errors)")
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)

        let alice = try ChatProcess.local("alice", directory)
        let (impostor, impostorID) = try await Self.impostor(directory, connectingTo: try await CommandLineTests.readyPort(alice))
        let conflict = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"nameConflict\"")))
        #expect(conflict.object("peer")?["id"] as? String == impostorID)
        #expect(conflict.object("holder")?["id"] as? String == bobID)
        for process in [impostor, alice] { process.send("/quit") }
        for process in [impostor, alice] { #expect(try await process.waitForExit() == 0) }
    }

    /// alice and bob meet (each binds the other's name), then both stop.
    /// - Returns: bob's node id.
    static func metAndStopped(_ directory: TemporaryDirectory) async throws -> String {
        let (alice, bob, _) = try await TwoPeerTests.connectedPair(directory)
        let bobID = try #require(JSONLine(bob.output[0])?.string("id"))
        alice.send("/quit")
        bob.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        #expect(try await bob.waitForExit() == 0)
        return bobID
    }

    /// A node named bob with a key of its own (data directory `impostor`), linked to `port`.
    /// - Returns: the process, once ready, and its node id.
    static func impostor(_ directory: TemporaryDirectory, connectingTo port: Int) async throws -> (ChatProcess, String) {
        let impostor = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("impostor"),
                                        "--connect", "127.0.0.1:\(port)"], label: "impostor")
        let id = try #require(JSONLine(try await impostor.waitForEvent("\"event\":\"ready\""))?.string("id"))
        return (impostor, id)
    }
}
