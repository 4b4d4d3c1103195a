import Foundation
import MeshTestSupport
import Testing

/// `meshchat` in a real terminal: alice runs inside a detached tmux session of 100 × 30 and is
/// driven with `send-keys` and read with `capture-pane`, bob is a `--json` process connected
/// to her. Every wait is for what the screen or bob's events show, against a deadline.
///
/// tmux is required (scripts/setup installs it): without it these tests fail and say so.
@Suite("meshchat in a terminal (tmux)", .serialized)
struct TerminalTests {
    static let width = 100
    static let height = 30

    /// alice in tmux and bob connected to her; returns once both see the link.
    static func aliceAndBob(_ directory: TemporaryDirectory, environment: [String: String] = [:],
                            unset: [String] = ["NO_COLOR"], shellSuffix: String = "", alice extra: [String] = [],
                            bob bobExtra: [String] = []) async throws -> (TmuxSession, ChatProcess) {
        let meshchat = ChatProcess.binDirectory.appendingPathComponent("meshchat").path
        guard FileManager.default.isExecutableFile(atPath: meshchat) else {
            throw TmuxSession.Failure(description: "\(meshchat) is not built; run scripts/test (or swift build) first")
        }
        let alice = try TmuxSession([meshchat, "--no-discovery", "--name", "alice", "--data-dir", directory.appending("alice"), "--port", "0"] + extra,
                                    width: width, height: height, environment: environment, unset: unset, directory: directory,
                                    shellSuffix: shellSuffix)
        let ready = try await alice.waitForScreen { rows in rows.contains { $0.contains("listening on port") } }
        let port = try #require(ready.lazy.compactMap(Self.port).first)
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                   "--connect", "127.0.0.1:\(port)"] + bobExtra, label: "bob")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("* bob (") && $0.contains("connected") } }
        return (alice, bob)
    }

    /// The port of alice's "listening on port N" line.
    static func port(_ row: String) -> Int? {
        guard let range = row.range(of: "listening on port ") else { return nil }
        return Int(row[range.upperBound...].prefix { $0.isNumber })
    }

    /// The input line (the last row that is not blank) and its index.
    /// The row is given without the prompt's label (`[mesh] `, `[#dev 🔒] `: where typed lines
    /// go), which ``inputLabel(_:)`` reads.
    static func inputLine(_ rows: [String]) -> (row: String, index: Int)? {
        let trimmed = TmuxSession.trimmed(rows)
        guard let last = trimmed.last else { return nil }
        let row = last.replacingOccurrences(of: #"\s+$"#, with: "", options: .regularExpression)
        return (row.replacingOccurrences(of: #"^\[[^\]]*\] "#, with: "", options: .regularExpression), trimmed.count - 1)
    }

    /// The label of the input line's prompt (`[mesh]`, `[#dev 🔒]`), or `nil` without one.
    static func inputLabel(_ rows: [String]) -> String? {
        guard let last = TmuxSession.trimmed(rows).last, let range = last.range(of: #"^\[[^\]]*\]"#, options: .regularExpression) else { return nil }
        return String(last[range])
    }

    /// The prompt's label while lines go to everyone, and its width.
    static let meshLabel = "[mesh] "

    /// Waits until the input line reads exactly `text`.
    @discardableResult
    static func waitForInput(_ alice: TmuxSession, _ text: String) async throws -> [String] {
        try await alice.waitForScreen { inputLine($0)?.row == text }
    }

    /// Waits for bob's next `message` event (after the `from`th line of his output) and returns its text and privacy.
    static func nextMessage(_ bob: ChatProcess, from: Int) async throws -> (text: String, isPrivate: Bool, index: Int) {
        let line = try await bob.waitForLine(from: from) { $0.contains("\"event\":\"message\"") }
        let json = try #require(JSONLine(line))
        let index = bob.output.lastIndex(of: line) ?? from
        return (try #require(json.string("text")), json.object["private"] as? Bool == true, index + 1)
    }

    @Test("a message arriving while a line is half typed appears above it and leaves the half-typed text intact")
    func halfTypedLineSurvives() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBob(directory)
        try alice.type("half typed wo")
        try await Self.waitForInput(alice, "> half typed wo")

        bob.send("hello from bob")
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("<bob> hello from bob") } }
        let input = try #require(Self.inputLine(rows))
        #expect(input.row == "> half typed wo")
        #expect(Self.inputLabel(rows) == "[mesh]", "the prompt says where typed lines go")
        let bobRow = try #require(rows.firstIndex { $0.hasSuffix("<bob> hello from bob") })
        #expect(bobRow < input.index)
        #expect(rows[bobRow].range(of: #"^\d\d:\d\d <bob> hello from bob$"#, options: .regularExpression) != nil, "\(rows[bobRow])")
        let cursor = try alice.cursor()
        #expect(cursor.y == input.index)
        #expect(cursor.x == Self.meshLabel.count + "> half typed wo".count)

        // A burst of lines: all above, in order, the input line still intact and last.
        bob.send(lines: (1...5).map { "burst \($0)" })
        let burst = try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("<bob> burst 5") } }
        let order = (1...5).compactMap { n in burst.firstIndex { $0.hasSuffix("<bob> burst \(n)") } }
        #expect(order.count == 5 && order == order.sorted())
        #expect(Self.inputLine(burst)?.row == "> half typed wo")
        #expect((order.last ?? 0) < (Self.inputLine(burst)?.index ?? 0))

        try alice.type("rds")
        try alice.press("Enter")
        let received = try await Self.nextMessage(bob, from: 0)
        #expect(received.text == "half typed words")
        #expect(!received.isPrivate)
        let echoed = try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("<alice> half typed words ✓") } }
        #expect(Self.inputLine(echoed)?.row == ">")
    }

    @Test("line editing: Ctrl-A inserts at the start, Ctrl-W deletes a word, Up recalls history, Tab completes a name")
    func lineEditing() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBob(directory)
        var next = 0

        try alice.type("world")
        try alice.press("C-a")
        try alice.type("hello ")
        try await Self.waitForInput(alice, "> hello world")
        try alice.press("Enter")
        var received = try await Self.nextMessage(bob, from: next)
        #expect(received.text == "hello world")
        next = received.index

        try alice.type("one two three")
        try alice.press("C-w")
        try await Self.waitForInput(alice, "> one two")
        try alice.press("Enter")
        received = try await Self.nextMessage(bob, from: next)
        #expect(received.text == "one two ")
        next = received.index

        try alice.press("Up", "Up")
        try await Self.waitForInput(alice, "> hello world")
        try alice.press("BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
        try alice.type("there")
        try alice.press("Enter")
        received = try await Self.nextMessage(bob, from: next)
        #expect(received.text == "hello there")
        next = received.index

        try alice.type("/ms")
        try alice.press("Tab")
        try alice.type("@b")
        try alice.press("Tab")
        try await Self.waitForInput(alice, "> /msg @bob")
        try alice.type("psst")
        try alice.press("Enter")
        received = try await Self.nextMessage(bob, from: next)
        #expect(received.text == "psst")
        #expect(received.isPrivate)
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("✓✓ delivered to bob: \"psst\"") } }
        #expect(rows.contains { $0.hasSuffix("[you → bob] psst ✓") })
    }

    /// The row of bob's "hello" line with its escape sequences.
    static func bobLine(_ alice: TmuxSession, _ bob: ChatProcess) async throws -> (row: String, screen: [String]) {
        bob.send("colourful hello")
        let rows = try await alice.waitForScreen(escapes: true) { rows in rows.contains { $0.contains("colourful hello") } }
        return (try #require(rows.first { $0.contains("colourful hello") }), rows)
    }

    @Test("a peer's name is coloured on a terminal; with NO_COLOR=1 the screen has no escape sequence at all")
    func colour() async throws {
        let coloured = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBob(coloured)
        let line = try await Self.bobLine(alice, bob).row
        // An SGR foreground colour (3X or 38;5;N) right before bob's name.
        #expect(line.range(of: #"\x1B\[[0-9;]*(3[0-7]|38;5;[0-9]+)[0-9;]*m(\x1B\[[0-9;]*m)*bob"#, options: .regularExpression) != nil,
                "\(line.debugDescription)")
        bob.send("/quit")

        let plain = TemporaryDirectory()
        let (quiet, bob2) = try await Self.aliceAndBob(plain, environment: ["NO_COLOR": "1"], unset: [])
        let (row, screen) = try await Self.bobLine(quiet, bob2)
        #expect(row.range(of: #"^\d\d:\d\d <bob> colourful hello$"#, options: .regularExpression) != nil, "\(row.debugDescription)")
        #expect(!screen.joined().contains("\u{1B}"), "\(screen.joined(separator: "\n").debugDescription)")
        bob2.send("/quit")
    }

    @Test("stdout that is not a terminal gets plain lines without escape sequences, even from a terminal's keyboard")
    func stdoutNotATerminal() async throws {
        let directory = TemporaryDirectory()
        let file = directory.appending("alice.out")
        let exit = directory.appending("alice.exit")
        let meshchat = ChatProcess.binDirectory.appendingPathComponent("meshchat").path
        let alice = try TmuxSession(["/bin/sh", "-c", "\"$0\" \"$@\" > \(file); echo $? > \(exit)", meshchat, "--no-discovery", "--name", "alice",
                                     "--data-dir", directory.appending("alice")],
                                    environment: ["TERM": "xterm-256color"], unset: ["NO_COLOR"], directory: directory)
        let ready = try await Self.waitForFile(file) { $0.contains("listening on port") }
        let port = try #require(ready.split(separator: "\n").lazy.compactMap { Self.port(String($0)) }.first)
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                   "--connect", "127.0.0.1:\(port)"], label: "bob")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        bob.send("plain hello")
        try alice.type("/peers")
        try alice.press("Enter")
        let text = try await Self.waitForFile(file) { $0.contains("<bob> plain hello") && $0.contains("* bob ") }
        #expect(!text.contains("\u{1B}"), "\(text.debugDescription)")
        #expect(!text.contains("\r"))
        #expect(text.split(separator: "\n").contains("<bob> plain hello"))
        try alice.type("/quit")
        try alice.press("Enter")
        // The shell records the exit status (tmux 3.3's #{pane_dead_status} is sometimes never set).
        let status = try await Self.waitForFile(exit) { $0.hasSuffix("\n") }
        #expect(status == "0\n")
    }

    @Test("Ctrl-C clears the line, on an empty line says how to quit, twice quits; the terminal's modes are restored")
    func interruptAndRestore() async throws {
        let directory = TemporaryDirectory()
        let modes = directory.appending("stty.txt")
        // tmux runs the command line through sh, so the modes are written when meshchat has exited.
        let (alice, bob) = try await Self.aliceAndBob(directory, shellSuffix: "; stty -a > \(modes)")
        try alice.type("never sent")
        try await Self.waitForInput(alice, "> never sent")
        try alice.press("C-c")
        try await Self.waitForInput(alice, ">")
        try alice.press("C-c")
        try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("* press Ctrl-C again to quit (or Ctrl-D, or type /quit)") } }
        try alice.press("C-c")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"notConnected\"")
        let stty = try await Self.waitForFile(modes) { $0.contains("icanon") }
        let flags = Set(stty.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init))
        for mode in ["icanon", "echo", "isig", "icrnl", "ixon"] {
            #expect(flags.contains(mode) && !flags.contains("-" + mode), "\(mode) not restored: \(stty)")
        }
        #expect(!bob.output.contains { $0.contains("never sent") })
    }

    @Test("after the terminal narrows, the input line is laid out for the new width: one row, scrolled so the cursor shows")
    func resize() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBob(directory)
        let long = String(repeating: "abcdefghij", count: 8)
        try alice.type(String(long.prefix(30)))
        try await Self.waitForInput(alice, "> " + long.prefix(30))
        try alice.run(["resize-window", "-t", alice.name, "-x", "40", "-y", String(Self.height)])
        try await alice.waitForScreen { _ in (try? alice.value("#{window_width}")) == "40" }
        try alice.type(String(long.dropFirst(30)))
        // Laid out for 100 columns, the line would wrap onto three rows of 40.
        let rows = try await alice.waitForScreen { rows in
            guard let row = Self.inputLine(rows)?.row else { return false }
            return row.hasPrefix("> <") && long.hasSuffix(row.dropFirst(3))
        }
        let input = try #require(Self.inputLine(rows))
        #expect(input.row.count <= 39)
        #expect(rows.filter { $0.contains("abcdefghij") }.count == 1, "\(rows)")
        let cursor = try alice.cursor()
        #expect(cursor.x == Self.meshLabel.count + input.row.count)
        #expect(cursor.y == input.index)
        try alice.press("Enter")
        #expect(try await Self.nextMessage(bob, from: 0).text == long)
    }

    @Test("a log line on stderr (a hostile connection at notice level, --log-level notice asked for) prints above the half-typed line, which stays intact")
    func logLineKeepsClearOfInput() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBob(directory, alice: ["--log-level", "notice"])
        let port = try #require(try alice.screen().lazy.compactMap(Self.port).first)
        try alice.type("still typing")
        try await Self.waitForInput(alice, "> still typing")
        let noise = try RawTCPClient(port: port)
        noise.send([0, 0, 0, 9, 0x77] + [UInt8](repeating: 0x41, count: 40))
        #expect(noise.readUntilClosed(timeout: 5).closed)
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.contains("unknown frame type 0x77") } }
        let input = try #require(Self.inputLine(rows))
        #expect(input.row == "> still typing")
        let logRow = try #require(rows.firstIndex { $0.contains("unknown frame type 0x77") })
        #expect(logRow < input.index)
        #expect(!rows[logRow].contains("still typing"), "the log line cut into the input: \(rows[logRow])")
        let cursor = try alice.cursor()
        #expect(cursor.y == input.index && cursor.x == Self.meshLabel.count + "> still typing".count)
        bob.closeInput()
    }

    /// Waits until a file's text satisfies `predicate` (bounded polling: files have no change event here).
    static func waitForFile(_ path: String, timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if predicate(text) { return text }
            guard ContinuousClock.now < deadline else {
                throw TmuxSession.Failure(description: "\(path) did not show what was awaited within \(timeout); it holds:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
