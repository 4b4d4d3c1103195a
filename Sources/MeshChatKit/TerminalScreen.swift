import Foundation

/// The interactive screen as a value: the input line on the bottom row, and output lines
/// printed above it (pure; every input returns the bytes to write).
///
/// Output never mixes with the line being typed: ``print(_:)`` erases the input row, writes the
/// lines (which scroll up as a terminal does), and draws the prompt, the half-typed text and the
/// cursor again below them. The shell writes each returned string whole, under one lock, so the
/// terminal never sees half an input line.
///
/// States: before ``start()`` and after ``stop()`` the input line is not shown, and ``print(_:)``
/// only writes lines; in between it is always the last row. With a status line
/// (``setStatus(_:)``, the conversations and their unread counts) the status line is the row
/// above it, in reverse video, cut to the width; without one the screen is as before.
public struct TerminalScreen: Sendable {
    /// The line editor (text, cursor, history, completion).
    public var editor = LineEditor()
    /// The prompt before the input: where typed lines go (``setPrompt(_:)``).
    public private(set) var prompt: String
    /// The colour mode of everything written.
    public let colour: ColourMode
    /// The terminal's width in cells.
    public private(set) var width: Int
    /// Whether the input line is shown.
    public private(set) var isInputShown = false
    /// The status line above the input line ("" for none).
    public private(set) var status = ""
    /// Whether a status row is on the screen now, above the input row.
    private var statusDrawn = false
    private var view = InputLineView()

    /// Erases the input line: carriage return, erase to the end of the screen (below the input
    /// line there is nothing of ours; after a terminal narrowed and rewrapped the input line, its
    /// second half is there).
    static let eraseRow = "\r\u{1B}[J"

    /// Creates a screen.
    /// - Parameters:
    ///   - prompt: the prompt, e.g. `"> "`.
    ///   - width: the terminal's width in cells.
    ///   - colour: the colour mode.
    public init(prompt: String = "> ", width: Int, colour: ColourMode) {
        self.prompt = prompt
        self.width = max(width, 1)
        self.colour = colour
    }

    /// Shows the input line.
    /// - Returns: the bytes that draw it.
    public mutating func start() -> String {
        isInputShown = true
        return drawAll()
    }

    /// Changes the status line and draws it (with the input line) again.
    /// - Parameter status: the new status line ("" for none).
    /// - Returns: the bytes ("" when the input line is hidden or nothing changed).
    public mutating func setStatus(_ status: String) -> String {
        guard status != self.status else { return "" }
        self.status = status
        guard isInputShown else { return "" }
        return erase() + drawAll()
    }

    /// Clears the screen and shows other lines (another conversation's scrollback), then the
    /// status and input lines.
    /// - Parameter lines: the lines, top first.
    /// - Returns: the bytes.
    public mutating func replaceLines(_ lines: [StyledText]) -> String {
        statusDrawn = false
        let body = lines.map { $0.rendered(colour).replacingOccurrences(of: "\n", with: "\r\n") + "\r\n" }.joined()
        return "\u{1B}[H\u{1B}[2J" + body + drawAll()
    }

    /// Changes the prompt (typed lines go elsewhere now) and draws the input line again.
    /// - Parameter prompt: the new prompt (printable, one line).
    /// - Returns: the bytes that redraw it ("" when the input line is hidden or nothing changed).
    public mutating func setPrompt(_ prompt: String) -> String {
        guard prompt != self.prompt else { return "" }
        self.prompt = prompt
        guard isInputShown else { return "" }
        return erase() + drawAll()
    }

    /// Hides the input line, leaving the cursor at the start of its (now empty) row.
    /// - Returns: the bytes that erase it.
    public mutating func stop() -> String {
        guard isInputShown else { return "" }
        let bytes = erase()
        isInputShown = false
        return bytes
    }

    /// Applies one key to the editor.
    /// - Parameter key: the key.
    /// - Returns: the editor's action, and the bytes that show its effect (a redrawn input line,
    ///   a cleared screen, or the input line erased at the end of input).
    public mutating func press(_ key: TerminalKey) -> (action: LineEditor.Action, bytes: String) {
        let action = editor.handle(key)
        guard isInputShown else { return (action, "") }
        switch action {
        case .none, .confirmQuit, .confirmPaste, .pasteDropped:
            return (action, "")
        case .redraw, .submit, .submitLines:
            return (action, redraw())
        case .clearScreen:
            statusDrawn = false
            return (action, "\u{1B}[H\u{1B}[2J" + drawAll())
        case .endOfInput, .quit:
            return (action, stop())
        }
    }

    /// Prints lines above the input line.
    /// - Parameter lines: the lines (each is split again at line feeds).
    /// - Returns: the bytes: erase the input row, the lines, the input line drawn again.
    public mutating func print(_ lines: [StyledText]) -> String {
        guard !lines.isEmpty else { return "" }
        let body = lines.map { $0.rendered(colour).replacingOccurrences(of: "\n", with: "\r\n") }.joined(separator: "\r\n") + "\r\n"
        guard isInputShown else { return body }
        return erase() + body + drawAll()
    }

    /// The bytes around text that another writer puts on the terminal (log lines on stderr):
    /// erase the input row before it, draw the input line again after it. Both are empty while
    /// the input line is hidden.
    public mutating func aroundForeignOutput() -> (before: String, after: String) {
        guard isInputShown else { return ("", "") }
        return (erase(), drawAll())
    }

    /// The terminal changed size.
    /// - Parameter width: the new width in cells.
    /// - Returns: the bytes that draw the input line for the new width.
    public mutating func resize(width: Int) -> String {
        self.width = max(width, 1)
        guard isInputShown else { return "" }
        return erase() + drawAll()
    }

    /// Erases what is drawn at the bottom: the input row, and the status row above it when one is drawn.
    private mutating func erase() -> String {
        defer { statusDrawn = false }
        return statusDrawn ? "\r\u{1B}[1A\u{1B}[J" : Self.eraseRow
    }

    /// Draws the status row (when there is a status) and the input line, from the start of an empty row.
    private mutating func drawAll() -> String {
        guard isInputShown else { return "" }
        guard !status.isEmpty else { return redraw() }
        statusDrawn = true
        let shown = TerminalText.truncated(status, toWidth: max(width - 1, 1), ellipsis: "…")
        return "\r" + StyledText(shown, .status).rendered(colour) + "\u{1B}[K\r\n" + redraw()
    }

    /// The bytes that draw the input line as it is now ("" when it is hidden).
    public mutating func redraw() -> String {
        guard isInputShown else { return "" }
        return view.draw(text: editor.text, cursor: editor.cursor, prompt: prompt, width: width, colour: colour)
    }
}
