/// A latitude/longitude box, possibly crossing the antimeridian.
///
/// The box is `south ≤ latitude ≤ north` and, when `west ≤ east`, `west ≤ longitude ≤ east`;
/// when `west > east` it crosses the antimeridian (180°): `longitude ≥ west` or
/// `longitude ≤ east`. Edges are inclusive. Two facts of the sphere hold as well: longitudes
/// 180 and −180 are one meridian (a place stored at either is in a box that has either as an
/// edge), and a pole is every longitude at once (a place at latitude ±90, whatever longitude it
/// is stored with, is in every box whose latitude range reaches that pole).
///
/// This type is a value and is thread-safe.
public struct BoundingBox: Sendable, Hashable, CustomStringConvertible {
    /// The southern edge in degrees.
    public var south: Double
    /// The western edge in degrees.
    public var west: Double
    /// The northern edge in degrees.
    public var north: Double
    /// The eastern edge in degrees (less than ``west`` when the box crosses the antimeridian).
    public var east: Double

    /// Creates a box; no range check (see ``isValid``).
    /// - Parameters:
    ///   - south: The southern edge in degrees.
    ///   - west: The western edge in degrees.
    ///   - north: The northern edge in degrees.
    ///   - east: The eastern edge in degrees; less than `west` for a box across the antimeridian.
    public init(south: Double, west: Double, north: Double, east: Double) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// The whole globe: −90…90, −180…180.
    public static let world = BoundingBox(south: -90, west: -180, north: 90, east: 180)

    /// Whether the box crosses the antimeridian (`west > east`).
    public var crossesAntimeridian: Bool { west > east }

    /// Whether every edge is finite and in range and `south ≤ north`.
    public var isValid: Bool {
        Coordinate(latitude: south, longitude: west).isValid && Coordinate(latitude: north, longitude: east).isValid && south <= north
    }

    /// Whether a position is inside the box (edges included), antimeridian-aware.
    /// - Parameter coordinate: The position.
    /// - Returns: Whether it is inside; false for a NaN coordinate.
    public func contains(_ coordinate: Coordinate) -> Bool {
        let lat = coordinate.latitude, lon = coordinate.longitude
        guard lat >= south && lat <= north else { return false }
        if abs(lat) == 90 { return true }  // a pole is at every longitude
        if containsLongitude(lon) { return true }
        // 180 and −180 are one meridian.
        return (lon == 180 && containsLongitude(-180)) || (lon == -180 && containsLongitude(180))
    }

    /// Whether a longitude is in the box's longitude range, as written (no ±180 equivalence).
    func containsLongitude(_ lon: Double) -> Bool {
        west <= east ? (lon >= west && lon <= east) : (lon >= west || lon <= east)
    }

    /// The midpoint in latitude and in longitude (going east from ``west`` to ``east``).
    public var centre: Coordinate {
        var lon = west <= east ? (west + east) / 2 : (west + east + 360) / 2
        if lon > 180 { lon -= 360 }
        return Coordinate(latitude: (south + north) / 2, longitude: lon)
    }

    /// "S,W,N,E", the order ``init(parsing:)`` reads.
    public var description: String { "\(south),\(west),\(north),\(east)" }
}

extension BoundingBox {
    /// Reads a box written as `S,W,N,E` (degrees; spaces allowed around the numbers).
    ///
    /// `W > E` is a box across the antimeridian, e.g. `-20,170,-10,-170` around Fiji and Samoa.
    /// - Parameter text: The text, e.g. `51.4,-0.2,51.6,0.1`.
    /// - Throws: ``PlacesError`` with code ``PlacesError/Code/badBox`` naming the part that is
    ///   wrong: not four numbers, a latitude outside −90…90, a longitude outside −180…180, or
    ///   south above north.
    public init(parsing text: String) throws(PlacesError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard parts.count == 4 else {
            throw .badBox("\"\(text)\" is not S,W,N,E: it has \(parts.count) comma-separated part(s), need 4")
        }
        var values: [Double] = []
        for (part, role) in zip(parts, ["south", "west", "north", "east"]) {
            guard let value = Double(part), value.isFinite, !part.isEmpty else {
                throw .badBox("\(role) edge \"\(part)\" in \"\(text)\" is not a number")
            }
            values.append(value)
        }
        let (s, w, n, e) = (values[0], values[1], values[2], values[3])
        for (value, role) in [(s, "south"), (n, "north")] where abs(value) > 90 {
            throw .badBox("\(role) edge \(value) in \"\(text)\" is outside -90...90")
        }
        for (value, role) in [(w, "west"), (e, "east")] where abs(value) > 180 {
            throw .badBox("\(role) edge \(value) in \"\(text)\" is outside -180...180")
        }
        guard s <= n else {
            throw .badBox("south edge \(s) is north of the north edge \(n) in \"\(text)\" (the order is S,W,N,E)")
        }
        self.init(south: s, west: w, north: n, east: e)
    }

    /// The smallest box around a set of positions, or the whole globe for global data.
    ///
    /// Latitude runs from the southernmost to the northernmost position. Longitude is the
    /// shortest arc holding every position: the circle of longitudes minus its largest empty
    /// gap, so the box crosses the antimeridian only when the positions do (a gap through 180°
    /// of the same size as another is preferred). When that arc spans more than 180° the data
    /// is global and the box is ``world``. Invalid coordinates are ignored.
    /// - Parameter coordinates: The positions.
    /// - Returns: The box; nil when there is no valid position.
    public init?(enclosing coordinates: some Sequence<Coordinate>) {
        var south = Double.infinity, north = -Double.infinity
        var longitudes: [Double] = []
        for c in coordinates where c.isValid {
            south = Swift.min(south, c.latitude)
            north = Swift.max(north, c.latitude)
            longitudes.append(c.longitude)
        }
        guard !longitudes.isEmpty else { return nil }
        longitudes.sort()
        // The gap through the antimeridian, from the easternmost round to the westernmost.
        var gap = longitudes[0] + 360 - longitudes[longitudes.count - 1]
        var west = longitudes[0], east = longitudes[longitudes.count - 1]
        for i in 1..<longitudes.count {
            let g = longitudes[i] - longitudes[i - 1]
            if g > gap {
                gap = g
                west = longitudes[i]
                east = longitudes[i - 1]
            }
        }
        if 360 - gap > 180 {
            self = .world
        } else {
            self.init(south: south, west: west, north: north, east: east)
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}
