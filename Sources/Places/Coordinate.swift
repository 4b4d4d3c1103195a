import Foundation

/// A WGS84 position in degrees.
///
/// This type is a value and is thread-safe.
public struct Coordinate: Sendable, Hashable, CustomStringConvertible {
    /// Latitude in degrees, −90…90 (north positive).
    public var latitude: Double
    /// Longitude in degrees, −180…180 (east positive).
    public var longitude: Double

    /// Creates a coordinate; no range check (see ``isValid``).
    /// - Parameters:
    ///   - latitude: Degrees north.
    ///   - longitude: Degrees east.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both values are finite and inside −90…90 and −180…180.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// "51.37460,-0.09510" (latitude first).
    public var description: String {
        "\(latitude),\(longitude)"
    }
}

/// Great-circle geometry on a sphere of radius ``Geodesy/earthRadius``.
///
/// Distances are haversine distances; bearings are initial great-circle bearings. These are
/// the exact definitions every ``PlaceIndex`` query answers with.
public enum Geodesy {
    /// The mean Earth radius used for every distance, in metres (IUGG R1 = 6,371,008.8 m).
    public static let earthRadius: Double = 6_371_008.8

    /// The haversine great-circle distance between two positions, in metres.
    /// - Parameters:
    ///   - a: The first position.
    ///   - b: The second position.
    /// - Returns: The distance in metres, 0 … π·R.
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180
        let phi2 = b.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let s1 = sin(dPhi / 2)
        let s2 = sin(dLambda / 2)
        let h = s1 * s1 + cos(phi1) * cos(phi2) * s2 * s2
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// The initial great-circle bearing from one position to another.
    /// - Parameters:
    ///   - a: The start.
    ///   - b: The destination.
    /// - Returns: Degrees clockwise from true north, 0 ..< 360; 0 when the points coincide.
    public static func bearing(from a: Coordinate, to b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180
        let phi2 = b.latitude * .pi / 180
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        if x == 0 && y == 0 { return 0 }
        let degrees = atan2(y, x) * 180 / .pi
        let normalised = degrees < 0 ? degrees + 360 : degrees
        return normalised >= 360 ? 0 : normalised
    }

    /// The position as a point on the unit sphere (x towards 0°E on the equator, z north).
    static func unitVector(_ c: Coordinate) -> (Double, Double, Double) {
        let phi = c.latitude * .pi / 180
        let lambda = c.longitude * .pi / 180
        let cp = cos(phi)
        return (cp * cos(lambda), cp * sin(lambda), sin(phi))
    }

    /// The great-circle distance in metres for a straight-line (chord) distance on the unit sphere.
    static func arcLength(chord: Double) -> Double {
        2 * earthRadius * asin(min(1, max(0, chord) / 2))
    }
}
