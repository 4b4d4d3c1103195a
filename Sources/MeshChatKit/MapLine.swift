/// How a glyph of the map is coloured when colour is on.
enum MapPaint: Sendable, Hashable {
    /// The terminal's own colour: frame, scale bar, north arrow, legend text.
    case plain
    /// Dim: the radius circle.
    case ring
    /// Dim: place counts.
    case place
    /// Bold bright yellow: pins and their letters in the legend.
    case pin
    /// Bold: me.
    case me

    /// The SGR sequence that starts this paint (none for ``plain``).
    var escape: String {
        switch self {
        case .plain: ""
        case .ring, .place: "\u{1B}[2m"
        case .pin: "\u{1B}[1;93m"
        case .me: "\u{1B}[1m"
        }
    }

    /// The SGR sequence that ends any paint.
    static let reset = "\u{1B}[0m"
}

/// A line of the picture being drawn: one-cell glyphs or legend text, each with its paint.
///
/// Colour never changes the layout: the escape sequences added by ``text(colour:)`` take no
/// cells, so the line with colour shows exactly the characters of the line without.
struct MapLine: Sendable {
    private var runs: [(text: String, paint: MapPaint)] = []

    /// Appends text (which must be safe to print) with a paint.
    mutating func append(_ text: String, _ paint: MapPaint = .plain) {
        guard !text.isEmpty else { return }
        if let last = runs.last, last.paint == paint {
            runs[runs.count - 1].text += text
        } else {
            runs.append((text, paint))
        }
    }

    /// Appends one glyph with a paint.
    mutating func append(_ glyph: Character, _ paint: MapPaint = .plain) {
        append(String(glyph), paint)
    }

    /// The line as printed: with an escape before each painted run and a reset after it when
    /// `colour` is true, as plain characters otherwise.
    func text(colour: Bool) -> String {
        var out = ""
        for run in runs {
            if colour && run.paint != .plain {
                out += run.paint.escape + run.text + MapPaint.reset
            } else {
                out += run.text
            }
        }
        return out
    }
}
