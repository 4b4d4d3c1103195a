import Foundation
import MeshTestSupport
import Testing

/// Conversations and attention in a real terminal (tmux): alice in tmux, bob a `--json` process
/// connected to her. A private line opens its own buffer with a bell (the BEL byte counted in
/// the pane's raw output, captured with `pipe-pane`) and does not scroll the mesh; `/switch`,
/// Alt-N and `/query` switch and route typed lines; `/away` reaches the other side's `/whois`
/// and `/peers`; after a restart the prompt names the conversation again.
@Suite("conversations and attention in a terminal (tmux)", .serialized)
struct TerminalConversationTests {
    /// The BEL bytes the pane has written so far.
    static func bells(_ file: String) -> Int {
        ((try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()).reduce(0) { $0 + ($1 == 0x07 ? 1 : 0) }
    }

    /// Waits (bounded polling: a file has no "written" event to await) until more than `count` bells rang.
    static func waitForBell(_ file: String, after count: Int, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while bells(file) <= count {
            guard ContinuousClock.now < deadline else { throw TmuxSession.Failure(description: "no bell within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for a row that is `line` after a date and a time (a stored line, as `/history` shows it).
    @discardableResult
    static func waitForDated(_ session: TmuxSession, _ line: String) async throws -> [String] {
        let pattern = #"^\d{4}-\d\d-\d\d \d\d:\d\d "# + NSRegularExpression.escapedPattern(for: line) + "$"
        return try await session.waitForScreen { rows in rows.contains { $0.range(of: pattern, options: .regularExpression) != nil } }
    }

    /// Types a line and Enter into alice's terminal.
    static func enter(_ alice: TmuxSession, _ line: String) throws {
        try alice.type(line)
        try alice.press("Enter")
    }

    @Test("a private line waits in its own buffer with a bell; /switch, Alt-N and /query switch and send privately; /away shows in /whois")
    func conversations() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        let raw = directory.appending("alice-raw")
        _ = try alice.run(["pipe-pane", "-o", "-t", alice.name, "cat >> \(raw)"])

        // A line to everyone that names alice: shown in the mesh, highlighted, with a bell.
        var rang = Self.bells(raw)
        bob.send("are you there, Alice?")
        try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("<bob> are you there, Alice?") } }
        try await Self.waitForBell(raw, after: rang)

        // A private line: its own buffer (the status line counts it), not the mesh, and a bell.
        rang = Self.bells(raw)
        bob.send("/msg @alice psst, just you")
        let counted = try await alice.waitForScreen { rows in rows.contains { $0.contains("[1:mesh] 2:@bob(1!)") } }
        #expect(!counted.contains { $0.contains("psst, just you") }, "a line of another buffer does not scroll the mesh")
        #expect(TerminalTests.inputLabel(counted) == "[mesh]")
        try await Self.waitForBell(raw, after: rang)
        #expect(try alice.value("#{window_bell_flag}") == "1", "tmux saw the bell too")

        // /switch shows that buffer's own lines; the prompt names the peer; typed lines go to it privately.
        try Self.enter(alice, "/switch @bob")
        let switched = try await alice.waitForScreen { rows in TerminalTests.inputLabel(rows) == "[@bob]" && rows.contains { $0.contains("[bob → you] psst, just you") } }
        #expect(!switched.contains { $0.contains("are you there") }, "the mesh's lines are not in bob's buffer")
        #expect(switched.contains { $0.contains("1:mesh [2:@bob]") })
        try Self.enter(alice, "only for bob")
        let line = try await bob.waitForEvent("\"event\":\"message\"", "only for bob")
        #expect(line.contains("\"private\":true"))

        // Back to the mesh with Alt-1; a mesh line from bob there mentions nobody in JSON...
        try alice.press("M-1")
        try await alice.waitForScreen { rows in TerminalTests.inputLabel(rows) == "[mesh]" && rows.contains { $0.contains("are you there, Alice?") } }
        try Self.enter(alice, "hey bob, lunch?")
        let mention = try await bob.waitForEvent("\"event\":\"message\"", "hey bob, lunch?")
        #expect(mention.contains("\"mention\":true"), "bob's --json marks a line that names him")
        #expect(mention.contains("\"private\":false"))

        // ...and /query opens the private conversation again (the same buffer, number 2).
        try Self.enter(alice, "/query @bob")
        try await alice.waitForScreen { rows in TerminalTests.inputLabel(rows) == "[@bob]" && rows.contains { $0.contains("only for bob") } }
        try Self.enter(alice, "sent by query")
        let queried = try await bob.waitForEvent("\"event\":\"message\"", "sent by query")
        #expect(queried.contains("\"private\":true"), "a typed line in a /query goes to that peer only")
        try Self.enter(alice, "/window 1")
        try await alice.waitForScreen { TerminalTests.inputLabel($0) == "[mesh]" }

        // /away travels in bob's advert: alice's /whois and /peers show it.
        bob.send("/away gone fishing")
        try await bob.waitForEvent("\"event\":\"away\"", "gone fishing")
        let deadline = ContinuousClock.now + .seconds(20)
        var whois: [String] = []
        while !whois.contains(where: { $0.contains("away: gone fishing") }) {
            guard ContinuousClock.now < deadline else { Issue.record("no away text in /whois: \(whois)"); break }
            try alice.press("C-l")
            try Self.enter(alice, "/whois @bob")
            whois = try await alice.waitForScreen { rows in rows.contains { $0.contains("  away: ") } }
        }
        #expect(whois.contains { $0.contains("  id: ") })
        #expect(whois.contains { $0.contains("  key: ") && $0.contains("not verified") })
        #expect(whois.contains { $0.contains("reachable in 1 hop: you → bob") })
        #expect(whois.contains { $0.contains("  address: 127.0.0.1:") })
        try Self.enter(alice, "/peers")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("* bob ") && $0.contains("(away: gone fishing)") } }
        try Self.enter(alice, "/away " + String(repeating: "x", count: 300))
        try await alice.waitForScreen { rows in rows.contains { $0.contains("! /away: the away text is 300 bytes, at most 256") } }

        // After a restart the conversation looked at comes back, and the prompt says so.
        try Self.enter(alice, "/switch @bob")
        try await alice.waitForScreen { TerminalTests.inputLabel($0) == "[@bob]" }
        try Self.enter(alice, "/quit")
        try await TerminalHistoryTests.waitForExit(alice)
        let again = try await TerminalHistoryTests.alice(directory)
        let restarted = try await again.waitForScreen { rows in TerminalTests.inputLabel(rows) == "[@bob]" }
        #expect(restarted.contains { $0.contains("your lines go to @bob, as before the restart") })
        // Looked at again with nothing new, a buffer shows its stored lines, dated (not live).
        try Self.enter(again, "/switch @bob")
        try await Self.waitForDated(again, "[bob → you] psst, just you")
        bob.closeInput()
    }

    @Test("/history and /search show each line's date, room or private marker and sender")
    func historyShowsDates() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        bob.send("the pizza place on the corner")
        try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("<bob> the pizza place on the corner") } }
        try Self.enter(alice, "/search PIZZA")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("1 line with \"PIZZA\"") } }
        // The live line has only its time; the found one its date and time.
        try await Self.waitForDated(alice, "<bob> the pizza place on the corner")
        try Self.enter(alice, "/search nothing like it")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("no stored line contains \"nothing like it\"") } }
        try alice.press("C-l")
        try Self.enter(alice, "/history 1")
        try await Self.waitForDated(alice, "<bob> the pizza place on the corner")
        bob.closeInput()
    }

    @Test("without a terminal: /query says where lines go and sends them privately; /away and /whois in text and --json")
    func plainLines() async throws {
        let directory = TemporaryDirectory()
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice")], label: "alice")
        let port = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let bob = try ChatProcess(["--name", "bob", "--no-discovery", "--data-dir", directory.appending("bob"), "--connect", "127.0.0.1:\(port)"],
                                  label: "bob")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        bob.send("/query @alice")
        _ = try await bob.waitForLine { $0 == "* your lines go to alice only, end-to-end encrypted" }
        bob.send("typed in a query")
        let line = try await alice.waitForEvent("\"event\":\"message\"", "typed in a query")
        #expect(line.contains("\"private\":true"))

        alice.send("/away back at 3")
        try await alice.waitForEvent("\"event\":\"away\"", "\"text\":\"back at 3\"")
        let deadline = ContinuousClock.now + .seconds(20)
        var from = bob.output.count
        while true {
            bob.send("/whois @alice")
            let away = try await bob.waitForLine(from: from) { $0.hasPrefix("  away: ") }
            if away == "  away: back at 3" { break }
            from = bob.output.count
            guard ContinuousClock.now < deadline else { Issue.record("bob's /whois never showed the away text: \(away)"); break }
        }
        alice.send("/whois @bob")
        let whois = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"whois\"")))
        #expect(whois.int("hops") == 1)
        #expect((whois.string("fingerprint") ?? "").count == 30)
        #expect(whois.object["away"] is NSNull)
        #expect((whois.string("address") ?? "").hasPrefix("127.0.0.1:"))
        alice.send("/whois @nobody")
        try await alice.waitForEvent("\"event\":\"error\"", "/whois: no peer is called")
        alice.closeInput()
        bob.closeInput()
    }
}
