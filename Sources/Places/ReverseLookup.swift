/// A position described by the nearest place: "2.1 km NE of Clapham".
///
/// Made by ``PlaceIndex/describe(_:within:)``. ``bearing`` is measured *from the place to the
/// position*, the way people say where something is relative to a landmark, so in
/// "2.1 km NE of Clapham" the position lies northeast of Clapham.
///
/// This type is a value and is thread-safe.
public struct ReverseLookup: Sendable, Hashable {
    /// The position described.
    public var coordinate: Coordinate
    /// The nearest place's position in the array the index was built from.
    public var index: Int
    /// The nearest place (ties broken by name, then index, as every query does).
    public var place: Place
    /// The great-circle distance between the place and the position.
    public var distance: Distance
    /// The initial bearing from the place to the position, degrees clockwise from true north,
    /// 0 ..< 360 (0 when they coincide).
    public var bearing: Double

    /// Creates a description.
    /// - Parameters:
    ///   - coordinate: The position described.
    ///   - index: The place's position in the index's input.
    ///   - place: The place.
    ///   - distance: The distance between them.
    ///   - bearing: The bearing from the place to the position, in degrees.
    public init(coordinate: Coordinate, index: Int, place: Place, distance: Distance, bearing: Double) {
        self.coordinate = coordinate
        self.index = index
        self.place = place
        self.distance = distance
        self.bearing = bearing
    }

    /// The compass point of ``bearing``.
    /// - Parameter divisions: Four, eight (the default) or sixteen points.
    /// - Returns: The point, e.g. ``CompassPoint/northeast``.
    public func compassPoint(_ divisions: CompassPoint.Divisions = .eight) -> CompassPoint {
        CompassPoint(bearing: bearing, divisions: divisions)
    }

    /// The description for people: `2.1 km NE of Clapham`, or `at Clapham` when the distance
    /// is written as `0 m` (or `0 ft`).
    ///
    /// The place's ``Place/displayName`` is used; a place without a name is written as its
    /// coordinate.
    /// - Parameters:
    ///   - units: How the distance is written (``Distance/formatted(units:)``).
    ///   - divisions: How finely the bearing is named (``CompassPoint``).
    /// - Returns: The text.
    public func formatted(units: Distance.Units = .metric, divisions: CompassPoint.Divisions = .eight) -> String {
        let display = place.displayName
        let name = display.isEmpty ? place.coordinate.description : display
        let text = distance.formatted(units: units)
        if text == "0 m" || text == "0 ft" { return "at \(name)" }
        return "\(text) \(compassPoint(divisions).abbreviation) of \(name)"
    }
}

extension PlaceIndex {
    /// Describes a position by the place nearest to it: distance and bearing from that place.
    ///
    /// The nearest place is the first result of ``nearest(to:k:)`` (ties by name, then index).
    /// - Parameters:
    ///   - coordinate: The position to describe.
    ///   - maximum: How far the place may be; nil for no limit.
    /// - Returns: The description; nil when the index is empty, `coordinate` is not valid, or
    ///   no place is within `maximum`.
    public func describe(_ coordinate: Coordinate, within maximum: Distance? = nil) -> ReverseLookup? {
        guard let nearest = nearest(to: coordinate, k: 1).first else { return nil }
        if let maximum, !(nearest.distance <= maximum) { return nil }
        return ReverseLookup(
            coordinate: coordinate, index: nearest.index, place: nearest.place, distance: nearest.distance,
            bearing: Geodesy.bearing(from: nearest.place.coordinate, to: coordinate))
    }
}
