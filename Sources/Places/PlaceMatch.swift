/// A place found by a ``PlaceIndex`` query, measured from the query's reference point.
///
/// This type is a value and is thread-safe.
public struct PlaceMatch: Sendable, Hashable {
    /// The place's position in the array the index was built from.
    public var index: Int
    /// The place.
    public var place: Place
    /// The haversine great-circle distance from the reference point.
    public var distance: Distance
    /// The initial great-circle bearing from the reference point, degrees clockwise from
    /// true north, 0 ..< 360 (0 when the points coincide).
    public var bearing: Double

    /// Creates a match.
    /// - Parameters:
    ///   - index: The place's position in the index's input.
    ///   - place: The place.
    ///   - distance: The distance from the reference point.
    ///   - bearing: The bearing from the reference point in degrees.
    public init(index: Int, place: Place, distance: Distance, bearing: Double) {
        self.index = index
        self.place = place
        self.distance = distance
        self.bearing = bearing
    }

    /// The order every query returns: by distance, then name, then index.
    /// - Parameters:
    ///   - lhs: A match.
    ///   - rhs: Another match.
    /// - Returns: Whether `lhs` comes first.
    public static func precedes(_ lhs: PlaceMatch, _ rhs: PlaceMatch) -> Bool {
        if lhs.distance.metres != rhs.distance.metres { return lhs.distance.metres < rhs.distance.metres }
        if lhs.place.name != rhs.place.name { return lhs.place.name < rhs.place.name }
        return lhs.index < rhs.index
    }
}

/// A place found by a name search without a location.
///
/// This type is a value and is thread-safe.
public struct NameMatch: Sendable, Hashable {
    /// How the query matched the name.
    public enum Kind: Sendable, Hashable, Comparable {
        /// The folded name starts with the folded query.
        case prefix
        /// The folded query occurs in the folded name, but not at its start.
        case substring
    }

    /// The place's position in the array the index was built from.
    public var index: Int
    /// The place.
    public var place: Place
    /// How the query matched.
    public var kind: Kind

    /// Creates a name match.
    /// - Parameters:
    ///   - index: The place's position in the index's input.
    ///   - place: The place.
    ///   - kind: How the query matched.
    public init(index: Int, place: Place, kind: Kind) {
        self.index = index
        self.place = place
        self.kind = kind
    }
}
