/// A length on the Earth's surface, given in metres, kilometres or miles.
///
/// This type is a value and is thread-safe.
public struct Distance: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The length in metres.
    public var metres: Double

    /// Creates a distance from metres.
    /// - Parameter metres: The length in metres.
    public init(metres: Double) { self.metres = metres }

    /// A distance of `value` metres.
    /// - Parameter value: Metres.
    /// - Returns: The distance.
    public static func metres(_ value: Double) -> Distance { Distance(metres: value) }

    /// A distance of `value` kilometres.
    /// - Parameter value: Kilometres.
    /// - Returns: The distance.
    public static func kilometres(_ value: Double) -> Distance { Distance(metres: value * 1000) }

    /// A distance of `value` international miles (1,609.344 m).
    /// - Parameter value: Miles.
    /// - Returns: The distance.
    public static func miles(_ value: Double) -> Distance { Distance(metres: value * 1609.344) }

    /// The length in kilometres.
    public var kilometres: Double { metres / 1000 }
    /// The length in international miles.
    public var miles: Double { metres / 1609.344 }

    /// Orders by length.
    public static func < (lhs: Distance, rhs: Distance) -> Bool { lhs.metres < rhs.metres }

    /// "1234.5 m".
    public var description: String { "\(metres) m" }
}
