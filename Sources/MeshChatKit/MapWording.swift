import Foundation
import Places

/// How the map writes distances, directions and positions in words, for the legend under the
/// picture and for ``MapView/describe(places:pins:)``. Pure.
public enum MapWording {
    /// A distance for people: "0 m" … "999 m", then "1 km", "1.2 km" … "9.9 km", then "10 km", "35 km".
    ///
    /// Metres are rounded to the metre, kilometres below 10 to a tenth (a whole number is written
    /// without ".0", so round scale-bar lengths read "1 km", "2 km"), larger ones to the kilometre. Lengths under one metre that are not zero (scale bars on tiny maps) keep up to
    /// three significant digits ("0.5 m").
    /// - Parameter distance: The distance (negative or not finite gives "? m").
    /// - Returns: The text.
    public static func text(for distance: Distance) -> String {
        let metres = distance.metres
        guard metres.isFinite, metres >= 0 else { return "? m" }
        if metres > 0 && metres < 0.95 { return String(format: "%.3g m", metres) }
        if metres < 999.5 { return "\(Int(metres.rounded())) m" }
        let km = metres / 1000
        if km < 9.95 {
            let tenths = String(format: "%.1f", km)
            return (tenths.hasSuffix(".0") ? String(tenths.dropLast(2)) : tenths) + " km"
        }
        return "\(Int(km.rounded())) km"
    }

    /// The eight compass points, clockwise from north.
    public static let compassPoints = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]

    /// The compass point nearest a bearing: "N", "NE", "E", "SE", "S", "SW", "W" or "NW".
    ///
    /// Each point covers 45°, centred on it: N is 337.5° ..< 22.5°.
    /// - Parameter bearing: Degrees clockwise from true north (any finite value; wrapped).
    /// - Returns: The point ("N" for a non-finite bearing).
    public static func compassPoint(forBearing bearing: Double) -> String {
        guard bearing.isFinite else { return "N" }
        return CompassPoint(bearing: bearing).abbreviation
    }

    /// Where something is from me: "120 m NE", or "here" when it is less than half a metre away
    /// (a direction would be noise).
    /// - Parameters:
    ///   - distance: How far, in metres.
    ///   - bearing: Initial great-circle bearing in degrees.
    /// - Returns: The text.
    public static func whereabouts(distance: Double, bearing: Double) -> String {
        if distance < 0.5 { return "here" }
        return "\(text(for: Distance(metres: distance))) \(compassPoint(forBearing: bearing))"
    }

    /// A position in words: "51.50740 N, 0.12780 W" (five decimals, about a metre).
    /// - Parameter coordinate: The position.
    /// - Returns: The text.
    public static func text(for coordinate: Coordinate) -> String {
        let lat = coordinate.latitude
        let lon = coordinate.longitude
        return String(format: "%.5f", abs(lat)) + (lat < 0 ? " S, " : " N, ")
            + String(format: "%.5f", abs(lon)) + (lon < 0 ? " W" : " E")
    }
}
