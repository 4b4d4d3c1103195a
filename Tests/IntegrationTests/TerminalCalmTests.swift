import Foundation
import MeshTestSupport
import Testing

/// A calm screen (issue 17 item 3) with a real `meshchat` in tmux: no log lines in the chat
/// unless asked for, a file transfer's progress on one row updated in place, and my own
/// `/cancel` as a plain notice.
@Suite("terminal calm", .serialized)
struct TerminalCalmTests {
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
}
