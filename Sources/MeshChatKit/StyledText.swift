/// What a piece of terminal text means; ``StyledText/rendered(_:)`` turns meanings into colours.
///
/// Roles keep the styling of chat lines apart from their look: the same line is plain text
/// with ``ColourMode/none`` and coloured otherwise, character for character the same.
public enum TextRole: Sendable, Hashable {
    /// Ordinary text in the terminal's own colour.
    case plain
    /// A `HH:MM` time stamp (dim).
    case timestamp
    /// A peer's name, in its colour from ``PeerPalette`` (the peer's id in hex).
    case peer(id: String)
    /// My own name (bold).
    case me
    /// The brackets and arrow of a private line (bold magenta).
    case privateMarker
    /// The name of a room in a room line (bold blue).
    case room
    /// The `*` of a system notice (cyan).
    case notice
    /// An error: the `!` and its text (bold red).
    case error
    /// A delivery mark, ✓ or ✓✓ (green).
    case delivered
    /// A line still waiting to go out (yellow).
    case pending
    /// Secondary detail such as hop counts (dim).
    case detail
    /// The prompt of the input line (bold).
    case prompt
    /// The text of a line that mentions me (bold yellow).
    case mention
    /// The status line of the buffers (reverse video).
    case status

    /// The SGR parameters of the role in a colour mode, or `nil` for none.
    /// - Parameter mode: the colour mode.
    /// - Returns: e.g. `"1;31"`.
    public func sgr(_ mode: ColourMode) -> String? {
        guard mode != .none else { return nil }
        switch self {
        case .plain: return nil
        case .timestamp, .detail: return "2"
        case .peer(let id): return PeerPalette.sgr(forPeer: id, mode: mode)
        case .me, .prompt: return "1"
        case .privateMarker: return "1;35"
        case .room: return "1;34"
        case .notice: return "36"
        case .error: return "1;31"
        case .delivered: return "32"
        case .pending: return "33"
        case .mention: return "1;33"
        case .status: return "7"
        }
    }
}

/// A line of text in pieces, each with a ``TextRole`` (pure).
public struct StyledText: Sendable, Hashable, ExpressibleByStringLiteral {
    /// One piece of text in one role.
    public struct Span: Sendable, Hashable {
        /// The text, without escape sequences.
        public var text: String
        /// What it means.
        public var role: TextRole
    }

    /// The pieces in order.
    public private(set) var spans: [Span] = []

    /// Creates a text of one piece.
    /// - Parameters:
    ///   - text: the text (may be empty).
    ///   - role: its role.
    public init(_ text: String = "", _ role: TextRole = .plain) {
        if !text.isEmpty { spans = [Span(text: text, role: role)] }
    }

    /// Creates a plain text from a literal.
    /// - Parameter value: the text.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Appends a piece.
    /// - Parameters:
    ///   - text: the text.
    ///   - role: its role.
    public mutating func append(_ text: String, _ role: TextRole = .plain) {
        guard !text.isEmpty else { return }
        if let last = spans.last, last.role == role {
            spans[spans.count - 1].text += text
        } else {
            spans.append(Span(text: text, role: role))
        }
    }

    /// Appends another styled text.
    /// - Parameter other: the text.
    public mutating func append(_ other: StyledText) {
        for span in other.spans { append(span.text, span.role) }
    }

    /// Two texts one after the other.
    public static func + (lhs: StyledText, rhs: StyledText) -> StyledText {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// The characters, without any escape sequence.
    public var plain: String { spans.map(\.text).joined() }

    /// The text for a terminal: with SGR colour sequences around styled pieces, or exactly
    /// ``plain`` when `mode` is ``ColourMode/none``.
    /// - Parameter mode: the colour mode.
    /// - Returns: the text to write.
    public func rendered(_ mode: ColourMode) -> String {
        var out = ""
        for span in spans {
            if let sgr = span.role.sgr(mode) {
                out += "\u{1B}[\(sgr)m\(span.text)\u{1B}[0m"
            } else {
                out += span.text
            }
        }
        return out
    }
}
