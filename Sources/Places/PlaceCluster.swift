/// A cell of a regular latitude/longitude grid, the unit of ``PlaceIndex/clusters(cellDegrees:in:)``.
///
/// The grid has square cells of ``size`` degrees. Row 0 starts at the south pole (−90°) and
/// column 0 at the antimeridian (−180°): a position is in row `⌊(latitude + 90) / size⌋` and
/// column `⌊(longitude + 180) / size⌋`, except that latitude 90 and longitude 180 fall in the
/// last row and column. When `size` does not divide 180 or 360 the last row or column is cut
/// short at the pole or at 180°.
///
/// This type is a value and is thread-safe.
public struct GridCell: Sendable, Hashable {
    /// The row, 0 for the southernmost.
    public var row: Int
    /// The column, 0 for the westernmost (starting at −180°).
    public var column: Int
    /// The cell size in degrees of latitude and of longitude.
    public var size: Double

    /// Creates a cell from its row and column.
    /// - Parameters:
    ///   - row: The row, 0 at the south pole.
    ///   - column: The column, 0 at −180°.
    ///   - size: The cell size in degrees.
    public init(row: Int, column: Int, size: Double) {
        self.row = row
        self.column = column
        self.size = size
    }

    /// The cell holding a position.
    /// - Parameters:
    ///   - coordinate: A valid position.
    ///   - size: The cell size in degrees, 0.000001 … 360 (values outside are clamped; NaN is 360).
    public init(containing coordinate: Coordinate, size: Double) {
        let size = Self.clampedSize(size)
        let rows = Self.rows(size), columns = Self.columns(size)
        row = Self.slot((coordinate.latitude + 90) / size, count: rows)
        column = Self.slot((coordinate.longitude + 180) / size, count: columns)
        self.size = size
    }

    /// The cell's edges (inclusive of the grid's outer edges; a position on a shared edge
    /// belongs to the cell north or east of it).
    public var bounds: BoundingBox {
        let south = -90 + Double(row) * size, west = -180 + Double(column) * size
        return BoundingBox(south: south, west: west, north: Swift.min(90, south + size), east: Swift.min(180, west + size))
    }

    /// Sizes accepted, in degrees: a tenth of a metre to the whole globe.
    static func clampedSize(_ size: Double) -> Double {
        size.isNaN ? 360 : Swift.min(360, Swift.max(0.000_001, size))
    }

    static func rows(_ size: Double) -> Int { Swift.max(1, Int((180 / size).rounded(.up))) }
    static func columns(_ size: Double) -> Int { Swift.max(1, Int((360 / size).rounded(.up))) }

    /// `⌊value⌋` clamped to `0 ..< count`.
    @inline(__always)
    static func slot(_ value: Double, count: Int) -> Int {
        guard value > 0 else { return 0 }
        let floor = value.rounded(.down)
        return floor >= Double(count) ? count - 1 : Int(floor)
    }
}

/// Places that fall in one grid cell: how many, their centroid and one of them to show.
///
/// This type is a value and is thread-safe.
public struct PlaceCluster: Sendable, Hashable {
    /// The grid cell.
    public var cell: GridCell
    /// How many places are in the cell (inside the query's box, when one was given).
    public var count: Int
    /// The mean latitude and mean longitude of those places (summed in index order). A cell
    /// never crosses the antimeridian, so the mean lies in the cell.
    public var centroid: Coordinate
    /// The index of the representative: the place nearest the centroid (ties by name, then index).
    public var representativeIndex: Int
    /// The representative place.
    public var representative: Place

    /// Creates a cluster.
    /// - Parameters:
    ///   - cell: The grid cell.
    ///   - count: The number of places.
    ///   - centroid: Their mean latitude and longitude.
    ///   - representativeIndex: The representative's index in the index's input.
    ///   - representative: The representative place.
    public init(cell: GridCell, count: Int, centroid: Coordinate, representativeIndex: Int, representative: Place) {
        self.cell = cell
        self.count = count
        self.centroid = centroid
        self.representativeIndex = representativeIndex
        self.representative = representative
    }
}
