/// What calls the user (pure): a line that mentions one of their words (their name, and the
/// mention words of the configuration), or a private line.
///
/// A mention is a whole word, case-insensitive: with the word `bob`, "hi Bob!" and "@bob:"
/// mention it, "bobby" and "kebob" do not. A word is bounded by the text's ends or by a
/// character that is neither a letter, a digit nor `_`. Words are compared as the user typed
/// them; an empty word mentions nothing.
public struct Attention: Sendable, Hashable {
    /// The most mention words kept (more are ignored).
    public static let maxWords = 32
    /// The longest mention word, in characters.
    public static let maxWordCharacters = 63

    /// Whether a mention or a private line rings the terminal's bell.
    public var bell: Bool
    /// Words besides my name that mention me (from the configuration's `mentions`).
    public private(set) var words: [String]

    /// Creates the rules.
    /// - Parameters:
    ///   - bell: ring the bell on a mention or a private line.
    ///   - words: further words that mention me; empty ones and those past the limits are left out.
    public init(bell: Bool = true, words: [String] = []) {
        self.bell = bell
        self.words = Array(words.filter { !$0.isEmpty && $0.count <= Self.maxWordCharacters }.prefix(Self.maxWords))
    }

    /// Whether a line from someone else calls me.
    /// - Parameters:
    ///   - text: the line's text (untrusted).
    ///   - isPrivate: a private line to me.
    ///   - myName: my display name now.
    /// - Returns: `true` for a private line, or a line mentioning my name or a mention word.
    public func calls(_ text: String, isPrivate: Bool, myName: String) -> Bool {
        isPrivate || Self.mentions(text, anyOf: [myName] + words)
    }

    /// Whether a text mentions any of the words (whole words, case-insensitive).
    /// - Parameters:
    ///   - text: the text.
    ///   - words: the words.
    /// - Returns: `true` when one occurs bounded by non-word characters or the text's ends.
    public static func mentions(_ text: String, anyOf words: [String]) -> Bool {
        let haystack = Array(text.lowercased())
        for word in words where !word.isEmpty {
            let needle = Array(word.lowercased())
            guard needle.count <= haystack.count else { continue }
            var start = 0
            while start + needle.count <= haystack.count {
                if haystack[start] == needle[0], haystack[start..<(start + needle.count)].elementsEqual(needle) {
                    let before = start == 0 || !isWordCharacter(haystack[start - 1])
                    let afterIndex = start + needle.count
                    let after = afterIndex == haystack.count || !isWordCharacter(haystack[afterIndex])
                    if before && after { return true }
                }
                start += 1
            }
        }
        return false
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }
}
