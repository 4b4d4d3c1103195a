import Places

/// The lines under the map's frame: what is shown of what was given, a key to the symbols, the
/// lettered pins with distance and compass point, and summaries of the pins without letters.
///
/// Every line is cut and padded to exactly `width` cells; labels are sanitised and go last on
/// their line, so a long or odd one is cut with an ellipsis and nothing else moves.
struct MapLegend {
    /// A piece of a legend line: text and its paint.
    typealias Piece = (text: String, paint: MapPaint)

    let width: Int
    let glyphs: MapGlyphs
    let radius: Distance
    let centreCell: MapCell
    let places: [MapView.Marker]
    let clusters: PlaceClusters
    let pins: [MapView.Marker]
    let placed: PinPlacements

    /// The legend's lines, in order.
    func lines() -> [MapLine] {
        var lines: [MapLine] = []
        let counts = [
            "places \(clusters.shown)/\(places.count) shown,",
            "pins \(placed.shown.count)/\(pins.count) shown,",
            "radius \(MapWording.text(for: radius))",
        ]
        lines += wrapped(counts.map { [($0, .plain)] }, separator: " ")
        lines += wrapped(keyTokens(), separator: "  ")
        for pin in placed.pins {
            guard let letter = pin.letter else { continue }
            lines.append(line([
                (String(letter), .pin),
                ("  " + Self.field(pin.location) + "  ", .plain),
                (label(of: pin), .plain),
            ]))
        }
        let extra = placed.shown.filter { $0.letter == nil }
        if let nearest = extra.first {
            lines.append(line([
                (String(glyphs.extraPin), .pin),
                (" \(extra.count) more \(extra.count == 1 ? "pin" : "pins"), nearest "
                    + "\(MapWording.whereabouts(distance: nearest.location.distance, bearing: nearest.location.bearing)): ", .plain),
                (label(of: nearest), .plain),
            ]))
        }
        let off = placed.offMap
        if let nearest = off.first {
            lines.append(line([
                ("\(off.count) \(off.count == 1 ? "pin" : "pins") off the map, nearest "
                    + "\(MapWording.whereabouts(distance: nearest.location.distance, bearing: nearest.location.bearing)): ", .plain),
                (label(of: nearest), .plain),
            ]))
        }
        return lines
    }

    /// "  120 m NE" / "    here   ": the distance right-aligned in 8 cells and the compass point
    /// in 2, so labels line up.
    static func field(_ location: MapLocation) -> String {
        let distance: String
        let point: String
        if location.distance < 0.5 {
            (distance, point) = ("here", "")
        } else {
            distance = MapWording.text(for: Distance(metres: location.distance))
            point = MapWording.compassPoint(forBearing: location.bearing)
        }
        return String(repeating: " ", count: max(0, 8 - distance.count)) + distance + " "
            + point + String(repeating: " ", count: max(0, 2 - point.count))
    }

    /// The key to the symbols that matter for this picture.
    private func keyTokens() -> [[Piece]] {
        var tokens: [[Piece]] = []
        tokens.append([(String(glyphs.me), .me), (" me" + hiddenUnderMe(), .plain)])
        tokens.append([(String(glyphs.ring), .ring), (" radius", .plain)])
        tokens.append([("1-9", .place), (" places in a cell", .plain)])
        tokens.append([(String(glyphs.manyPlaces), .place), (" 10 or more", .plain)])
        let letters = placed.pins.compactMap(\.letter)
        if let first = letters.first, let last = letters.last {
            tokens.append([(first == last ? String(first) : "\(first)-\(last)", .pin), (letters.count == 1 ? " pin" : " pins", .plain)])
        }
        if placed.shown.contains(where: { $0.letter == nil }) {
            tokens.append([(String(glyphs.extraPin), .pin), (" more pins", .plain)])
        }
        return tokens
    }

    /// ", over 6 places and pin A" when me hides places or pins in the centre cell, else "".
    private func hiddenUnderMe() -> String {
        var hidden: [String] = []
        let places = clusters.clusters.first { $0.cell == centreCell }?.count ?? 0
        if places > 0 { hidden.append("\(places) \(places == 1 ? "place" : "places")") }
        let pins = placed.shown.filter { $0.location.cell == centreCell }
        if let first = pins.first {
            hidden.append(pins.count == 1 ? "pin \(first.letter.map(String.init) ?? String(glyphs.extraPin))" : "\(pins.count) pins")
        }
        return hidden.isEmpty ? "" : ", over " + hidden.joined(separator: " and ")
    }

    /// A pin's label, sanitised, or "(unnamed)".
    private func label(of pin: PinPlacements.Pin) -> String {
        MapView.displayLabel(pins[pin.index].label)
    }

    /// Tokens laid out in as few lines of `width` as fit, in order, `separator` between them.
    private func wrapped(_ tokens: [[Piece]], separator: String) -> [MapLine] {
        var lines: [[Piece]] = []
        var current: [Piece] = []
        var used = 0
        for token in tokens {
            let tokenWidth = token.reduce(0) { $0 + TerminalText.displayWidth($1.text) }
            if !current.isEmpty && used + separator.count + tokenWidth > width {
                lines.append(current)
                current = []
                used = 0
            }
            if !current.isEmpty {
                current.append((separator, .plain))
                used += separator.count
            }
            current += token
            used += tokenWidth
        }
        if !current.isEmpty { lines.append(current) }
        return lines.map(line)
    }

    /// Pieces cut to the width in order (the last ones are cut first) and padded to it.
    private func line(_ pieces: [Piece]) -> MapLine {
        var line = MapLine()
        var used = 0
        for piece in pieces {
            let text = TerminalText.truncated(piece.text, toWidth: width - used, ellipsis: glyphs.ellipsis)
            line.append(text, piece.paint)
            used += TerminalText.displayWidth(text)
        }
        line.append(String(repeating: " ", count: max(0, width - used)))
        return line
    }
}
