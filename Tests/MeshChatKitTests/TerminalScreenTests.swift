import Foundation
@testable import MeshChatKit
import MeshStore
import MeshTestSupport
import Testing

/// `InputLineView` and `TerminalScreen`, checked byte for byte and through `MiniTerminal`,
/// which shows what a person would see.
@Suite("terminal screen")
struct TerminalScreenTests {
    @Test("a short line: carriage return, prompt, text, erase to the end of the row, cursor to its column")
    func shortLine() {
        var view = InputLineView()
        #expect(view.draw(text: "hello", cursor: 5, prompt: "> ", width: 80, colour: .none) == "\r> hello\u{1B}[K\r\u{1B}[7C")
        #expect(view.draw(text: "hello", cursor: 0, prompt: "", width: 80, colour: .none) == "\rhello\u{1B}[K\r")
        #expect(view.draw(text: "hi", cursor: 1, prompt: "> ", width: 80, colour: .basic) == "\r\u{1B}[1m> \u{1B}[0mhi\u{1B}[K\r\u{1B}[3C")
    }

    @Test("wide characters take two cells, combining marks none, in the cursor's column")
    func wideCharacters() {
        var view = InputLineView()
        let layout = view.layout(text: "日本e\u{301}x", cursor: 3, prompt: "> ", width: 80)
        #expect(layout.cursorColumn == 2 + 4 + 1)
        #expect(layout.visible == "日本e\u{301}x")
    }

    @Test("a line wider than the terminal scrolls: the cursor stays visible, < and > mark hidden text, nothing reaches the last column")
    func scrolling() {
        var view = InputLineView()
        let text = String((0..<150).map { Character(String($0 % 10)) })
        let end = view.layout(text: text, cursor: 150, prompt: "> ", width: 40)
        #expect(end.hiddenLeft && !end.hiddenRight)
        #expect(text.hasSuffix(end.visible))
        #expect(end.cursorColumn <= 38)
        #expect(end.cursorColumn == 2 + 1 + end.visible.count)
        let start = view.layout(text: text, cursor: 0, prompt: "> ", width: 40)
        #expect(!start.hiddenLeft && start.hiddenRight)
        #expect(text.hasPrefix(start.visible))
        #expect(2 + start.visible.count + 1 <= 39)
        #expect(start.cursorColumn == 2)
    }

    @Test("the window moves only when the cursor leaves it, then by about half its width")
    func stableWindow() {
        var view = InputLineView()
        let text = String(repeating: "abcdefghij", count: 10)
        _ = view.layout(text: text, cursor: 100, prompt: "", width: 31)
        let first = view.firstVisible
        for cursor in stride(from: 99, to: first, by: -1) {
            _ = view.layout(text: text, cursor: cursor, prompt: "", width: 31)
            #expect(view.firstVisible == first)
        }
        _ = view.layout(text: text, cursor: first - 1, prompt: "", width: 31)
        #expect(view.firstVisible < first - 5)
    }

    @Test("random lines, cursors and widths: the row fits, shows a contiguous piece with the cursor's character, never splits a wide one")
    func randomLayouts() {
        var generator = SplitMix64(seed: 7)
        let alphabet: [String] = ["a", "b", " ", "日", "本", "é", "e\u{301}", "🇫🇷", "✓", "👩‍👩‍👧", "x"]
        for _ in 0..<500 {
            var view = InputLineView()
            let text = (0..<Int.random(in: 0...120, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            let count = text.count
            let width = Int.random(in: 8...60, using: &generator)
            for _ in 0..<5 {
                let cursor = Int.random(in: 0...count, using: &generator)
                let row = view.layout(text: text, cursor: cursor, prompt: "> ", width: width)
                let cells = TerminalText.displayWidth(row.prompt) + (row.hiddenLeft ? 1 : 0) + TerminalText.displayWidth(row.visible)
                    + (row.hiddenRight ? 1 : 0)
                #expect(cells <= width - 1, "\(text) w\(width) c\(cursor)")
                #expect(row.cursorColumn <= width - 2, "\(text) w\(width) c\(cursor)")
                let characters = Array(text)
                let first = view.firstVisible
                #expect(String(characters[first..<(first + row.visible.count)]) == row.visible)
                #expect(cursor >= first && cursor <= first + row.visible.count)
                if cursor < count { #expect(cursor < first + row.visible.count, "cursor's character hidden") }
                #expect(row.hiddenLeft == (first > 0))
                #expect(row.hiddenRight == (first + row.visible.count < count))
                #expect(row.cursorColumn == TerminalText.displayWidth(row.prompt) + (row.hiddenLeft ? 1 : 0)
                    + TerminalText.displayWidth(String(characters[first..<cursor])))
            }
        }
    }

    /// A screen and a terminal showing it, 40 by 6.
    struct Rig {
        var screen = TerminalScreen(prompt: "> ", width: 40, colour: .none)
        var terminal = MiniTerminal(width: 40, height: 6)

        mutating func start() { terminal.feed(screen.start()) }
        mutating func type(_ keys: TerminalKey...) {
            for key in keys { terminal.feed(screen.press(key).bytes) }
        }
        mutating func print(_ lines: StyledText...) { terminal.feed(screen.print(lines)) }
    }

    @Test("a line printed while a line is half typed appears above it; the half-typed text and the cursor are intact")
    func printAboveInput() {
        var rig = Rig()
        rig.start()
        rig.print("10:50 * you are alice")
        rig.type(.text("half typed"), .left, .left)
        rig.print("10:51 <bob> hello from bob")
        #expect(rig.terminal.visibleLines == ["10:50 * you are alice", "10:51 <bob> hello from bob", "> half typed"])
        #expect(rig.terminal.row == 2)
        #expect(rig.terminal.column == 2 + 8)
        rig.type(.text("X"))
        #expect(rig.terminal.visibleLines.last == "> half typXed")
        #expect(rig.terminal.unknown.isEmpty)
    }

    @Test("the prompt says where typed lines go; changing it redraws the input line with the half-typed text and the cursor after it")
    func promptNamesTarget() {
        #expect(ChatFront.prompt(for: .mesh) == "[mesh] > ")
        #expect(ChatFront.prompt(for: .room(RoomRef(name: "#lunch", hasPassword: false))) == "[#lunch] > ")
        #expect(ChatFront.prompt(for: .room(RoomRef(name: "#dev", hasPassword: true))) == "[#dev 🔒] > ")
        var rig = Rig()
        #expect(rig.screen.setPrompt("[mesh] > ").isEmpty)   // hidden: nothing to draw
        rig.start()
        rig.type(.text("half"))
        #expect(rig.terminal.visibleLines.last == "[mesh] > half")
        rig.terminal.feed(rig.screen.setPrompt(ChatFront.prompt(for: .room(RoomRef(name: "#dev", hasPassword: true)))))
        #expect(rig.terminal.visibleLines.last == "[#dev 🔒] > half")
        #expect(rig.terminal.column == "[#dev 🔒] > ".count + 1 + 4)   // the lock is two cells wide
        #expect(rig.screen.setPrompt("[#dev 🔒] > ").isEmpty)   // unchanged: no redraw
    }

    @Test("text another writer puts on the terminal (a log line on stderr) goes above the input line, which is drawn again intact")
    func foreignOutput() {
        var rig = Rig()
        #expect(rig.screen.aroundForeignOutput() == ("", ""))
        rig.start()
        rig.type(.text("half typed"), .left)
        let (before, after) = rig.screen.aroundForeignOutput()
        // The tty turns stderr's \n into \r\n (ONLCR stays on in raw mode).
        rig.terminal.feed(before + "2026-11-22T20:20:18+0000 debug meshchat: [MeshTransport] a log line\r\n" + after)
        #expect(rig.terminal.visibleLines == ["2026-11-22T20:20:18+0000 debug meshchat:", " [MeshTransport] a log line", "> half typed"])
        #expect(rig.terminal.column == 2 + 9)
        let line = TerminalLogHandler.format(date: Date(timeIntervalSince1970: 1_795_344_648), level: "notice", label: "meshchat",
                                             metadata: ["b": "2", "a": "1"], source: "MeshSession", message: "closing a link")
        #expect(line.hasSuffix(" notice meshchat: a=1 b=2 [MeshSession] closing a link\n"))
        #expect(line.hasPrefix("2026-11-22T"))
    }

    @Test("many lines scroll the screen; the input line stays the last row, and lines longer than the terminal wrap above it")
    func scrollingOutput() {
        var rig = Rig()
        rig.start()
        rig.type(.text("draft"))
        for n in 1...8 { rig.print(StyledText("line \(n)")) }
        rig.print(StyledText(String(repeating: "w", count: 50)))
        #expect(rig.terminal.lines == ["line 6", "line 7", "line 8", String(repeating: "w", count: 40), String(repeating: "w", count: 10), "> draft"])
        rig.print("a\nb")
        #expect(rig.terminal.visibleLines.suffix(3) == ["a", "b", "> draft"])
    }

    @Test("before start and after stop, lines are printed without an input line; stop erases it")
    func startStop() {
        var rig = Rig()
        rig.print("early")
        #expect(rig.terminal.visibleLines == ["early"])
        rig.start()
        rig.type(.text("abc"))
        #expect(rig.terminal.visibleLines == ["early", "> abc"])
        rig.terminal.feed(rig.screen.stop())
        #expect(rig.terminal.visibleLines == ["early"])
        rig.print("late")
        #expect(rig.terminal.visibleLines == ["early", "late"])
        #expect(rig.screen.stop().isEmpty)
    }

    @Test("Enter empties the input line; Ctrl-D on it erases it; Ctrl-L clears the screen and redraws the input")
    func keysOnScreen() {
        var rig = Rig()
        rig.start()
        rig.print("old")
        rig.type(.text("sent"))
        #expect(rig.screen.press(.enter).action == .submit("sent"))
        rig.terminal.feed(rig.screen.redraw())
        #expect(rig.terminal.visibleLines == ["old", ">"])
        rig.type(.text("x"), .control("l"))
        #expect(rig.terminal.visibleLines == ["> x"])
        rig.type(.control("u"), .control("d"))
        #expect(rig.terminal.visibleLines.isEmpty)
        #expect(!rig.screen.isInputShown)
    }

    @Test("a resize redraws the input line for the new width")
    func resize() {
        var rig = Rig()
        rig.start()
        rig.type(.text(String(repeating: "z", count: 30)))
        var narrow = MiniTerminal(width: 20, height: 6)
        narrow.feed(rig.screen.resize(width: 20))
        let row = narrow.visibleLines.last ?? ""
        #expect(row.hasPrefix("> <"))
        #expect(row.count <= 19)
        #expect(narrow.column <= 18)
    }
}
