import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the terminal keeps across sessions: the lines typed (Up recalls them after a restart,
/// a `/join` password never reaches the disk), the chat history and the rooms. alice runs in
/// tmux, quits, and runs again with the same data directory.
@Suite("meshchat in a terminal across restarts (tmux)", .serialized)
struct TerminalHistoryTests {
    /// alice alone in tmux with her data directory in `directory`; returns once she listens.
    static func alice(_ directory: TemporaryDirectory) async throws -> TmuxSession {
        let meshchat = ChatProcess.binDirectory.appendingPathComponent("meshchat").path
        guard FileManager.default.isExecutableFile(atPath: meshchat) else {
            throw TmuxSession.Failure(description: "\(meshchat) is not built; run scripts/test (or swift build) first")
        }
        let alice = try TmuxSession([meshchat, "--no-discovery", "--name", "alice", "--data-dir", directory.appending("alice")],
                                    width: TerminalTests.width, height: TerminalTests.height, unset: ["NO_COLOR"], directory: directory)
        try await alice.waitForScreen { rows in rows.contains { $0.contains("listening on port") } }
        return alice
    }

    /// Types a line and presses Enter, and waits until the input line is empty again.
    static func enter(_ alice: TmuxSession, _ line: String) async throws {
        try alice.type(line)
        try await TerminalTests.waitForInput(alice, "> " + line)
        try alice.press("Enter")
        try await TerminalTests.waitForInput(alice, ">")
    }

    /// Waits (bounded polling: tmux has no exit event) until the program in the pane has exited.
    static func waitForExit(_ session: TmuxSession, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try session.value("#{pane_dead}") != "1" {
            guard ContinuousClock.now < deadline else { throw TmuxSession.Failure(description: "meshchat did not exit within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("lines typed before /quit come back with Up after a restart; a /join password is not on disk")
    func inputHistorySurvivesRestart() async throws {
        let directory = TemporaryDirectory()
        do {
            let alice = try await Self.alice(directory)
            try await Self.enter(alice, "first line")
            try await Self.enter(alice, "/join #hideout hunter2")
            try await alice.waitForScreen { rows in rows.contains { $0.contains("joined #hideout") } }
            try await Self.enter(alice, "second line")
            try alice.type("/quit")
            try alice.press("Enter")
            try await Self.waitForExit(alice)
        }

        let file = directory.appending("alice/input-history")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains("hunter2"))
        #expect(text.contains("/join #hideout\n"))
        var info = stat()
        #expect(stat(file, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        let again = try await Self.alice(directory)
        // After the restart the prompt says where typed lines go: still the password room.
        try await again.waitForScreen { TerminalTests.inputLabel($0) == "[#hideout 🔒]" }
        for expected in ["/quit", "second line", "/join #hideout", "first line"] {
            try again.press("Up")
            try await TerminalTests.waitForInput(again, "> " + expected)
        }
        try again.press("Down")
        try await TerminalTests.waitForInput(again, "> /join #hideout")
        try again.press("C-u")
        try await TerminalTests.waitForInput(again, ">")
    }

    @Test("/history and /rooms show what was typed and joined before a restart")
    func historyAndRoomsSurviveRestart() async throws {
        let directory = TemporaryDirectory()
        do {
            let alice = try await Self.alice(directory)
            try await Self.enter(alice, "before the restart")
            try await Self.enter(alice, "/join #kept")
            try await alice.waitForScreen { rows in rows.contains { $0.contains("joined #kept") } }
            try await Self.enter(alice, "in the room")
            try alice.type("/quit")
            try alice.press("Enter")
            try await Self.waitForExit(alice)
        }

        let again = try await Self.alice(directory)
        try await Self.enter(again, "/rooms")
        try await again.waitForScreen { rows in rows.contains { $0.contains("* rooms: #kept (active)") } }
        try await Self.enter(again, "/history")
        let rows = try await again.waitForScreen { rows in
            rows.contains { $0.contains("before the restart") && !$0.hasPrefix(">") } && rows.contains { $0.contains("in the room") && !$0.hasPrefix(">") }
        }
        let before = try #require(rows.firstIndex { $0.contains("before the restart") })
        let room = try #require(rows.firstIndex { $0.contains("in the room") })
        #expect(before < room)
    }
}
