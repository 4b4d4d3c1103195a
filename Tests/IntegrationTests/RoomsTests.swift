import Foundation
import MeshTestSupport
import Testing

/// Rooms across the mesh (PROTOCOL.md §15) with real `meshchat` processes: a room line reaches the
/// room's members across hops and nobody else, a password keeps out those who do not know it,
/// and rooms and their history survive a restart.
@Suite("rooms across the mesh", .serialized)
struct RoomsTests {
    @Test("a line to #lunch (password) reaches carol two hops away; bob, who relays it and joined #lunch without the password, never sees it; carol's rooms and history survive a restart")
    func passwordRoom() async throws {
        let directory = TemporaryDirectory()
        let line = try await ChatLine.start(directory)
        let (alice, bob) = (line.alice, line.bob)
        var carol = line.carol
        let port = line.bobPort

        alice.send("/join #Lunch secret pass")
        let joined = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"joined\"")))
        #expect(joined.string("room") == "#lunch")
        #expect(joined.object["password"] as? Bool == true)
        carol.send("/join #lunch secret pass")
        try await carol.waitForEvent("\"event\":\"joined\"")
        bob.send("/join #lunch")
        try await bob.waitForEvent("\"event\":\"joined\"")

        alice.send("pizza at noon?")
        let sent = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "pizza at noon?")))
        #expect(sent.string("room") == "#lunch")
        let got = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"message\"", "pizza at noon?")))
        #expect(got.string("room") == "#lunch")
        #expect(got.int("hops") == 2)
        #expect((got.object("from")?["name"] as? String) == "alice")

        // A line to everyone still reaches everyone; bob's #lunch (no password) is another room.
        bob.send("anyone in #lunch?")
        try await bob.waitForEvent("\"event\":\"sent\"", "anyone in #lunch?")
        bob.send("/leave")
        try await bob.waitForEvent("\"event\":\"left\"")
        bob.send("hello everyone")
        try await carol.waitForEvent("\"event\":\"message\"", "hello everyone")
        try await alice.waitForEvent("\"event\":\"message\"", "hello everyone")
        #expect(!bob.output.contains { $0.contains("pizza at noon?") && $0.contains("\"event\":\"message\"") })
        #expect(!carol.output.contains { $0.contains("anyone in #lunch?") })
        #expect(!alice.output.contains { $0.contains("anyone in #lunch?") })
        let everyone = try #require(JSONLine(carol.output.first { $0.contains("hello everyone") } ?? ""))
        #expect(everyone.string("room") == nil)

        carol.closeInput()
        _ = try await carol.waitForExit()
        carol = try ChatProcess.local("carol", directory, ["--connect", "127.0.0.1:\(port)"])
        try await carol.waitForEvent("\"event\":\"ready\"")
        carol.send("/rooms")
        let rooms = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"rooms\"")))
        let listed = try #require(rooms.object["rooms"] as? [[String: Any]])
        #expect(listed.map { $0["room"] as? String } == ["#lunch"])
        #expect(listed.map { $0["password"] as? Bool } == [true])
        #expect((rooms.object["active"] as? [String: Any])?["room"] as? String == "#lunch")
        #expect((rooms.object["active"] as? [String: Any])?["password"] as? Bool == true)
        carol.send("/history 10")
        let history = try await carol.waitForEvent("\"event\":\"history\"")
        #expect(history.contains("pizza at noon?") && history.contains("\"room\":\"#lunch\",\"password\":true"))
        // Still in the room after the restart: a line typed now goes to #lunch and alice reads it.
        try await carol.waitForEvent("\"event\":\"reachable\"", "\"name\":\"alice\"")
        carol.send("yes, noon")
        let reply = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"message\"", "yes, noon")))
        #expect(reply.string("room") == "#lunch")
        #expect(reply.object["password"] as? Bool == true)
        for chat in [alice, bob, carol] { chat.closeInput() }
        for chat in [alice, bob, carol] { _ = try await chat.waitForExit() }
    }

    @Test("/join #dev s3cret, /join #lunch, /join #dev goes back to the password #dev with its key: no line typed after it reaches bob, who holds only the public #dev key; in both rooms of one name /join asks which")
    func passwordRoomNeverLeaks() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory)
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"")
        bob.send("/join #dev")
        try await bob.waitForEvent("\"event\":\"joined\"", "\"password\":false")

        alice.send("/join #dev s3cret")
        try await alice.waitForEvent("\"event\":\"joined\"", "\"room\":\"#dev\"", "\"password\":true")
        alice.send("/join #lunch")
        try await alice.waitForEvent("\"event\":\"joined\"", "\"room\":\"#lunch\"")
        let mark = alice.output.count
        alice.send("/join #dev")
        let back = try #require(JSONLine(try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"joined\"") }))
        #expect(back.string("room") == "#dev")
        #expect(back.object["password"] as? Bool == true, "went to the public #dev: \(back.object)")
        alice.send("for the team only")
        let sent = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "for the team only")))
        #expect(sent.string("room") == "#dev")
        #expect(sent.object["password"] as? Bool == true)

        // A public line after it reaches bob: had the secret line gone out with the public key,
        // it would have arrived first (one link, in order).
        alice.send("/join #dev --public")
        try await alice.waitForEvent("\"event\":\"joined\"", "\"room\":\"#dev\"", "\"password\":false")
        alice.send("hello public dev")
        let plain = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"sent\"", "hello public dev")))
        #expect(plain.object["password"] as? Bool == false)
        try await bob.waitForEvent("\"event\":\"message\"", "hello public dev")
        #expect(!bob.output.contains { $0.contains("for the team only") })

        // In both rooms called #dev: /join #dev asks which, and lines still go where they went.
        let before = alice.output.count
        alice.send("/join #dev")
        let error = try #require(JSONLine(try await alice.waitForLine(from: before) { $0.contains("\"event\":\"error\"") }))
        #expect(error.string("message")?.contains("--password") == true)
        alice.send("/join #dev --password")
        try await alice.waitForEvent("\"event\":\"joined\"", "\"password\":true")
        alice.send("/rooms")
        let rooms = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"rooms\"")))
        let listed = try #require(rooms.object["rooms"] as? [[String: Any]])
        #expect(listed.count == 3)
        #expect(Set(listed.filter { $0["room"] as? String == "#dev" }.compactMap { $0["password"] as? Bool }) == [false, true])
        #expect((rooms.object["active"] as? [String: Any])?["password"] as? Bool == true)
        alice.send("/leave #dev")
        try await alice.waitForEvent("\"event\":\"error\"", "two rooms called #dev")
        for chat in [alice, bob] { chat.closeInput() }
        for chat in [alice, bob] { _ = try await chat.waitForExit() }
    }

    @Test("bad room commands say what is wrong and change nothing")
    func badCommands() async throws {
        let directory = TemporaryDirectory()
        let alice = try ChatProcess.local("alice", directory)
        try await alice.waitForEvent("\"event\":\"ready\"")
        alice.send("/join lunch")
        try await alice.waitForEvent("\"event\":\"error\"", "starting with #")
        alice.send("/join #caf\u{e9}")
        try await alice.waitForEvent("\"event\":\"error\"", "only a-z")
        alice.send("/leave")
        try await alice.waitForEvent("\"event\":\"error\"", "in no room")
        alice.send("/leave #nowhere")
        try await alice.waitForEvent("\"event\":\"error\"", "not in #nowhere")
        alice.send("/rooms")
        let rooms = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"rooms\"")))
        #expect((rooms.object["rooms"] as? [Any])?.isEmpty == true)
        alice.closeInput()
        _ = try await alice.waitForExit()
    }
}

/// `/reply`, `/mesh`, `/block` and `/unblock` with real processes.
@Suite("reply, mesh and block", .serialized)
struct ReplyMeshBlockTests {
    @Test("/reply answers the last private sender; /mesh draws the tree with every node; /block drops a peer's lines (remembered across a restart) until /unblock")
    func replyMeshBlock() async throws {
        let directory = TemporaryDirectory()
        let line = try await ChatLine.start(directory)
        let (alice, bob) = (line.alice, line.bob)
        var carol = line.carol
        let port = line.bobPort

        carol.send("/reply nobody yet")
        try await carol.waitForEvent("\"event\":\"error\"", "/reply")
        alice.send("/msg @carol are you there?")
        try await carol.waitForEvent("\"event\":\"message\"", "are you there?")
        carol.send("/reply yes")
        let reply = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"message\"", "\"text\":\"yes\"")))
        #expect(reply.object["private"] as? Bool == true)

        alice.send("/ping @carol")
        let pong = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"pong\"")))
        #expect(pong.int("hops") == 2)
        let rtt = try #require(pong.object["rtt_ms"] as? Double)
        #expect(rtt > 0 && rtt < 5000)
        alice.send("/ping @nobody")
        try await alice.waitForEvent("\"event\":\"error\"", "/ping")

        alice.send("/mesh")
        let mesh = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"mesh\"")))
        let nodes = try #require(mesh.object["nodes"] as? [[String: Any]])
        #expect(nodes.compactMap { $0["name"] as? String } == ["alice", "bob", "carol"])
        #expect(nodes.compactMap { $0["hops"] as? Int } == [0, 1, 2])
        let bobLinks = (nodes[1]["links"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(bobLinks ?? []) == ["alice", "carol"])

        carol.send("/block @alice")
        let blocked = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"blocked\"")))
        #expect((blocked.object["peers"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["alice"])
        alice.send("/msg @carol blocked line")
        // Acknowledged (so alice's outbox stops) but never shown to carol.
        try await alice.waitForEvent("\"event\":\"receipt\"", "\"status\":\"delivered\"")
        alice.send("to everyone while blocked")
        // bob forwards alice's line to carol before he shows it, and before his own line on the same link.
        try await bob.waitForEvent("\"event\":\"message\"", "to everyone while blocked")
        bob.send("bob to everyone")
        try await carol.waitForEvent("\"event\":\"message\"", "bob to everyone")
        #expect(!carol.output.contains { $0.contains("blocked line") || $0.contains("to everyone while blocked") })

        carol.closeInput()
        _ = try await carol.waitForExit()
        carol = try ChatProcess.local("carol", directory, ["--connect", "127.0.0.1:\(port)"])
        try await carol.waitForEvent("\"event\":\"reachable\"", "\"name\":\"alice\"")
        carol.send("/block")
        try await carol.waitForEvent("\"event\":\"blocked\"", "\"name\":\"alice\"")
        carol.send("/unblock @alice")
        let none = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"blocked\"", "\"peers\":[]")))
        #expect((none.object["peers"] as? [Any])?.isEmpty == true)
        alice.send("welcome back")
        try await carol.waitForEvent("\"event\":\"message\"", "welcome back")
        for chat in [alice, bob, carol] { chat.closeInput() }
        for chat in [alice, bob, carol] { _ = try await chat.waitForExit() }
    }
}
