import Places

extension MapView {
    /// The map in plain text, for when stdout is not a terminal: a script or a screen reader.
    ///
    /// The first line describes the map: "map: 1 km around 51.50740 N, 0.12780 W; 14 of 20
    /// places in 6 cells, 1 of 2 pins; a cell is 59 m wide and 118 m tall". Then one line per
    /// cluster and per pin, nearest first (a pin before a cluster at the same distance):
    ///
    /// ```
    /// pin A: 120 m NE, Café Nero
    /// 3 places: 240 m N, nearest Pret A Manger
    /// 1 place: 300 m S, Tate Modern
    /// pin: 35 km NE, off the map, Big Ben
    /// ```
    ///
    /// Clusters are the picture's cells at this map's scale, so the lines match the picture:
    /// a cluster's distance and compass point are those of its place nearest me. Places off the
    /// map are left out (the header counts them); every pin is listed, with "off the map" when
    /// it is, and with its letter when the picture gives it one. Labels are sanitised (no control
    /// or bidi characters) but never cut, and come last on their line.
    /// - Parameters:
    ///   - places: The places, as for ``render(places:pins:colour:glyphs:)``.
    ///   - pins: The pins.
    /// - Returns: The lines, without newlines.
    public func describe(places: [Marker], pins: [Marker]) -> [String] {
        let clusters = PlaceClusters(places, projection: projection)
        let placed = PinPlacements(pins, projection: projection)
        let header = "map: \(MapWording.text(for: radius)) around \(MapWording.text(for: centre)); "
            + "\(clusters.shown) of \(places.count) places in \(clusters.clusters.count) "
            + "\(clusters.clusters.count == 1 ? "cell" : "cells"), \(placed.shown.count) of \(pins.count) pins; "
            + "a cell is \(MapWording.text(for: Distance(metres: scale.metresPerColumn))) wide "
            + "and \(MapWording.text(for: Distance(metres: scale.metresPerRow))) tall"

        var entries: [(distance: Double, order: Int, text: String)] = []
        for (order, pin) in placed.pins.enumerated() {
            let name = Self.displayLabel(pins[pin.index].label)
            let whereabouts = MapWording.whereabouts(distance: pin.location.distance, bearing: pin.location.bearing)
            let what = pin.letter.map { "pin \($0)" } ?? "pin"
            let off = pin.location.cell == nil ? ", off the map" : ""
            entries.append((pin.location.distance, order, "\(what): \(whereabouts)\(off), \(name)"))
        }
        for (order, cluster) in clusters.clusters.enumerated() {
            let name = Self.displayLabel(places[cluster.nearest].label)
            let whereabouts = MapWording.whereabouts(distance: cluster.location.distance, bearing: cluster.location.bearing)
            let text = cluster.count == 1
                ? "1 place: \(whereabouts), \(name)"
                : "\(cluster.count) places: \(whereabouts), nearest \(name)"
            entries.append((cluster.location.distance, placed.pins.count + order, text))
        }
        entries.sort { ($0.distance, $0.order) < ($1.distance, $1.order) }
        return [header] + entries.map(\.text)
    }

    /// A label sanitised for one line, or "(unnamed)".
    static func displayLabel(_ label: String) -> String {
        let text = TerminalText.sanitised(label)
        return text.isEmpty ? "(unnamed)" : text
    }
}
