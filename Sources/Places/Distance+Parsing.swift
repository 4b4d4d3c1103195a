extension Distance {
    /// Reads a distance a person typed: a number, optional spaces, and a unit.
    ///
    /// Units (case-insensitive): `m`, `metre(s)`, `meter(s)`; `km`, `kilometre(s)`,
    /// `kilometer(s)`; `mi`, `mile(s)` (international miles, 1,609.344 m); `ft`, `foot`, `feet`
    /// (0.3048 m). **A bare number is metres**, the unit distances are measured in everywhere
    /// else (``metres``, the JSON output of `meshchat places query`). The number is decimal
    /// digits with an optional fraction (`5`, `2.5`, `.5`); signs and exponents are not
    /// accepted. Examples: `5mi`, `5 mi`, `500m`, `2.5km`, `5`.
    /// - Parameter text: The text.
    /// - Throws: ``PlacesError`` with code ``PlacesError/Code/badDistance`` naming what was
    ///   wrong: empty, no number, a negative number, an unknown unit, or too large.
    public init(parsing text: String) throws(PlacesError) {
        let trimmed = Substring(text).trimmingSpaces()
        let hint = "; write a number and a unit: m, km, mi or ft (e.g. 500m, 2.5km, 5mi; a bare number is metres)"
        guard !trimmed.isEmpty else { throw .badDistance("the distance is empty\(hint)") }
        if trimmed.first == "-" { throw .badDistance("distance \"\(text)\" is negative\(hint)") }
        let numberEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? trimmed.endIndex
        let number = trimmed[..<numberEnd]
        let digits = number.filter { $0 != "." }
        guard !digits.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number) else {
            throw .badDistance("distance \"\(text)\" does not start with a number\(hint)")
        }
        guard value.isFinite else { throw .badDistance("distance \"\(text)\" is too large\(hint)") }
        let unit = trimmed[numberEnd...].trimmingSpaces().lowercased()
        switch unit {
        case "", "m", "metre", "metres", "meter", "meters": self.init(metres: value)
        case "km", "kilometre", "kilometres", "kilometer", "kilometers": self.init(metres: value * 1000)
        case "mi", "mile", "miles": self.init(metres: value * 1609.344)
        case "ft", "foot", "feet": self.init(metres: value * 0.3048)
        default:
            throw .badDistance("distance \"\(text)\" has unknown unit \"\(trimmed[numberEnd...].trimmingSpaces())\"\(hint)")
        }
    }
}
