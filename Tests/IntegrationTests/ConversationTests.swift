import Foundation
import MeshTestSupport
import Testing

/// A scripted conversation between three `meshchat --json` processes, each fed its whole script on
/// standard input at once (as a script would): lines to everyone, private lines and a room, with
/// alice and carol two hops apart (alice—bob—carol). Checked from the JSON events alone.
@Suite("a scripted three-peer conversation (--json)", .serialized)
struct ConversationTests {
    /// The texts of `chat`'s `message` events, in order, with their sender's name, privacy and room.
    static func messages(_ chat: ChatProcess) -> [(from: String, text: String, isPrivate: Bool, room: String?)] {
        chat.output.compactMap(JSONLine.init).filter { $0.string("event") == "message" }.compactMap { line in
            guard let from = (line.object["from"] as? [String: Any])?["name"] as? String, let text = line.string("text") else { return nil }
            return (from, text, line.object["private"] as? Bool == true, line.string("room"))
        }
    }

    @Test("every line arrives once, in its sender's order, where it was addressed: to everyone, to one peer, to a room's members only")
    func threePeers() async throws {
        let directory = TemporaryDirectory()
        let line = try await ChatLine.start(directory)
        let (alice, bob, carol) = (line.alice, line.bob, line.carol)

        // Lines to everyone and private lines, each process's whole script at once.
        alice.send(lines: ["a1 hello everyone", "a2 how is everyone?", "/msg @carol a3 just for carol"])
        bob.send(lines: ["b1 hi all, bob here", "/msg @alice b2 psst alice", "b3 bob again"])
        carol.send(lines: ["c1 carol says hi", "/msg @alice c2 hello alice"])
        try await alice.waitForEvent("\"event\":\"message\"", "c2 hello alice")
        try await alice.waitForEvent("\"event\":\"message\"", "b3 bob again")
        try await carol.waitForEvent("\"event\":\"message\"", "a3 just for carol")
        try await bob.waitForEvent("\"event\":\"message\"", "c1 carol says hi")
        // Then a room of two: its lines reach its members only; bob's line to everyone reaches both.
        for chat in [alice, carol] { chat.send("/join #plans") }
        for chat in [alice, carol] { try await chat.waitForEvent("\"event\":\"joined\"", "#plans") }
        alice.send(lines: ["a4 room line from alice", "a5 last line from alice"])
        carol.send(lines: ["c3 room line from carol", "c4 carol out"])
        bob.send("b4 bob to everyone")
        try await alice.waitForEvent("\"event\":\"message\"", "c4 carol out")
        try await carol.waitForEvent("\"event\":\"message\"", "a5 last line from alice")
        for chat in [alice, carol] { try await chat.waitForEvent("\"event\":\"message\"", "b4 bob to everyone") }
        // bob relays the room lines without reading them; his own line after them shows they have passed.
        bob.send("b5 bob last")
        for chat in [alice, carol] { try await chat.waitForEvent("\"event\":\"message\"", "b5 bob last") }

        func from(_ sender: String, in chat: ChatProcess) -> [String] {
            Self.messages(chat).filter { $0.from == sender }.map(\.text)
        }
        // In each sender's order, exactly once, each where it was addressed.
        #expect(from("bob", in: alice) == ["b1 hi all, bob here", "b2 psst alice", "b3 bob again", "b4 bob to everyone", "b5 bob last"])
        #expect(from("carol", in: alice) == ["c1 carol says hi", "c2 hello alice", "c3 room line from carol", "c4 carol out"])
        #expect(from("alice", in: bob) == ["a1 hello everyone", "a2 how is everyone?"])
        #expect(from("carol", in: bob) == ["c1 carol says hi"])
        #expect(from("alice", in: carol) == ["a1 hello everyone", "a2 how is everyone?", "a3 just for carol", "a4 room line from alice", "a5 last line from alice"])
        #expect(from("bob", in: carol) == ["b1 hi all, bob here", "b3 bob again", "b4 bob to everyone", "b5 bob last"])
        // Private and room lines are marked; hop counts tell the relay.
        let atCarol = Self.messages(carol)
        #expect(atCarol.first { $0.text == "a3 just for carol" }?.isPrivate == true)
        #expect(atCarol.first { $0.text == "a4 room line from alice" }?.room == "#plans")
        #expect(atCarol.first { $0.text == "a5 last line from alice" }?.room == "#plans")
        #expect(atCarol.first { $0.text == "b4 bob to everyone" }?.room == nil)
        #expect(atCarol.first { $0.text == "a1 hello everyone" }?.room == nil)
        let hops = carol.output.compactMap(JSONLine.init).first { $0.string("text") == "a1 hello everyone" }?.int("hops")
        #expect(hops == 2)
        // Private lines are delivered (receipts come back across the relay).
        try await alice.waitForEvent("\"event\":\"receipt\"", "\"status\":\"delivered\"", "\"name\":\"carol\"")
        try await carol.waitForEvent("\"event\":\"receipt\"", "\"status\":\"delivered\"", "\"name\":\"alice\"")
        for chat in [alice, bob, carol] { chat.closeInput() }
        for chat in [alice, bob, carol] { #expect(try await chat.waitForExit() == 0) }
    }
}
