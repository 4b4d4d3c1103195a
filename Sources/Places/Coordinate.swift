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
/// Distances are great-circle distances and bearings initial great-circle bearings. These are
/// the exact definitions every ``PlaceIndex`` query answers with, bit for bit.
///
/// Both are computed from the positions as unit vectors (x towards 0°E on the equator, z north):
/// the distance is `2R·asin(c/2)` for the straight-line (chord) length `c` between the vectors,
/// which is the haversine formula rearranged (`c/2` is exactly the square root of the haversine
/// term), and the bearing is `atan2` of the destination's east and north components in the
/// start's local frame. Written this way the index computes both from vectors it already holds,
/// without trigonometry per place; the results agree with the textbook haversine and bearing
/// formulas to within rounding (micrometres, and 1e-9 degrees for points a metre apart).
public enum Geodesy {
    /// The mean Earth radius used for every distance, in metres (IUGG R1 = 6,371,008.8 m).
    public static let earthRadius: Double = 6_371_008.8

    /// The great-circle distance between two positions, in metres.
    /// - Parameters:
    ///   - a: The first position.
    ///   - b: The second position.
    /// - Returns: The distance in metres, 0 … π·R.
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double {
        arcLength(chord: chord(unitVector(a), unitVector(b)))
    }

    /// The initial great-circle bearing from one position to another.
    /// - Parameters:
    ///   - a: The start.
    ///   - b: The destination.
    /// - Returns: Degrees clockwise from true north, 0 ..< 360; 0 when the points coincide.
    public static func bearing(from a: Coordinate, to b: Coordinate) -> Double {
        BearingFrame(a).bearing(to: unitVector(b))
    }

    /// A bearing rounded for display to `fractionDigits` decimals, kept in 0 ..< 360: a bearing a
    /// hair west of north (359.97° to one decimal) is shown as 0, never as 360.
    /// - Parameters:
    ///   - bearing: Degrees, 0 ..< 360.
    ///   - fractionDigits: Decimals to keep (0…6).
    /// - Returns: The rounded bearing, 0 ..< 360.
    public static func roundedBearing(_ bearing: Double, fractionDigits: Int) -> Double {
        guard bearing.isFinite else { return 0 }
        let scale = pow(10, Double(min(max(fractionDigits, 0), 6)))
        let rounded = (bearing * scale).rounded() / scale
        return rounded >= 360 || rounded < 0 ? 0 : rounded
    }

    /// The position as a point on the unit sphere (x towards 0°E on the equator, z north).
    @inline(__always)
    static func unitVector(_ c: Coordinate) -> (Double, Double, Double) {
        let phi = c.latitude * .pi / 180
        let lambda = c.longitude * .pi / 180
        let cp = cos(phi)
        return (cp * cos(lambda), cp * sin(lambda), sin(phi))
    }

    /// The straight-line distance between two unit vectors.
    @inline(__always)
    static func chord(_ a: (Double, Double, Double), _ b: (Double, Double, Double)) -> Double {
        let dx = b.0 - a.0, dy = b.1 - a.1, dz = b.2 - a.2
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// The great-circle distance in metres for a straight-line (chord) distance on the unit sphere.
    @inline(__always)
    static func arcLength(chord: Double) -> Double {
        2 * earthRadius * asin(min(1, max(0, chord) / 2))
    }

    /// The chord on the unit sphere whose great-circle length is `metres` (2 beyond half the circumference).
    static func chord(forArcLength metres: Double) -> Double {
        let half = metres / (2 * earthRadius)
        return half >= .pi / 2 ? 2 : 2 * sin(max(0, half))
    }
}

/// A start point's local frame for bearings: its sine and cosine of latitude and longitude.
struct BearingFrame {
    let unit: (Double, Double, Double)
    private let sinLat: Double, cosLat: Double, sinLon: Double, cosLon: Double

    init(_ c: Coordinate) {
        let phi = c.latitude * .pi / 180
        let lambda = c.longitude * .pi / 180
        sinLat = sin(phi)
        cosLat = cos(phi)
        sinLon = sin(lambda)
        cosLon = cos(lambda)
        unit = (cosLat * cosLon, cosLat * sinLon, sinLat)
    }

    /// The initial bearing to the point with unit vector `p`, degrees 0 ..< 360; 0 when `p` is the start itself.
    @inline(__always)
    func bearing(to p: (Double, Double, Double)) -> Double {
        if p.0 == unit.0 && p.1 == unit.1 && p.2 == unit.2 { return 0 }
        // East and north components of p in the start's tangent frame (sin Δλ·cos φ2 and
        // cos φ1·sin φ2 − sin φ1·cos φ2·cos Δλ, expanded with p's components).
        let east = p.1 * cosLon - p.0 * sinLon
        let north = cosLat * p.2 - sinLat * (p.0 * cosLon + p.1 * sinLon)
        // Points closer than about 6 µm (the rounding noise of one position written two ways,
        // such as longitudes 180 and −180) have no direction: 0, as for the same point.
        if east * east + north * north < 1e-24 { return 0 }
        let degrees = atan2(east, north) * 180 / .pi
        let normalised = degrees < 0 ? degrees + 360 : degrees
        return normalised >= 360 ? 0 : normalised
    }
}
