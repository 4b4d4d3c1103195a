/// A named point on the Earth, as read from a place data set.
///
/// `name` is kept exactly as the source wrote it (leading tabs, padding and all), so a data
/// set round-trips; use ``displayName`` to show it. Coordinates are WGS84 degrees.
///
/// This type is a value and is thread-safe.
public struct Place: Sendable, Hashable {
    /// The name exactly as the source wrote it.
    public var name: String
    /// The position in degrees (latitude −90…90, longitude −180…180).
    public var coordinate: Coordinate
    /// Every other field of the source record, by column or property name.
    ///
    /// GeoJSON numbers and booleans are written as their JSON text; nested values as compact JSON.
    public var properties: [String: String]

    /// Creates a place.
    /// - Parameters:
    ///   - name: The name as the source wrote it.
    ///   - coordinate: The position in degrees.
    ///   - properties: Other fields of the record.
    public init(name: String, coordinate: Coordinate, properties: [String: String] = [:]) {
        self.name = name
        self.coordinate = coordinate
        self.properties = properties
    }

    /// The latitude in degrees.
    public var latitude: Double { coordinate.latitude }
    /// The longitude in degrees.
    public var longitude: Double { coordinate.longitude }

    /// The name with leading and trailing whitespace (tabs included) removed and inner runs of
    /// whitespace collapsed to one space, for display.
    public var displayName: String {
        name.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
