import MeshPlaces
import Places

/// Parses the places arguments users type.
enum PlaceArguments {
    /// A distance: a number with a unit `m`, `km` or `mi` (`500m`, `2.5 km`, `3mi`); a bare number is kilometres.
    static func distance(_ text: String) throws(PlacesInputError) -> Distance {
        let trimmed = text.trimmingWhitespace().lowercased()
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        let unit = String(trimmed.dropFirst(digits.count)).trimmingWhitespace()
        guard let value = Double(digits), value.isFinite else {
            throw PlacesInputError("\"\(text.prefix(30))\" is not a distance (e.g. 500m, 2km, 3mi)")
        }
        switch unit {
        case "m": return .metres(value)
        case "km", "": return .kilometres(value)
        case "mi": return .miles(value)
        default: throw PlacesInputError("\"\(text.prefix(30))\" has unit \"\(unit)\"; use m, km or mi")
        }
    }
}
