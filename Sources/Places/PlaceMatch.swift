/// A place found by a ``PlaceIndex`` query, measured from the query's reference point.
///
/// A match refers to its place inside the index's place array instead of holding a copy, so
/// building thousands of matches touches no place's storage; ``place`` reads it on access.
/// ``bearing`` is likewise computed when it is first read (exactly
/// ``Geodesy/bearing(from:to:)`` from the reference point), so a query that returns hundreds
/// of matches does not pay for bearings nobody looks at.
///
/// This type is a value and is thread-safe.
public struct PlaceMatch: Sendable, Hashable {
    /// The place's position in the array the index was built from.
    public var index: Int
    /// The great-circle distance from the reference point (``Geodesy/distance(from:to:)``).
    public var distance: Distance
    private var source: PlaceReference
    private var fixedBearing: Double?

    /// The place.
    public var place: Place {
        get { source.place }
        set {
            fixedBearing = bearing
            source = PlaceReference(newValue)
        }
    }

    /// The initial great-circle bearing from the reference point, degrees clockwise from
    /// true north, 0 ..< 360 (0 when the points coincide).
    public var bearing: Double {
        get { fixedBearing ?? source.bearing }
        set { fixedBearing = newValue }
    }

    /// Creates a match.
    /// - Parameters:
    ///   - index: The place's position in the index's input.
    ///   - place: The place.
    ///   - distance: The distance from the reference point.
    ///   - bearing: The bearing from the reference point in degrees.
    public init(index: Int, place: Place, distance: Distance, bearing: Double) {
        self.index = index
        source = PlaceReference(place)
        self.distance = distance
        fixedBearing = bearing
    }

    /// A match for `source.places[index]`, its bearing computed from `source.origin` when read.
    init(index: Int, in source: MatchSource, distance: Distance) {
        self.index = index
        self.source = PlaceReference(source, index)
        self.distance = distance
        fixedBearing = nil
    }

    /// The order every query returns: by distance, then name, then index.
    /// - Parameters:
    ///   - lhs: A match.
    ///   - rhs: Another match.
    /// - Returns: Whether `lhs` comes first.
    public static func precedes(_ lhs: PlaceMatch, _ rhs: PlaceMatch) -> Bool {
        if lhs.distance.metres != rhs.distance.metres { return lhs.distance.metres < rhs.distance.metres }
        let ln = lhs.place.name, rn = rhs.place.name
        if ln != rn { return ln < rn }
        return lhs.index < rhs.index
    }

    /// Equal when index, place, distance and bearing are.
    public static func == (lhs: PlaceMatch, rhs: PlaceMatch) -> Bool {
        lhs.index == rhs.index && lhs.distance == rhs.distance && lhs.bearing == rhs.bearing && lhs.place == rhs.place
    }

    /// Hashes index, place, distance and bearing.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(distance)
        hasher.combine(bearing)
        hasher.combine(place)
    }
}

/// A place found by a name search without a location.
///
/// Like ``PlaceMatch``, it refers to its place inside the index's place array.
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
    /// How the query matched.
    public var kind: Kind
    private var source: PlaceReference

    /// The place.
    public var place: Place {
        get { source.place }
        set { source = PlaceReference(newValue) }
    }

    /// Creates a name match.
    /// - Parameters:
    ///   - index: The place's position in the index's input.
    ///   - place: The place.
    ///   - kind: How the query matched.
    public init(index: Int, place: Place, kind: Kind) {
        self.index = index
        source = PlaceReference(place)
        self.kind = kind
    }

    /// A match for `source.places[index]`.
    init(index: Int, in source: MatchSource, kind: Kind) {
        self.index = index
        self.source = PlaceReference(source, index)
        self.kind = kind
    }

    /// Equal when index, place and kind are.
    public static func == (lhs: NameMatch, rhs: NameMatch) -> Bool {
        lhs.index == rhs.index && lhs.kind == rhs.kind && lhs.place == rhs.place
    }

    /// Hashes index, place and kind.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(kind)
        hasher.combine(place)
    }
}

/// What the matches of one query share: the index's places and the query's reference point.
final class MatchSource: Sendable {
    let places: [Place]
    let origin: Coordinate?

    init(_ places: [Place], origin: Coordinate?) {
        self.places = places
        self.origin = origin
    }
}

/// A place held as a position in a query's shared ``MatchSource`` (one reference count per
/// match, on one shared object, instead of copying the place's storage).
struct PlaceReference: Sendable {
    private let source: MatchSource
    private let position: Int

    init(_ source: MatchSource, _ position: Int) {
        self.source = source
        self.position = position
    }

    init(_ place: Place) {
        self.init(MatchSource([place], origin: nil), 0)
    }

    var place: Place { source.places[position] }

    /// The bearing from the query's reference point (0 without one).
    var bearing: Double {
        guard let origin = source.origin else { return 0 }
        return Geodesy.bearing(from: origin, to: place.coordinate)
    }
}
