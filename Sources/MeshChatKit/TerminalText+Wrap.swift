import Foundation

extension TerminalText {
    /// `text` wrapped at word boundaries to at most `width` cells a line (`/help` at any width).
    ///
    /// A wrapped line goes on under its own text: under the column after the first gap of two or
    /// more spaces (`  /peers      list connected…` hangs under `list`) when that is within the
    /// left half, else under the line's own indentation. A word wider than the room is cut
    /// between characters; every line is cut to `width` in the end, so nothing wraps again.
    /// - Parameters:
    ///   - text: sanitised text, lines separated by `\n`.
    ///   - width: the most cells a line may take (at least 1 is used).
    /// - Returns: the wrapped lines.
    static func wrapped(_ text: String, width: Int) -> [String] {
        let width = max(width, 1)
        return text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            wrappedLine(String(line), width: width)
        }
    }

    private static func wrappedLine(_ line: String, width: Int) -> [String] {
        guard displayWidth(line) > width else { return [line] }
        let leading = line.prefix { $0 == " " }.count
        var hang = leading
        if let gap = line.dropFirst(leading).range(of: "  ") {
            let column = displayWidth(line[..<gap.lowerBound]) + (line[gap.lowerBound...].prefix { $0 == " " }.count)
            if column <= width / 2 { hang = column }
        }
        if hang >= width / 2 { hang = 0 }
        let indent = String(repeating: " ", count: hang)
        var lines: [String] = []
        var current = String(repeating: " ", count: leading)
        var currentWidth = leading
        var atStart = true
        for word in line.dropFirst(leading).split(separator: " ", omittingEmptySubsequences: false) {
            let wordWidth = displayWidth(word)
            let gap = atStart ? 0 : 1
            if currentWidth + gap + wordWidth <= width {
                if !atStart { current += " " }
                current += word
                currentWidth += gap + wordWidth
                atStart = false
                continue
            }
            // A new line, unless this is a spacing token (an empty word) at a break.
            if word.isEmpty { continue }
            if !atStart { lines.append(current) }
            current = indent
            currentWidth = hang
            var rest = Substring(word)
            // A word wider than the room is cut between characters.
            while displayWidth(rest) > width - hang {
                let piece = truncated(String(rest), toWidth: width - hang, ellipsis: "")
                guard !piece.isEmpty else { break }
                lines.append(indent + piece)
                rest = rest.dropFirst(piece.count)
            }
            current += rest
            currentWidth += displayWidth(rest)
            atStart = rest.isEmpty
        }
        if !atStart || current.contains(where: { $0 != " " }) { lines.append(current) }
        return lines.map { truncated($0, toWidth: width, ellipsis: "") }
    }
}
