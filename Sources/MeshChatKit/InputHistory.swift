/// The lines the user entered, for recalling with Up and Down (pure; the terminal keeps them
/// across sessions with ``InputHistoryFile``).
///
/// - Blank lines are not kept.
/// - Duplicates collapse: entering a line that is already in the history moves it to the newest
///   place, so each line appears once.
/// - At most ``limit`` lines are kept; the oldest go first.
///
/// Browsing: ``older(than:)`` and ``newer(than:)`` step through entries by position (0 is the
/// oldest); ``LineEditor`` keeps the position and the line being typed before browsing began.
public struct InputHistory: Sendable, Hashable {
    /// The most lines kept.
    public let limit: Int
    /// The lines, oldest first.
    public private(set) var entries: [String] = []

    /// Creates an empty history.
    /// - Parameter limit: the most lines kept (at least 1; default 1,000).
    public init(limit: Int = 1_000) {
        self.limit = max(1, limit)
    }

    /// Creates a history holding earlier lines (read back from disk).
    /// - Parameters:
    ///   - limit: the most lines kept (at least 1).
    ///   - lines: the lines, oldest first; added in order, so blanks go, duplicates collapse
    ///     and only the newest `limit` stay.
    public init(limit: Int = 1_000, lines: [String]) {
        self.init(limit: limit)
        for line in lines { add(line) }
    }

    /// The form of a line that may be written to disk: a `/join #ROOM PASSWORD` loses its
    /// password (`/join #ROOM`), so a room's password never reaches the history file; every
    /// other line is kept as it is.
    /// - Parameter line: an entered line.
    /// - Returns: the line to write.
    public static func forDisk(_ line: String) -> String {
        let words = line.split(maxSplits: 2, omittingEmptySubsequences: true, whereSeparator: \.isWhitespace)
        guard let command = words.first, command.lowercased() == "/join" else { return line }
        return words.count > 1 ? "\(command) \(words[1])" : String(command)
    }

    /// The entries as they may be written to disk (``forDisk(_:)``), each once, oldest first.
    public var entriesForDisk: [String] {
        InputHistory(limit: limit, lines: entries.map(Self.forDisk)).entries
    }

    /// Adds an entered line as the newest entry.
    /// - Parameter line: the line; ignored when it is only whitespace.
    public mutating func add(_ line: String) {
        guard line.contains(where: { !$0.isWhitespace }) else { return }
        entries.removeAll { $0 == line }
        entries.append(line)
        if entries.count > limit { entries.removeFirst(entries.count - limit) }
    }

    /// The position of the entry before `position` (`nil`: from the line being typed).
    /// - Parameter position: the entry shown now, or `nil` when none is.
    /// - Returns: the older entry's position, or `nil` when there is none.
    public func older(than position: Int?) -> Int? {
        let candidate = (position ?? entries.count) - 1
        return candidate >= 0 && candidate < entries.count ? candidate : nil
    }

    /// The position of the entry after `position`.
    /// - Parameter position: the entry shown now.
    /// - Returns: the newer entry's position, or `nil` when `position` is the newest (back to the
    ///   line being typed).
    public func newer(than position: Int) -> Int? {
        position + 1 < entries.count ? position + 1 : nil
    }
}
