/// The line being typed: its text, the cursor, the history and Tab completion, as a state
/// machine (pure; no I/O). ``handle(_:)`` takes one key and returns what the shell must do.
///
/// The cursor counts grapheme clusters (`Character`s), so it never stands inside an accented
/// letter, an emoji or a flag, and Backspace removes what the user sees as one character.
///
/// Keys (emacs-style, as in readline, irssi and weechat):
///
/// | key | effect |
/// |---|---|
/// | Enter | ``Action/submit(_:)`` the line, which enters the history; the editor empties |
/// | Backspace, Delete (Ctrl-D on a non-empty line) | delete before, at the cursor |
/// | Left/Right (Ctrl-B/F), Home/End (Ctrl-A/E) | move |
/// | Ctrl-Left/Right, Alt-B/F | move a word (letters, digits and `_`) |
/// | Ctrl-W | delete back to the previous space; Alt-Backspace a word back, Alt-D a word ahead |
/// | Ctrl-K, Ctrl-U | cut to the end, to the start; Ctrl-Y pastes the last cut |
/// | Up/Down (Ctrl-P/N) | browse the history; the line being typed comes back after the newest |
/// | Tab | complete a `/command`, an `@name`, a name at the start of the line (`bob: `) or the peer of `/msg`, `/route`, `/invite`, `/accept`, `/decline`, `/verify`, `/trust`, `/untrust`; Tab again cycles through the matches |
/// | Ctrl-L | ``Action/clearScreen`` |
/// | Ctrl-C | clear the line; on an empty line ``Action/confirmQuit``, and a second Ctrl-C right after it ``Action/quit`` |
/// | Ctrl-D on an empty line | ``Action/endOfInput`` |
///
/// The line holds at most ``maxLength`` characters; typing or pasting beyond that is dropped.
public struct LineEditor: Sendable {
    /// What the shell does after a key.
    public enum Action: Sendable, Hashable {
        /// Nothing changed.
        case none
        /// The text or the cursor changed: redraw the input line.
        case redraw
        /// Enter: this line was entered (already in the history; the editor is empty again).
        case submit(String)
        /// Ctrl-D on an empty line: the user ends the input.
        case endOfInput
        /// Ctrl-C on an empty line: tell the user how to quit (another Ctrl-C quits).
        case confirmQuit
        /// Ctrl-C right after ``confirmQuit``: quit.
        case quit
        /// Ctrl-L: clear the screen and redraw the input line.
        case clearScreen
        /// A paste of several lines (at most ``pasteLinesWithoutAsking``, or confirmed): each is
        /// entered, in order (already in the history; the editor is empty again).
        case submitLines([String])
        /// A paste of more lines than ``pasteLinesWithoutAsking``: ask whether to send them
        /// (`y` sends them, any other key drops them).
        case confirmPaste(lines: Int)
        /// The user did not confirm a long paste: its lines were dropped.
        case pasteDropped
    }

    /// The most characters the line may hold.
    public static let maxLength = 16_384

    /// The commands Tab completes by default: every command of ``ChatCommand/usages`` and
    /// the aliases `/who` and `/exit`, with their slash.
    public static let defaultCommands: [String] = (ChatCommand.usages.map(\.name) + ["who", "exit"]).map { "/" + $0 }.sorted()

    /// Commands whose first argument is a peer (Tab completes names there without `@`).
    static let peerCommands: Set<String> = ["/msg", "/route", "/invite", "/accept", "/decline", "/verify", "/trust", "/untrust"]

    /// The text typed so far.
    public private(set) var text = ""
    /// The cursor: the number of characters before it (0 ... `text.count`).
    public private(set) var cursor = 0
    /// The lines entered so far.
    public private(set) var history: InputHistory
    /// The names Tab completes (peers' display names, or id prefixes for names with spaces);
    /// the caller keeps them current.
    public var names: [String] = []
    /// The commands Tab completes, each with its leading `/`.
    public var commands: [String] = LineEditor.defaultCommands

    /// The history entry shown, while browsing.
    private var browsing: Int?
    /// The line that was being typed when browsing began.
    private var draft: String?
    /// The text of the last Ctrl-K, Ctrl-U or Ctrl-W, for Ctrl-Y.
    private var cut = ""
    /// Matches of the Tab completion in progress.
    private var completion: Completion?
    /// The previous key was Ctrl-C on an empty line.
    private var quitAsked = false
    /// The lines of a long paste waiting for `y`.
    private var pendingPaste: [String]?

    private struct Completion: Sendable {
        var start: Int
        var candidates: [String]
        var index: Int
    }

    /// Creates an empty editor.
    /// - Parameter historyLimit: the most history lines kept.
    public init(historyLimit: Int = 1_000) {
        history = InputHistory(limit: historyLimit)
    }

    /// Replaces the history with earlier lines (read back from disk at start), and stops browsing.
    /// - Parameter lines: the lines, oldest first.
    public mutating func restoreHistory(_ lines: [String]) {
        history = InputHistory(limit: history.limit, lines: lines)
        browsing = nil
        draft = nil
    }

    /// A paste of more lines than this asks first.
    public static let pasteLinesWithoutAsking = 5

    /// The lines of a paste, each cut to ``maxLength``; blank lines are left out (an empty line sends nothing).
    public static func pastedLines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true)
            .map { String($0.prefix(maxLength)) }
            .filter { $0.contains { !$0.isWhitespace } }
    }

    /// Enters pasted lines: each into the history; the editor empties.
    private mutating func enter(_ lines: [String]) -> Action {
        for line in lines { history.add(line) }
        text = ""
        cursor = 0
        browsing = nil
        draft = nil
        return .submitLines(lines)
    }

    /// Applies one key.
    /// - Parameter key: the key.
    /// - Returns: what to do.
    public mutating func handle(_ key: TerminalKey) -> Action {
        if let pasted = pendingPaste {
            pendingPaste = nil
            guard key == .text("y") || key == .text("Y") else { return .pasteDropped }
            return enter(pasted)
        }
        let wasCompleting = completion
        completion = nil
        let askedToQuit = quitAsked
        quitAsked = false
        switch key {
        case .paste(let typed) where typed.contains("\n"):
            // The half-typed line takes the paste at the cursor; then every line is its own.
            let whole = String(text.prefix(cursor)) + typed + String(text.dropFirst(cursor))
            let lines = Self.pastedLines(whole)
            guard lines.count > Self.pasteLinesWithoutAsking else { return enter(lines) }
            pendingPaste = lines
            return .confirmPaste(lines: lines.count)
        case .text(let typed), .paste(let typed):
            return insert(typed)
        case .enter:
            let line = text
            history.add(line)
            text = ""
            cursor = 0
            browsing = nil
            draft = nil
            return .submit(line)
        case .backspace:
            guard cursor > 0 else { return .none }
            return remove(cursor - 1..<cursor)
        case .delete:
            guard cursor < text.count else { return .none }
            return remove(cursor..<cursor + 1)
        case .control("d"):
            if text.isEmpty { return .endOfInput }
            guard cursor < text.count else { return .none }
            return remove(cursor..<cursor + 1)
        case .left, .control("b"):
            return move(to: cursor - 1)
        case .right, .control("f"):
            return move(to: cursor + 1)
        case .home, .control("a"):
            return move(to: 0)
        case .end, .control("e"):
            return move(to: text.count)
        case .wordLeft:
            return move(to: wordStart(before: cursor))
        case .wordRight:
            return move(to: wordEnd(after: cursor))
        case .control("w"):
            var start = cursor
            let characters = Array(text)
            while start > 0 && characters[start - 1].isWhitespace { start -= 1 }
            while start > 0 && !characters[start - 1].isWhitespace { start -= 1 }
            return cutText(start..<cursor)
        case .altBackspace:
            return cutText(wordStart(before: cursor)..<cursor)
        case .alt("d"):
            return cutText(cursor..<wordEnd(after: cursor))
        case .control("k"):
            return cutText(cursor..<text.count)
        case .control("u"):
            return cutText(0..<cursor)
        case .control("y"):
            return insert(cut)
        case .up, .control("p"):
            guard let older = history.older(than: browsing) else { return .none }
            if browsing == nil { draft = text }
            browsing = older
            return show(history.entries[older])
        case .down, .control("n"):
            guard let position = browsing else { return .none }
            if let newer = history.newer(than: position) {
                browsing = newer
                return show(history.entries[newer])
            }
            browsing = nil
            defer { draft = nil }
            return show(draft ?? "")
        case .tab:
            return complete(continuing: wasCompleting)
        case .control("l"):
            return .clearScreen
        case .control("c"):
            if text.isEmpty {
                if askedToQuit { return .quit }
                quitAsked = true
                browsing = nil
                draft = nil
                return .confirmQuit
            }
            text = ""
            cursor = 0
            browsing = nil
            draft = nil
            return .redraw
        default:
            return .none
        }
    }

    // MARK: Editing

    private func index(_ offset: Int) -> String.Index {
        text.index(text.startIndex, offsetBy: offset)
    }

    private mutating func insert(_ typed: String) -> Action {
        let room = Self.maxLength - text.count
        guard room > 0, !typed.isEmpty else { return .none }
        let piece = typed.count > room ? String(typed.prefix(room)) : typed
        let at = index(cursor)
        let before = String(text[..<at]) + piece
        text = before + String(text[at...])
        cursor = min(before.count, text.count)
        return .redraw
    }

    private mutating func remove(_ range: Range<Int>) -> Action {
        guard !range.isEmpty else { return .none }
        text.removeSubrange(index(range.lowerBound)..<index(range.upperBound))
        cursor = range.lowerBound
        return .redraw
    }

    private mutating func cutText(_ range: Range<Int>) -> Action {
        guard !range.isEmpty else { return .none }
        cut = String(text[index(range.lowerBound)..<index(range.upperBound)])
        return remove(range)
    }

    private mutating func move(to position: Int) -> Action {
        let target = min(max(position, 0), text.count)
        guard target != cursor else { return .none }
        cursor = target
        return .redraw
    }

    private mutating func show(_ line: String) -> Action {
        text = line
        cursor = line.count
        return .redraw
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    private func wordStart(before position: Int) -> Int {
        let characters = Array(text)
        var start = position
        while start > 0 && !Self.isWordCharacter(characters[start - 1]) { start -= 1 }
        while start > 0 && Self.isWordCharacter(characters[start - 1]) { start -= 1 }
        return start
    }

    private func wordEnd(after position: Int) -> Int {
        let characters = Array(text)
        var end = position
        while end < characters.count && !Self.isWordCharacter(characters[end]) { end += 1 }
        while end < characters.count && Self.isWordCharacter(characters[end]) { end += 1 }
        return end
    }

    // MARK: Completion

    private mutating func complete(continuing previous: Completion?) -> Action {
        if var previous, previous.candidates.count > 1 {
            previous.index = (previous.index + 1) % previous.candidates.count
            replaceWord(from: previous.start, with: previous.candidates[previous.index])
            completion = previous
            return .redraw
        }
        let characters = Array(text)
        var start = cursor
        while start > 0 && !characters[start - 1].isWhitespace { start -= 1 }
        let word = String(characters[start..<cursor])
        let earlier = characters[..<start].split(whereSeparator: { $0.isWhitespace }).map { String($0) }
        var candidates: [String] = []
        if start == 0 && word.hasPrefix("/") {
            candidates = Self.matches(word, in: commands).map { $0 + " " }
        } else if word.hasPrefix("@") {
            candidates = Self.matches(String(word.dropFirst()), in: names).map { "@" + $0 + " " }
        } else if earlier.count == 1, Self.peerCommands.contains(earlier[0].lowercased()) {
            candidates = Self.matches(word, in: names).map { $0 + " " }
        } else if start == 0 && !word.isEmpty {
            candidates = Self.matches(word, in: names).map { $0 + ": " }
        }
        guard !candidates.isEmpty else { return .none }
        replaceWord(from: start, with: candidates[0])
        if candidates.count > 1 { completion = Completion(start: start, candidates: candidates, index: 0) }
        return .redraw
    }

    /// Entries of `list` starting with `prefix` (ignoring case), sorted, without duplicates.
    private static func matches(_ prefix: String, in list: [String]) -> [String] {
        let lowered = prefix.lowercased()
        return Array(Set(list.filter { $0.lowercased().hasPrefix(lowered) }))
            .sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
    }

    private mutating func replaceWord(from start: Int, with replacement: String) {
        let range = index(start)..<index(cursor)
        let room = Self.maxLength - (text.count - (cursor - start))
        guard replacement.count <= room else { return }
        text.replaceSubrange(range, with: replacement)
        cursor = min(start + replacement.count, text.count)
    }
}
