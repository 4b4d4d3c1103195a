import Places

extension MapView {
    /// The picture: the framed map, then the legend, one string per line.
    ///
    /// The first ``height`` lines are the frame (top edge with the north arrow, the interior,
    /// bottom edge with the scale bar); then a line counting what is shown, a key to the symbols,
    /// one line per lettered pin (letter, distance, compass point, label) and, when there are
    /// any, a line for unlettered pins and one for pins off the map. Every line is exactly
    /// ``width`` cells wide, without trailing escape sequences when `colour` is false.
    /// - Parameters:
    ///   - places: Places to cluster by cell (any number; 55,000 is fine).
    ///   - pins: Pins to letter, nearest first.
    ///   - colour: Whether to add ANSI SGR colour (places dim, pins bright, me bold); the
    ///     characters and layout are the same either way.
    ///   - glyphs: The characters to draw with (``MapGlyphs/ascii`` for a terminal that draws
    ///     box-drawing characters two cells wide).
    /// - Returns: The lines, without newlines.
    public func render(places: [Marker], pins: [Marker], colour: Bool, glyphs: MapGlyphs = .unicode) -> [String] {
        let clusters = PlaceClusters(places, projection: projection)
        let placed = PinPlacements(pins, projection: projection)
        var lines: [MapLine] = [topEdge(glyphs)]
        lines += interior(clusters: clusters, pins: placed, glyphs: glyphs)
        lines.append(bottomEdge(glyphs))
        let legend = MapLegend(
            width: width, glyphs: glyphs, radius: radius, centreCell: projection.centreCell,
            places: places, clusters: clusters, pins: pins, placed: placed
        )
        lines += legend.lines()
        return lines.map { $0.text(colour: colour) }
    }

    /// `┌─ N ↑ ───┐`.
    private func topEdge(_ glyphs: MapGlyphs) -> MapLine {
        var line = MapLine()
        line.append(glyphs.topLeft)
        line.append(glyphs.horizontal)
        line.append(" " + glyphs.north + " ")
        let used = 3 + TerminalText.displayWidth(glyphs.north) + 2
        line.append(String(repeating: glyphs.horizontal, count: max(0, width - used)))
        line.append(glyphs.topRight)
        return line
    }

    /// `└─ ├────┤ 500 m ───┘`: the bar's ticks are ``MapScale/barCells`` columns apart.
    private func bottomEdge(_ glyphs: MapGlyphs) -> MapLine {
        var line = MapLine()
        line.append(glyphs.bottomLeft)
        line.append(glyphs.horizontal)
        line.append(" ")
        line.append(glyphs.barLeft)
        line.append(String(repeating: glyphs.barFill, count: scale.barCells - 1))
        line.append(glyphs.barRight)
        let label = " " + scale.barLabel + " "
        line.append(label)
        let used = 4 + scale.barCells + TerminalText.displayWidth(label) + 1
        line.append(String(repeating: glyphs.horizontal, count: max(0, width - used)))
        line.append(glyphs.bottomRight)
        return line
    }

    /// The rows inside the frame: the radius circle, place counts, pins over them, me over all.
    private func interior(clusters: PlaceClusters, pins: PinPlacements, glyphs: MapGlyphs) -> [MapLine] {
        let columns = projection.columns
        var cells = [[(glyph: Character, paint: MapPaint)]](
            repeating: Array(repeating: (" ", .plain), count: columns), count: projection.rows
        )
        for cell in projection.ringCells(radius: radius.metres) {
            cells[cell.row][cell.column] = (glyphs.ring, .ring)
        }
        for cluster in clusters.clusters {
            let glyph: Character = cluster.count <= 9 ? Character(String(cluster.count)) : glyphs.manyPlaces
            cells[cluster.cell.row][cluster.cell.column] = (glyph, .place)
        }
        // Farthest first, so the nearest pin of a cell is the one drawn.
        for pin in pins.shown.reversed() {
            guard let cell = pin.location.cell else { continue }
            cells[cell.row][cell.column] = (pin.letter ?? glyphs.extraPin, .pin)
        }
        let centre = projection.centreCell
        cells[centre.row][centre.column] = (glyphs.me, .me)
        return cells.map { row in
            var line = MapLine()
            line.append(glyphs.vertical)
            for (glyph, paint) in row { line.append(glyph, paint) }
            line.append(glyphs.vertical)
            return line
        }
    }
}
