@testable import MeshChatKit

/// A tiny terminal emulator for tests: interprets the bytes ``TerminalScreen`` writes (CR, LF,
/// erase line and screen, cursor right/up/home, SGR ignored) on a grid of cells with wide
/// characters taking two, scrolling at the bottom, so tests can read "the screen" as a person
/// would see it. Anything else it does not understand fails the test through `unknown`.
struct MiniTerminal {
    let width: Int
    let height: Int
    private(set) var rows: [[Character?]]
    private(set) var row = 0
    private(set) var column = 0
    /// Escape sequences it did not understand.
    private(set) var unknown: [String] = []

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        rows = Array(repeating: Array(repeating: nil, count: width), count: height)
    }

    /// The text of each row, trailing blanks removed.
    var lines: [String] {
        rows.map { cells in
            var line = String(cells.compactMap { $0 == Self.secondHalf ? nil : ($0 ?? " ") })
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// The rows up to the last one that is not blank.
    var visibleLines: [String] {
        var result = lines
        while let last = result.last, last.isEmpty { result.removeLast() }
        return result
    }

    mutating func feed(_ text: String) {
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\r":
                column = 0
            case "\n":
                lineFeed()
            case "\r\n":  // one Character
                column = 0
                lineFeed()
            case "\u{1B}":
                guard characters.first == "[" else {
                    unknown.append("ESC \(characters.first.map(String.init) ?? "")")
                    continue
                }
                characters.removeFirst()
                var parameters = ""
                while let next = characters.first, next.isASCII, next.isNumber || next == ";" || next == "?" {
                    parameters.append(next)
                    characters.removeFirst()
                }
                guard let final = characters.popFirst() else { return }
                csi(parameters, final)
            default:
                put(character)
            }
        }
    }

    private mutating func csi(_ parameters: String, _ final: Character) {
        let n = Int(parameters) ?? 0
        switch final {
        case "m": break
        case "K":
            for c in min(column, width)..<width { rows[row][c] = nil }
        case "J":
            if n == 2 {
                rows = Array(repeating: Array(repeating: nil, count: width), count: height)
            } else {
                for c in min(column, width)..<width { rows[row][c] = nil }
                for r in (row + 1)..<height { rows[r] = Array(repeating: nil, count: width) }
            }
        case "C": column = min(column + max(n, 1), width - 1)
        case "A": row = max(row - max(n, 1), 0)
        case "H":
            row = 0
            column = 0
        case "h" where parameters == "?2004", "l" where parameters == "?2004": break
        default: unknown.append("CSI \(parameters)\(final)")
        }
    }

    private mutating func put(_ character: Character) {
        let cells = TerminalText.displayWidth(character)
        guard cells > 0 else { return }
        if column + cells > width {
            column = 0
            lineFeed()
        }
        rows[row][column] = character
        if cells == 2, column + 1 < width { rows[row][column + 1] = Self.secondHalf }
        column += cells  // may be `width`: the next character wraps (as a terminal's pending wrap)
    }

    private mutating func lineFeed() {
        if row == height - 1 {
            rows.removeFirst()
            rows.append(Array(repeating: nil, count: width))
        } else {
            row += 1
        }
    }
}

extension MiniTerminal {
    /// Marks the second cell of a wide character.
    static let secondHalf: Character = "\u{0}"
}
