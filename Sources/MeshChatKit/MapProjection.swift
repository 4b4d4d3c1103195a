import Foundation
import Places

/// Where a position falls on the map: its great-circle distance and bearing from the centre,
/// and its cell when inside the frame.
struct MapLocation: Sendable, Hashable {
    /// Haversine distance from the centre, in metres.
    var distance: Double
    /// Initial great-circle bearing from the centre, degrees clockwise from north.
    var bearing: Double
    /// The cell inside the frame (column from the left, row from the top), or `nil` when off the map.
    var cell: MapCell?
}

/// A cell of the map's interior: column from the left, row from the top, both from 0.
struct MapCell: Sendable, Hashable {
    var column: Int
    var row: Int
}

/// The azimuthal equidistant projection around the map's centre, cut to the frame's interior.
///
/// A position at great-circle distance `d` and initial bearing `θ` from the centre is drawn
/// `d·sin θ / metresPerColumn` columns right of the centre and `d·cos θ / metresPerRow` rows
/// above it, rounded to the nearest cell. Distances and directions from the centre are
/// therefore exact in every direction, at any latitude and across the antimeridian (no longitude
/// arithmetic is done); shapes far from the centre are stretched sideways, which a map of what is
/// around me can afford. At a pole every bearing is taken from the centre's meridian, so at the
/// North Pole "up" is the meridian opposite the centre's longitude.
struct MapProjection: Sendable {
    /// The map's centre.
    let centre: Coordinate
    /// Metres per column and per row.
    let scale: MapScale
    /// Columns and rows of the frame's interior.
    let columns: Int
    let rows: Int

    /// The centre's cell: the middle of the interior (left of the middle when `columns` is even,
    /// above it when `rows` is).
    var centreCell: MapCell { MapCell(column: (columns - 1) / 2, row: (rows - 1) / 2) }

    /// Columns from the centre cell's middle to the nearer inner edge of the frame, left or right.
    static func halfColumns(_ columns: Int) -> Double { Double((columns - 1) / 2) + 0.5 }
    /// Rows from the centre cell's middle to the nearer inner edge of the frame, top or bottom.
    static func halfRows(_ rows: Int) -> Double { Double((rows - 1) / 2) + 0.5 }

    /// Where a position falls.
    /// - Parameter coordinate: The position (an invalid one gives `nil`).
    /// - Returns: Its distance, bearing and cell, or `nil` when the coordinate is not valid.
    func locate(_ coordinate: Coordinate) -> MapLocation? {
        guard coordinate.isValid else { return nil }
        let distance = Geodesy.distance(from: centre, to: coordinate)
        let bearing = Geodesy.bearing(from: centre, to: coordinate)
        let radians = bearing * .pi / 180
        let right = Self.nearestCell(distance * sin(radians) / scale.metresPerColumn)
        let down = Self.nearestCell(-distance * cos(radians) / scale.metresPerRow)
        let centre = centreCell
        let column = Double(centre.column) + right
        let row = Double(centre.row) + down
        guard column >= 0, column < Double(columns), row >= 0, row < Double(rows) else {
            return MapLocation(distance: distance, bearing: bearing, cell: nil)
        }
        return MapLocation(distance: distance, bearing: bearing, cell: MapCell(column: Int(column), row: Int(row)))
    }

    /// The cells a circle of `radius` metres around the centre passes through, for drawing it.
    /// - Parameter radius: The circle's radius in metres.
    /// - Returns: Distinct cells inside the frame.
    func ringCells(radius: Double) -> Set<MapCell> {
        let centre = centreCell
        let steps = 8 * (columns + rows)
        var cells = Set<MapCell>()
        for step in 0..<steps {
            let angle = 2 * Double.pi * Double(step) / Double(steps)
            let column = centre.column + Int(Self.nearestCell(radius * sin(angle) / scale.metresPerColumn))
            let row = centre.row + Int(Self.nearestCell(-radius * cos(angle) / scale.metresPerRow))
            if column >= 0, column < columns, row >= 0, row < rows {
                cells.insert(MapCell(column: column, row: row))
            }
        }
        return cells
    }

    /// An offset in cells rounded to the nearest whole cell, halves (give or take a millionth of a
    /// cell of rounding error) towards the centre, so that a position at the radius, which may
    /// reach exactly the frame's inner edge, stays inside.
    static func nearestCell(_ offset: Double) -> Double {
        let magnitude = (abs(offset) - 0.5 - 1e-6).rounded(.up)
        return offset < 0 ? -max(0, magnitude) : max(0, magnitude)
    }
}
