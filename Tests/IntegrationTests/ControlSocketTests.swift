import Foundation
import MeshTestSupport
import Testing

/// Scripts beside the chat (README "Scripts beside the chat"): a running chat serves
/// `DATA-DIR/control`, and `meshchat send` on the same data directory sends through it, from the
/// chat's own node. Real processes; every node runs with `--no-discovery`.
@Suite("control socket", .serialized)
struct ControlSocketTests {
    /// `meshchat send --data-dir DIR/alice --json` plus `arguments` (no --name: the chat's node sends).
    static func send(_ arguments: [String], in directory: TemporaryDirectory) throws -> ChatProcess {
        try ChatProcess(["send", "--no-discovery", "--data-dir", directory.appending("alice"), "--json"] + arguments, label: "send")
    }

    @Test("meshchat send beside a running chat: the line goes out from the chat's node, shown in the chat")
    func sendBesideChat() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        defer { bob.closeInput() }
        let port = try await CommandLineTests.readyPort(bob)
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        defer { alice.closeInput() }
        let ready = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"ready\"")))
        let aliceID = try #require(ready.string("id"))
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"")

        let socket = directory.appending("alice/control")
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let send = try Self.send(["--to", "@bob", "--timeout", "20", "hello bob, from a script beside the chat"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(send.errors)")
        let result = try SendCommandTests.result(send)
        #expect(["sent", "queued"].contains(result.string("status")), "\(result)")
        let id = try #require(result.string("id"))
        let message = try await bob.waitForEvent("\"event\":\"message\"", "hello bob, from a script beside the chat")
        let line = try #require(JSONLine(message))
        #expect(line.string("id") == id)
        #expect(message.contains("\"private\":true"))
        #expect(line.object("from")?["id"] as? String == aliceID, "bob got it from alice's node: \(message)")
        // The chat shows the line as its own.
        try await alice.waitForEvent("\"event\":\"sent\"", "hello bob, from a script beside the chat")

        // A name nobody has: exit 67, nothing stored.
        let unknown = try Self.send(["--to", "@nobody", "anyone there?"], in: directory)
        #expect(try await unknown.waitForExit(timeout: .seconds(30)) == 67, "stderr: \(unknown.errors)")
        let refused = try SendCommandTests.result(unknown)
        #expect(refused.string("status") == "unknownPeer")
        #expect(refused.string("message")?.contains("the chat running with") == true, "\(refused)")
        #expect(refused.string("id") == nil)

        // The protocol itself: a malformed request and an oversized line are refused with a reason.
        let client = try UnixLineClient(socket)
        let bad = try #require(JSONLine(client.ask(#"{"op":"send","text":"x","to":"@bob","sudo":true}"#)))
        #expect(bad.string("code") == "badRequest")
        #expect(bad.string("error")?.contains("unknown member \"sudo\"") == true)
        client.write(Array(repeating: UInt8(ascii: "a"), count: 300_000) + [UInt8(ascii: "\n")])
        let tooLong = try #require(JSONLine(client.readToEnd().trimmingCharacters(in: .newlines)))
        #expect(tooLong.string("code") == "tooLong")
        // The chat still serves.
        let again = try #require(JSONLine(try UnixLineClient(socket).ask(#"{"op":"send","to":"@bob","text":"still here"}"#)))
        #expect(again.object["ok"] as? Bool == true, "\(again)")
        try await bob.waitForEvent("\"event\":\"message\"", "still here")

        // A joined room by name; one not joined is refused.
        let notJoined = try #require(JSONLine(try UnixLineClient(socket).ask(##"{"op":"send","to":"#dev","text":"nobody here"}"##)))
        #expect(notJoined.string("code") == "unknownRoom", "\(notJoined)")
        alice.send("/join #dev")
        try await alice.waitForEvent("\"event\":\"joined\"")
        bob.send("/join #dev")
        try await bob.waitForEvent("\"event\":\"joined\"")
        let roomReply = try #require(JSONLine(try UnixLineClient(socket).ask(##"{"op":"send","to":"#dev","text":"to the room"}"##)))
        #expect(roomReply.string("room") == "#dev", "\(roomReply)")
        let roomLine = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"message\"", "to the room")))
        #expect(roomLine.string("room") == "#dev")
        #expect(roomLine.object("from")?["id"] as? String == aliceID)
        // Without "to" a line goes where the chat's typed lines go: the room looked at, then,
        // after /query @bob, to bob only (the /whois answer says the /query before it is done).
        let typed = try #require(JSONLine(try UnixLineClient(socket).ask(#"{"op":"send","text":"where I look"}"#)))
        #expect(typed.string("room") == "#dev", "\(typed)")
        alice.send("/query @bob")
        alice.send("/whois @bob")
        try await alice.waitForEvent("\"event\":\"whois\"")
        let queried = try #require(JSONLine(try UnixLineClient(socket).ask(#"{"op":"send","text":"to my query"}"#)))
        #expect(queried.object["private"] as? Bool == true && queried.object("to")?["name"] as? String == "bob", "\(queried)")
        let privateLine = try await bob.waitForEvent("\"event\":\"message\"", "to my query")
        #expect(privateLine.contains("\"private\":true"), "\(privateLine)")

        // The chat removes its socket when it ends.
        alice.closeInput()
        #expect(try await alice.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test("in a terminal (tmux): a line from meshchat send shows in the chat above the half-typed input, and bob gets it from alice")
    func sendBesideTerminalChat() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        defer { bob.closeInput() }
        try alice.type("half typed")
        try await TerminalTests.waitForInput(alice, "> half typed")
        let send = try Self.send(["--to", "@bob", "--timeout", "20", "sent by a script"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(send.errors)")
        let message = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"message\"", "sent by a script")))
        #expect(message.object("from")?["name"] as? String == "alice")
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.contains("sent by a script") } }
        #expect(TerminalTests.inputLine(rows)?.row == "> half typed", "the half-typed line is intact: \(rows)")
        try alice.press("C-u")
        try alice.type("/quit")
        try alice.press("Enter")
    }

    @Test("a stale socket of a crashed chat is replaced by the next chat")
    func staleSocket() async throws {
        let directory = TemporaryDirectory()
        let first = try ChatProcess.local("alice", directory)
        _ = try await CommandLineTests.readyPort(first)
        let socket = directory.appending("alice/control")
        #expect(FileManager.default.fileExists(atPath: socket))
        first.kill9()
        _ = try await first.waitForExit()
        #expect(FileManager.default.fileExists(atPath: socket), "kill -9 leaves the socket file behind")
        let second = try ChatProcess.local("alice", directory)
        defer { second.closeInput() }
        _ = try await CommandLineTests.readyPort(second)
        let reply = try #require(JSONLine(try UnixLineClient(socket).ask(#"{"op":"send","text":"after a crash"}"#)))
        #expect(reply.object["ok"] as? Bool == true, "\(reply)")
        #expect(!second.output.contains { $0.contains("scripts cannot send") })
    }
}
