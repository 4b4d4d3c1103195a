/// Display-width arithmetic for text shown in a terminal: how many cells a string takes, and
/// labels made safe to print (no control sequences, no bidi overrides) and cut to a width.
///
/// Widths follow the usual `wcwidth` rules for a terminal whose East Asian Ambiguous characters
/// are narrow: East Asian Wide and Fullwidth characters and emoji presentation take two cells,
/// combining marks and format characters none, everything else one. A grapheme cluster (one
/// `Character`) takes the width of its first visible scalar, or two when it asks for emoji
/// presentation (U+FE0F). Pure; no terminal is queried.
enum TerminalText {
    /// The number of terminal cells `text` takes.
    /// - Parameter text: Text without control characters (see ``sanitised(_:)``).
    /// - Returns: The width in cells.
    static func displayWidth(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + displayWidth($1) }
    }

    /// The number of terminal cells one grapheme cluster takes: 0, 1 or 2.
    /// - Parameter character: The cluster.
    /// - Returns: The width in cells.
    static func displayWidth(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let base = scalars.first(where: { !isZeroWidth($0) }) else { return 0 }
        if scalars.contains(where: { $0.value == 0xFE0E }) { return 1 }  // text presentation
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }  // emoji presentation
        if base.properties.isEmojiPresentation || isWide(base.value) { return 2 }
        return 1
    }

    /// `text` made safe to print on one line: control characters (C0, C1, DEL) and line or
    /// paragraph separators become spaces, bidirectional embeddings, overrides and isolates are
    /// removed (they could reorder what follows on the line), and runs of whitespace collapse to
    /// one space with none at either end.
    /// - Parameter text: Untrusted text, such as a place name from a data set or a peer.
    /// - Returns: The text to show.
    static func sanitised(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator:
                scalars.append(" ")
            default:
                if !isBidiControl(scalar.value) { scalars.append(scalar) }
            }
        }
        return String(scalars).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// `text` cut to at most `width` cells, ending in `ellipsis` when something was cut.
    ///
    /// Cuts only between grapheme clusters, so a combining mark stays with its letter and a
    /// wide character is never split.
    /// - Parameters:
    ///   - text: Sanitised text.
    ///   - width: The most cells the result may take (0 or less gives "").
    ///   - ellipsis: What marks a cut; dropped too if even it does not fit.
    /// - Returns: The text, whole or cut.
    static func truncated(_ text: String, toWidth width: Int, ellipsis: String) -> String {
        guard width > 0 else { return "" }
        if displayWidth(text) <= width { return text }
        let ellipsisWidth = displayWidth(ellipsis)
        let room = ellipsisWidth <= width ? width - ellipsisWidth : width
        var result = ""
        var used = 0
        for character in text {
            let w = displayWidth(character)
            if used + w > room { break }
            result.append(character)
            used += w
        }
        return ellipsisWidth <= width ? result + ellipsis : result
    }

    /// `text` followed by spaces up to exactly `width` cells (cut first if it is wider).
    /// - Parameters:
    ///   - text: Sanitised text.
    ///   - width: The width of the result in cells.
    ///   - ellipsis: What marks a cut.
    /// - Returns: Text of exactly `width` cells (or fewer only when a wide character could not fit,
    ///   and then padded).
    static func padded(_ text: String, toWidth width: Int, ellipsis: String) -> String {
        let cut = truncated(text, toWidth: width, ellipsis: ellipsis)
        return cut + String(repeating: " ", count: max(0, width - displayWidth(cut)))
    }

    /// Whether a scalar takes no cell of its own: combining marks, format characters
    /// (zero-width joiner, soft hyphen…), variation selectors and Hangul medial and final jamo.
    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: break
        }
        let v = scalar.value
        return v == 0x200B || (0x1160...0x11FF).contains(v) || (0xD7B0...0xD7FF).contains(v)
    }

    /// The bidirectional formatting characters: LRM, RLM, ALM, embeddings, overrides, isolates.
    private static func isBidiControl(_ v: UInt32) -> Bool {
        v == 0x200E || v == 0x200F || v == 0x061C || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges outside emoji (emoji use their property).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
        0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
        0x17000...0x18CFF, 0x1AFF0...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    private static func isWide(_ v: UInt32) -> Bool {
        guard v >= 0x1100 else { return false }
        return wideRanges.contains { $0.contains(v) }
    }
}
