import MeshChatKit
import Testing

/// `LineEditor` and `InputHistory`: editing keys, history, completion, Ctrl-C/Ctrl-D.
@Suite("line editor")
struct LineEditorTests {
    /// An editor after typing `text` (cursor at the end).
    static func editor(_ text: String = "", names: [String] = []) -> LineEditor {
        var editor = LineEditor()
        editor.names = names
        if !text.isEmpty { _ = editor.handle(.text(text)) }
        return editor
    }

    /// Applies keys and returns the last action.
    @discardableResult
    static func press(_ editor: inout LineEditor, _ keys: TerminalKey...) -> LineEditor.Action {
        var action = LineEditor.Action.none
        for key in keys { action = editor.handle(key) }
        return action
    }

    @Test("typing inserts at the cursor; Ctrl-A then typing inserts at the start; Ctrl-E goes back to the end")
    func insertAtCursor() {
        var editor = Self.editor("world")
        #expect(editor.cursor == 5)
        #expect(Self.press(&editor, .control("a")) == .redraw)
        #expect(editor.cursor == 0)
        Self.press(&editor, .text("hello "))
        #expect(editor.text == "hello world")
        #expect(editor.cursor == 6)
        Self.press(&editor, .control("e"), .text("!"))
        #expect(editor.text == "hello world!")
        Self.press(&editor, .home, .right, .control("f"), .left, .control("b"), .end, .left, .text("?"))
        #expect(editor.text == "hello world?!")
    }

    @Test("moving past either end does nothing and asks for no redraw")
    func moveLimits() {
        var editor = Self.editor("ab")
        #expect(Self.press(&editor, .right) == .none)
        Self.press(&editor, .home)
        #expect(Self.press(&editor, .left) == .none)
        #expect(Self.press(&editor, .backspace) == .none)
        #expect(editor.text == "ab")
    }

    @Test("the cursor moves by grapheme: an accent typed after its letter, a flag, a family emoji are one character each")
    func graphemes() {
        var editor = Self.editor("e")
        Self.press(&editor, .text("\u{301}"))
        #expect(editor.text == "é")
        #expect(editor.cursor == 1)
        Self.press(&editor, .text("🇫🇷👩‍👩‍👧x"))
        #expect(editor.cursor == 4)
        Self.press(&editor, .left, .backspace)
        #expect(editor.text == "é🇫🇷x")
        Self.press(&editor, .backspace, .backspace)
        #expect(editor.text == "x")
        #expect(editor.cursor == 0)
    }

    @Test("Backspace deletes before the cursor, Delete and Ctrl-D at it")
    func deletion() {
        var editor = Self.editor("abcd")
        Self.press(&editor, .left, .left, .backspace)
        #expect(editor.text == "acd")
        Self.press(&editor, .delete)
        #expect(editor.text == "ad")
        Self.press(&editor, .control("d"))
        #expect(editor.text == "a")
        #expect(Self.press(&editor, .control("d")) == .none)  // at the end of a non-empty line: nothing
        #expect(Self.press(&editor, .delete) == .none)
    }

    @Test("Ctrl-W deletes back to the previous space; Alt-Backspace and Alt-D delete a word; Ctrl-Y pastes what was cut")
    func words() {
        var editor = Self.editor("one two three")
        Self.press(&editor, .control("w"))
        #expect(editor.text == "one two ")
        Self.press(&editor, .control("w"))
        #expect(editor.text == "one ")
        Self.press(&editor, .control("y"))
        #expect(editor.text == "one two ")
        var path = Self.editor("cat path/to/file.txt")
        Self.press(&path, .control("w"))
        #expect(path.text == "cat ")
        path = Self.editor("cat path/to/file.txt")
        Self.press(&path, .altBackspace)
        #expect(path.text == "cat path/to/file.")
        Self.press(&path, .home, .alt("d"))
        #expect(path.text == " path/to/file.")
    }

    @Test("Ctrl-Left/Right and Alt-B/F move by words")
    func wordMoves() {
        var editor = Self.editor("say hello, world")
        Self.press(&editor, .wordLeft)
        #expect(editor.cursor == 11)
        Self.press(&editor, .wordLeft)
        #expect(editor.cursor == 4)
        Self.press(&editor, .wordRight)
        #expect(editor.cursor == 9)
        Self.press(&editor, .home, .wordRight)
        #expect(editor.cursor == 3)
    }

    @Test("Ctrl-K cuts to the end, Ctrl-U to the start")
    func cuts() {
        var editor = Self.editor("hello world")
        Self.press(&editor, .wordLeft, .control("k"))
        #expect(editor.text == "hello ")
        Self.press(&editor, .left, .control("u"))
        #expect(editor.text == " ")
        #expect(editor.cursor == 0)
        Self.press(&editor, .control("y"))
        #expect(editor.text == "hello ")
    }

    @Test("Enter submits exactly what was typed, enters it in the history and empties the line")
    func submit() {
        var editor = Self.editor("  one two  ")
        #expect(Self.press(&editor, .enter) == .submit("  one two  "))
        #expect(editor.text.isEmpty)
        #expect(editor.cursor == 0)
        #expect(editor.history.entries == ["  one two  "])
        #expect(Self.press(&editor, .enter) == .submit(""))
        #expect(editor.history.entries == ["  one two  "])  // blank lines are not kept
    }

    @Test("Up and Down browse the history; the line being typed comes back after the newest")
    func history() {
        var editor = LineEditor()
        for line in ["first", "second", "third"] { Self.press(&editor, .text(line), .enter) }
        Self.press(&editor, .text("draft"))
        Self.press(&editor, .up)
        #expect(editor.text == "third")
        #expect(editor.cursor == 5)
        Self.press(&editor, .up, .control("p"))
        #expect(editor.text == "first")
        #expect(Self.press(&editor, .up) == .none)
        Self.press(&editor, .down)
        #expect(editor.text == "second")
        Self.press(&editor, .control("n"), .down)
        #expect(editor.text == "draft")
        #expect(Self.press(&editor, .down) == .none)
        // A recalled line can be edited and entered.
        Self.press(&editor, .control("u"), .up, .text("!"))
        #expect(Self.press(&editor, .enter) == .submit("third!"))
    }

    @Test("duplicates collapse into the newest entry; the history keeps at most its limit")
    func historyLimits() {
        var history = InputHistory(limit: 3)
        for line in ["a", "b", "a", "c", " ", "d", "c"] { history.add(line) }
        #expect(history.entries == ["a", "d", "c"])
        #expect(InputHistory().limit == 1_000)
        var editor = LineEditor()
        for n in 0..<1_005 { Self.press(&editor, .text("line \(n)"), .enter) }
        #expect(editor.history.entries.count == 1_000)
        #expect(editor.history.entries.first == "line 5")
        Self.press(&editor, .text("line 7"), .enter)
        #expect(editor.history.entries.count == 1_000)
        #expect(editor.history.entries.last == "line 7")
        #expect(editor.history.entries.filter { $0 == "line 7" }.count == 1)
    }

    @Test("Tab completes a command at the start of the line, and Tab again cycles through the matches")
    func completeCommands() {
        var editor = Self.editor("/ms")
        #expect(Self.press(&editor, .tab) == .redraw)
        #expect(editor.text == "/msg ")
        editor = Self.editor("/h")
        Self.press(&editor, .tab)
        #expect(editor.text == "/help ")
        Self.press(&editor, .tab)
        #expect(editor.text == "/here ")
        Self.press(&editor, .tab)
        #expect(editor.text == "/history ")
        Self.press(&editor, .tab)
        #expect(editor.text == "/help ")
        editor = Self.editor("/zz")
        #expect(Self.press(&editor, .tab) == .none)
        #expect(editor.text == "/zz")
    }

    @Test("Tab completes @names anywhere, names after /msg and /route, and a name at the start as \"name: \"")
    func completeNames() {
        let names = ["bob", "Bea", "carol"]
        var editor = Self.editor("hi @b", names: names)
        Self.press(&editor, .tab)
        #expect(editor.text == "hi @Bea ")
        Self.press(&editor, .tab)
        #expect(editor.text == "hi @bob ")
        Self.press(&editor, .text("x"), .tab)
        #expect(editor.text == "hi @bob x")  // typing ends the cycle; "x" matches nothing
        editor = Self.editor("/msg c", names: names)
        Self.press(&editor, .tab)
        #expect(editor.text == "/msg carol ")
        editor = Self.editor("/route @C", names: names)
        Self.press(&editor, .tab)
        #expect(editor.text == "/route @carol ")
        editor = Self.editor("car", names: names)
        Self.press(&editor, .tab)
        #expect(editor.text == "carol: ")
        // In the middle of a line the completed word is replaced, the rest kept.
        editor = Self.editor("see @ca later", names: names)
        Self.press(&editor, .wordLeft, .wordLeft, .wordRight, .tab)
        #expect(editor.text == "see @carol  later")
        #expect(editor.cursor == 11)
    }

    @Test("Ctrl-C clears the line; on an empty line it asks to confirm, and a second Ctrl-C quits")
    func interrupt() {
        var editor = Self.editor("half")
        #expect(Self.press(&editor, .control("c")) == .redraw)
        #expect(editor.text.isEmpty)
        #expect(Self.press(&editor, .control("c")) == .confirmQuit)
        #expect(Self.press(&editor, .control("c")) == .quit)
        // Anything in between starts over.
        editor = LineEditor()
        #expect(Self.press(&editor, .control("c")) == .confirmQuit)
        Self.press(&editor, .left)
        #expect(Self.press(&editor, .control("c")) == .confirmQuit)
    }

    @Test("Ctrl-D on an empty line ends the input; Ctrl-L asks to clear the screen")
    func endAndClear() {
        var editor = LineEditor()
        #expect(Self.press(&editor, .control("d")) == .endOfInput)
        editor = Self.editor("x")
        #expect(Self.press(&editor, .control("l")) == .clearScreen)
        #expect(editor.text == "x")
        #expect(Self.press(&editor, .escape, .pageUp, .control("z")) == .none)
        #expect(editor.text == "x")
    }

    @Test("the line holds at most maxLength characters; a longer paste is cut")
    func maxLength() {
        var editor = LineEditor()
        Self.press(&editor, .paste(String(repeating: "a", count: LineEditor.maxLength + 10)))
        #expect(editor.text.count == LineEditor.maxLength)
        #expect(Self.press(&editor, .text("b")) == .none)
        #expect(editor.text.count == LineEditor.maxLength)
    }

    @Test("a paste of several lines enters one line each (the half-typed text takes the first at the cursor); blank lines send nothing")
    func multiLinePaste() {
        var editor = LineEditor()
        _ = Self.press(&editor, .text("say: "))
        #expect(Self.press(&editor, .paste("one\n\ntwo\n   \nthree")) == .submitLines(["say: one", "two", "three"]))
        #expect(editor.text.isEmpty)
        #expect(Self.press(&editor, .up) == .redraw && editor.text == "three", "each line is in the history")
        var single = LineEditor()
        #expect(Self.press(&single, .paste("no line break")) == .redraw)
        #expect(single.text == "no line break")
    }

    @Test("a paste of more than five lines asks first: y sends them, any other key drops them and keeps the typed text")
    func longPasteAsks() {
        let six = (1...6).map { "line \($0)" }.joined(separator: "\n")
        var editor = LineEditor()
        #expect(Self.press(&editor, .paste(six)) == .confirmPaste(lines: 6))
        #expect(Self.press(&editor, .text("y")) == .submitLines((1...6).map { "line \($0)" }))
        var other = LineEditor()
        _ = Self.press(&other, .text("draft"))
        #expect(Self.press(&other, .paste(six)) == .confirmPaste(lines: 6))
        #expect(Self.press(&other, .enter) == .pasteDropped)
        #expect(other.text == "draft", "the dropped paste leaves the typed text")
        #expect(Self.press(&other, .enter) == .submit("draft"))
        let five = (1...5).map { "l\($0)" }.joined(separator: "\n")
        var editor5 = LineEditor()
        #expect(Self.press(&editor5, .paste(five)) == .submitLines(["l1", "l2", "l3", "l4", "l5"]), "five lines go without asking")
        #expect(LineEditor.pastedLines(String(repeating: "x", count: LineEditor.maxLength + 5) + "\ny") == [String(repeating: "x", count: LineEditor.maxLength), "y"])
    }
}
