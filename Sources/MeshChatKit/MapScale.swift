import Foundation
import Places

/// The scale of a ``MapView``: metres per terminal cell and the scale bar that shows it.
///
/// The scale is chosen so that the bar is *exact*: `barCells` columns are exactly `barLength`,
/// a round length (1, 2 or 5 × 10ⁿ metres). Among bar lengths of a sixth to a third of the map's
/// width, the one giving the largest map (fewest metres per column) is taken while the circle of
/// the map's radius still fits inside the frame, so the circle fills the frame to within about
/// 10 % on a map of ordinary size.
///
/// This type is a value and is thread-safe.
public struct MapScale: Sendable, Hashable {
    /// Ground metres per terminal column (east–west).
    public let metresPerColumn: Double
    /// Ground metres per terminal row (north–south): ``metresPerColumn`` × the cell aspect, so
    /// that a circle on the ground looks round on the screen.
    public let metresPerRow: Double
    /// How many columns the scale bar spans, tick to tick.
    public let barCells: Int
    /// The ground length of the scale bar: a round 1, 2 or 5 × 10ⁿ metres.
    public let barLength: Distance

    /// The scale bar's label: "500 m", "2 km".
    public var barLabel: String { MapWording.text(for: barLength) }

    /// Chooses the scale for a map.
    /// - Parameters:
    ///   - radius: The radius that must fit, in metres (positive).
    ///   - halfColumns: Columns from the centre cell's middle to the frame's inner edge (left or
    ///     right, whichever is nearer).
    ///   - halfRows: Rows from the centre cell's middle to the frame's inner edge.
    ///   - aspect: A cell's height over its width.
    ///   - barCells: The shortest and longest bar allowed, in columns.
    /// - Returns: The scale.
    static func fitting(
        radius: Double, halfColumns: Double, halfRows: Double, aspect: Double, barCells: ClosedRange<Int>
    ) -> MapScale {
        // The smallest metres-per-column for which the circle fits both ways.
        let tightest = max(radius / halfColumns, radius / (halfRows * aspect))
        var best: (metresPerColumn: Double, cells: Int, length: Double)?
        for cells in barCells {
            let length = roundLength(atLeast: tightest * Double(cells))
            let metresPerColumn = length / Double(cells)
            if best == nil || metresPerColumn < best!.metresPerColumn * (1 - 1e-12) {
                best = (metresPerColumn, cells, length)
            }
        }
        let chosen = best!
        return MapScale(
            metresPerColumn: chosen.metresPerColumn,
            metresPerRow: chosen.metresPerColumn * aspect,
            barCells: chosen.cells,
            barLength: Distance(metres: chosen.length)
        )
    }

    /// The smallest length of 1, 2 or 5 × 10ⁿ metres that is at least `metres`.
    /// - Parameter metres: A positive, finite length.
    /// - Returns: The round length.
    static func roundLength(atLeast metres: Double) -> Double {
        var power = pow(10, floor(log10(metres)))
        while true {
            for step in [1.0, 2.0, 5.0] where step * power >= metres * (1 - 1e-12) {
                return step * power
            }
            power *= 10
        }
    }
}
