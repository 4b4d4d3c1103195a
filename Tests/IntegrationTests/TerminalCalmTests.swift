import Foundation
import MeshTestSupport
import Testing

/// A calm screen (issue 17 item 3) with a real `meshchat` in tmux: no log lines in the chat
/// unless asked for, a file transfer's progress on one row updated in place, and my own
/// `/cancel` as a plain notice.
@Suite("terminal calm", .serialized)
struct TerminalCalmTests {
    /// alice and bob as ``TerminalTests/aliceAndBob(_:environment:unset:shellSuffix:alice:bob:)`` makes them,
    /// alice's location set (for `/map`).
    static func aliceAndBobWithLocation(_ directory: TemporaryDirectory) async throws -> (TmuxSession, ChatProcess) {
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        try alice.type("/here 51.5074,-0.1278")
        try alice.press("Enter")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("* you are at") } }
        return (alice, bob)
    }

    @Test("without --log-level a library notice (a hostile connection) stays out of the chat")
    func noLogLinesByDefault() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        let port = try #require(try alice.screen().lazy.compactMap(TerminalTests.port).first)
        let noise = try RawTCPClient(port: port)
        noise.send([0, 0, 0, 9, 0x77] + [UInt8](repeating: 0x41, count: 40))
        #expect(noise.readUntilClosed(timeout: 5).closed)
        // The notice is logged before the link closes; an answer to a command typed after that
        // shows the screen after it.
        try alice.type("/peers")
        try alice.press("Enter")
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.contains("* bob ") && $0.contains("connected") && $0.contains("1 hop") } }
        #expect(!rows.contains { $0.contains("unknown frame type") || $0.contains("notice") }, "\(rows)")
        bob.closeInput()
    }

    @Test("a file transfer's progress is one status row updated in place, not a line each time; my /cancel is a plain notice")
    func progressRowAndCancel() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory, bob: ["--downloads", directory.appending("bob-downloads")])
        let source = directory.appending("big.bin")
        try Data(count: 96 * 1024 * 1024).write(to: URL(fileURLWithPath: source))
        try alice.type("/send @bob \(source)")
        try alice.press("Enter")
        let progress = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"fileProgress\"", "big.bin")))
        let id = try #require(progress.string("id")).prefix(8)
        // The status row (just above the input line) names the transfer with its percentage.
        try await alice.waitForScreen { rows in
            let trimmed = TmuxSession.trimmed(rows)
            return trimmed.count >= 2 && trimmed[trimmed.count - 2].contains("big.bin to bob") && trimmed[trimmed.count - 2].contains("%")
        }
        _ = try await TerminalTests.waitForInput(alice, ">")
        try alice.type("/cancel \(id)")
        try alice.press("Enter")
        let rows = try await alice.waitForScreen { rows in rows.contains { $0.contains("* you cancelled big.bin to bob") } }
        #expect(!rows.contains { $0.contains("! file big.bin") }, "my own cancel is not a failure: \(rows)")
        // Progress never printed a line of its own, and the status row let go of the transfer.
        #expect(rows.filter { $0.contains("big.bin to bob") && $0.contains("%") && !$0.contains("big.bin to bob:") }.count <= 1, "\(rows)")
        try await alice.waitForScreen { rows in !rows.contains { $0.contains("big.bin to bob") && $0.contains("%") && !$0.contains(":") } }
        bob.closeInput()
    }

    @Test("after a resize to 60 x 20, /map is drawn for the new size with its top edge on the screen, and /help wraps at word boundaries")
    func mapAndHelpFollowResize() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await Self.aliceAndBobWithLocation(directory)
        try alice.run(["resize-window", "-t", alice.name, "-x", "60", "-y", "20"])
        try await alice.waitForScreen { _ in (try? alice.value("#{window_width}")) == "60" && (try? alice.value("#{window_height}")) == "20" }
        try alice.press("C-l")
        _ = try await TerminalTests.waitForInput(alice, ">")
        try alice.type("/map 1km")
        try alice.press("Enter")
        // Drawn for 100 columns, the top edge would wrap (its corner on the next row); drawn for
        // 20 rows with the legend below, the top edge would scroll off.
        let map = try await alice.waitForScreen { rows in rows.contains { $0.contains("└") } && rows.contains { $0.contains("radius") } }
        #expect(map.contains { $0.contains("┌") && $0.contains("┐") }, "the top edge is not one row on the screen: \(map)")
        #expect(map.contains { $0.contains("└") && $0.contains("┘") }, "\(map)")
        try alice.press("C-l")
        _ = try await TerminalTests.waitForInput(alice, ">")
        try alice.type("/help")
        try alice.press("Enter")
        let help = try await alice.waitForScreen { rows in rows.contains { $0.contains("/quit") } }
        // The summary of /quit, wrapped at 59 columns, keeps each of its words whole.
        let words = ["disconnect", "from", "every", "peer", "and", "exit"]
        let shown = help.flatMap { $0.split(separator: " ").map(String.init) }
        #expect(words.allSatisfy { shown.contains($0) }, "\(help)")
        #expect(!help.contains { $0.count > 60 })
        bob.closeInput()
    }

    @Test("a pasted block sends one line per line; above five lines it asks first, and any key but y drops it")
    func multiLinePaste() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        try alice.run(["set-buffer", "-b", "calm", "first\nsecond\nthird\n"])
        try alice.run(["paste-buffer", "-p", "-d", "-b", "calm", "-t", alice.name])
        var from = 0
        for expected in ["first", "second", "third"] {
            let next = try await TerminalTests.nextMessage(bob, from: from)
            #expect(next.text == expected)
            from = next.index  // nextMessage gives the index after its line
        }
        try alice.run(["set-buffer", "-b", "calm", (1...7).map { "pasted \($0)" }.joined(separator: "\n")])
        try alice.run(["paste-buffer", "-p", "-d", "-b", "calm", "-t", alice.name])
        try await alice.waitForScreen { rows in rows.contains { $0.contains("you pasted 7 lines: y sends them") } }
        try alice.type("n")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("the pasted lines were dropped") } }
        try alice.type("after")
        try alice.press("Enter")
        let next = try await TerminalTests.nextMessage(bob, from: from)
        #expect(next.text == "after", "the dropped paste sent nothing before it")
        bob.closeInput()
    }
}
