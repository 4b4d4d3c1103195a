/// Draws the input line (prompt, text, cursor) on one terminal row, scrolling horizontally when
/// the text is wider than the terminal (pure; returns bytes to write).
///
/// The line never takes the terminal's last column, so the terminal never wraps it, and a
/// redraw is always "carriage return, draw, erase to the end of the row, place the cursor".
/// Widths are terminal cells (``TerminalText``): a wide character takes two, a combining mark
/// none, and a wide character is never cut in half.
///
/// When the text does not fit, a window of it is shown: `<` in the first column says text is
/// hidden on the left, `>` in the last that text is hidden on the right. The window moves only
/// when the cursor would leave it, and then by half its width (as irssi and readline do), so
/// typing at the end of a long line does not redraw the whole row on every key.
public struct InputLineView: Sendable, Hashable {
    /// The index (in characters) of the first character shown.
    public private(set) var firstVisible = 0

    /// What one row shows.
    public struct Layout: Sendable, Hashable {
        /// The prompt as shown (cut when the terminal is very narrow).
        public var prompt: String
        /// `<`: text is hidden on the left.
        public var hiddenLeft: Bool
        /// The characters shown.
        public var visible: String
        /// `>`: text is hidden on the right.
        public var hiddenRight: Bool
        /// The cursor's column (0 is the first).
        public var cursorColumn: Int
    }

    /// Creates a view scrolled to the start.
    public init() {}

    /// Lays out the line, moving the window so that the cursor is visible.
    /// - Parameters:
    ///   - text: the line's text (printable characters only).
    ///   - cursor: the cursor, in characters.
    ///   - prompt: the prompt (printable, one line).
    ///   - width: the terminal's width in cells.
    /// - Returns: what the row shows.
    public mutating func layout(text: String, cursor: Int, prompt: String, width: Int) -> Layout {
        let usable = max(width - 1, 2)
        let shownPrompt = TerminalText.displayWidth(prompt) > usable / 2
            ? TerminalText.truncated(prompt, toWidth: usable / 2, ellipsis: "") : prompt
        let room = max(usable - TerminalText.displayWidth(shownPrompt), 1)
        let characters = Array(text)
        let widths = characters.map { TerminalText.displayWidth($0) }
        let cursor = min(max(cursor, 0), characters.count)
        func cells(_ range: Range<Int>) -> Int { widths[range].reduce(0, +) }
        let cursorCell = cursor < characters.count ? max(widths[cursor], 1) : 1

        if cells(0..<characters.count) + 1 <= room {
            firstVisible = 0
            return Layout(prompt: shownPrompt, hiddenLeft: false, visible: text, hiddenRight: false,
                          cursorColumn: TerminalText.displayWidth(shownPrompt) + cells(0..<cursor))
        }
        // Too wide: one cell is kept for `>` on the right, and one for `<` unless at the start.
        func fits(_ first: Int) -> Bool {
            let available = room - 1 - (first > 0 ? 1 : 0)
            return cells(first..<cursor) + cursorCell <= available
        }
        var first = firstVisible
        if first > cursor || !fits(first) {
            // Jump: put the cursor half-way across the window, or as near as fits.
            let half = (room - 2) / 2
            first = cursor
            while first > 0 && cells((first - 1)..<cursor) <= half { first -= 1 }
            while first < cursor && !fits(first) { first += 1 }
        }
        firstVisible = first
        let leftMarker = first > 0
        var available = room - (leftMarker ? 1 : 0)
        var end = first
        var used = 0
        while end < characters.count && used + widths[end] <= available {
            used += widths[end]
            end += 1
        }
        let rightMarker = end < characters.count
        if rightMarker {
            available -= 1
            while used > available {
                end -= 1
                used -= widths[end]
            }
        }
        return Layout(prompt: shownPrompt, hiddenLeft: leftMarker, visible: String(characters[first..<end]),
                      hiddenRight: rightMarker,
                      cursorColumn: TerminalText.displayWidth(shownPrompt) + (leftMarker ? 1 : 0) + cells(first..<cursor))
    }

    /// The bytes that redraw the row the cursor is on: carriage return, prompt, text, erase to the
    /// end of the row, and the cursor moved to its column.
    /// - Parameters:
    ///   - text: the line's text.
    ///   - cursor: the cursor, in characters.
    ///   - prompt: the prompt.
    ///   - width: the terminal's width in cells.
    ///   - colour: the colour mode (the prompt is bold, the markers dim).
    /// - Returns: the bytes to write.
    public mutating func draw(text: String, cursor: Int, prompt: String, width: Int, colour: ColourMode) -> String {
        let row = layout(text: text, cursor: cursor, prompt: prompt, width: width)
        var line = StyledText(row.prompt, .prompt)
        if row.hiddenLeft { line.append("<", .detail) }
        line.append(row.visible)
        if row.hiddenRight { line.append(">", .detail) }
        let move = row.cursorColumn > 0 ? "\u{1B}[\(row.cursorColumn)C" : ""
        return "\r" + line.rendered(colour) + "\u{1B}[K\r" + move
    }
}
