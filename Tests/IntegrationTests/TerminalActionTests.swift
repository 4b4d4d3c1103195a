import Foundation
import MeshTestSupport
import Testing

/// `/me` action lines and a resized screen, with a real `meshchat` in tmux (alice) and a
/// `--json` peer (bob), as ``TerminalTests`` runs them.
@Suite("terminal actions and resize", .serialized)
struct TerminalActionTests {
    @Test("/me goes where typed lines go, marked action on the wire: bob's --json says action, alice shows * name text, also in /history")
    func action() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalTests.aliceAndBob(directory)
        try alice.type("/me waves")
        try alice.press("Enter")
        let mesh = try await bob.waitForEvent("\"event\":\"message\"", "\"text\":\"waves\"")
        #expect(mesh.contains("\"action\":true") && mesh.contains("\"private\":false"), "\(mesh)")
        try await alice.waitForScreen { rows in rows.contains { $0.hasSuffix("* alice waves ✓") || $0.contains("* alice waves") } }
        bob.send("/me nods")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("* bob nods") } }
        // A plain line stays plain.
        bob.send("plain words")
        let plain = try await alice.waitForScreen { rows in rows.contains { $0.contains("<bob> plain words") } }
        #expect(!plain.contains { $0.contains("* bob plain words") })
        // In a private conversation: sealed to bob, and still an action.
        try alice.type("/query @bob")
        try alice.press("Enter")
        try await alice.waitForScreen { TerminalTests.inputLabel($0) == "[@bob]" }
        try alice.type("/me smiles")
        try alice.press("Enter")
        let sealed = try await bob.waitForEvent("\"event\":\"message\"", "\"text\":\"smiles\"")
        #expect(sealed.contains("\"action\":true") && sealed.contains("\"private\":true"), "\(sealed)")
        try await alice.waitForScreen { rows in rows.contains { $0.contains("[→ bob] * alice smiles") } }
        // From the store: /history marks each action, with its date.
        try alice.type("/history 10")
        try alice.press("Enter")
        let history = try await alice.waitForScreen { rows in rows.contains { $0.contains("[→ bob] * alice smiles") && $0.contains("-") } }
        #expect(history.contains { $0.contains("* bob nods") && $0.hasPrefix("20") }, "\(history)")
        #expect(history.contains { $0.contains("* alice waves") && $0.hasPrefix("20") }, "\(history)")
        // And bob's history from --json.
        bob.send("/history 10")
        let answer = try await bob.waitForEvent("\"event\":\"history\"")
        #expect(answer.contains("\"text\":\"nods\"") && answer.contains("\"action\":true"), "\(answer)")
        bob.closeInput()
    }

    @Test("a resize after /map and a half-typed line: every row fits the new width, the map is drawn for it, no stale input line, the half-typed text intact")
    func resizeRedraws() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob) = try await TerminalCalmTests.aliceAndBobWithLocation(directory)
        try alice.type("/map 1km")
        try alice.press("Enter")
        let wide = try await alice.waitForScreen { rows in rows.contains { $0.contains("└") } && rows.contains { $0.contains("radius") } }
        let wideTop = try #require(wide.first { $0.contains("┌") })
        let half = "half typed, not sent"
        try alice.type(half)
        try await TerminalTests.waitForInput(alice, "> " + half)
        try alice.run(["resize-window", "-t", alice.name, "-x", "60", "-y", "20"])
        let rows = try await alice.waitForScreen { rows in
            (try? alice.value("#{window_width}")) == "60"
                && rows.contains { $0.contains("┌") && $0.contains("┐") } && rows.contains { $0.contains("└") && $0.contains("┘") }
                && TerminalTests.inputLine(rows)?.row == "> " + half
        }
        #expect(rows.allSatisfy { $0.count <= 60 }, "\(rows)")
        let top = try #require(rows.first { $0.contains("┌") })
        #expect(top.count < wideTop.count, "the map is drawn again for 60 columns: \(rows)")
        #expect(rows.filter { $0.contains(half) }.count == 1, "one input line, no stale copy: \(rows)")
        // Wider again: the same, and the line is still there to send.
        try alice.run(["resize-window", "-t", alice.name, "-x", "90", "-y", "26"])
        let wider = try await alice.waitForScreen { rows in
            (try? alice.value("#{window_width}")) == "90" && rows.contains { $0.contains("┌") && $0.count > top.count }
                && TerminalTests.inputLine(rows)?.row == "> " + half
        }
        #expect(wider.filter { $0.contains(half) }.count == 1, "\(wider)")
        try alice.press("Enter")
        #expect(try await TerminalTests.nextMessage(bob, from: 0).text == half)
        bob.closeInput()
    }
}
