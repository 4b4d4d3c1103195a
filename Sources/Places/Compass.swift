/// A point of the compass rose, for writing bearings as people do ("2.1 km NE of Clapham").
///
/// This type is a value and is thread-safe.
public enum CompassPoint: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// North, 0°.
    case north
    /// North-northeast, 22.5°.
    case northNortheast
    /// Northeast, 45°.
    case northeast
    /// East-northeast, 67.5°.
    case eastNortheast
    /// East, 90°.
    case east
    /// East-southeast, 112.5°.
    case eastSoutheast
    /// Southeast, 135°.
    case southeast
    /// South-southeast, 157.5°.
    case southSoutheast
    /// South, 180°.
    case south
    /// South-southwest, 202.5°.
    case southSouthwest
    /// Southwest, 225°.
    case southwest
    /// West-southwest, 247.5°.
    case westSouthwest
    /// West, 270°.
    case west
    /// West-northwest, 292.5°.
    case westNorthwest
    /// Northwest, 315°.
    case northwest
    /// North-northwest, 337.5°.
    case northNorthwest

    /// How finely a bearing is divided.
    public enum Divisions: Int, Sendable, Hashable, CaseIterable {
        /// N, E, S, W: sectors of 90°.
        case four = 4
        /// N, NE, E, SE, S, SW, W, NW: sectors of 45°.
        case eight = 8
        /// The eight plus NNE, ENE, …: sectors of 22.5°.
        case sixteen = 16
    }

    /// The point whose sector holds a bearing.
    ///
    /// Each point's sector is centred on its bearing; a bearing exactly on the border between two
    /// sectors belongs to the one clockwise of it (22.5° is NE with eight points). Bearings are
    /// read modulo 360 (−45° is NW); a bearing that is not finite is read as 0° (north).
    /// - Parameters:
    ///   - bearing: Degrees clockwise from true north.
    ///   - divisions: Four, eight (the default) or sixteen points.
    public init(bearing: Double, divisions: Divisions = .eight) {
        guard bearing.isFinite else {
            self = .north
            return
        }
        let sector = 360 / Double(divisions.rawValue)
        var normalised = bearing.truncatingRemainder(dividingBy: 360)
        if normalised < 0 { normalised += 360 }
        let slot = Int(((normalised + sector / 2) / sector).rounded(.down)) % divisions.rawValue
        self = CompassPoint(rawValue: slot * (16 / divisions.rawValue))!
    }

    /// The bearing the point stands for, degrees clockwise from north (NE is 45°).
    public var bearing: Double { Double(rawValue) * 22.5 }

    /// The abbreviation: `N`, `NNE`, `NE`, ….
    public var abbreviation: String {
        ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"][rawValue]
    }

    /// The name in words: `north`, `north-northeast`, `northeast`, ….
    public var name: String {
        ["north", "north-northeast", "northeast", "east-northeast", "east", "east-southeast", "southeast",
         "south-southeast", "south", "south-southwest", "southwest", "west-southwest", "west",
         "west-northwest", "northwest", "north-northwest"][rawValue]
    }

    /// The abbreviation (``abbreviation``).
    public var description: String { abbreviation }
}
