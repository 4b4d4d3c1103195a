/// One record that was skipped while loading, and why.
///
/// This type is a value and is thread-safe.
public struct LoadProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 1-based line the record starts on (a CSV row, or the `{` of a GeoJSON feature);
    /// the loaders always set it.
    public var line: Int?
    /// The 0-based index in the FeatureCollection's `features` array (GeoJSON only).
    public var feature: Int?
    /// What was wrong, naming the field and value.
    public var message: String

    /// Creates a problem.
    /// - Parameters:
    ///   - line: The 1-based line, if known.
    ///   - feature: The 0-based feature index, for GeoJSON.
    ///   - message: What was wrong.
    public init(line: Int? = nil, feature: Int? = nil, message: String) {
        self.line = line
        self.feature = feature
        self.message = message
    }

    /// "line 7: latitude \"abc\" is not a number" or "line 12, feature 11: …".
    public var description: String {
        var parts: [String] = []
        if let line { parts.append("line \(line)") }
        if let feature { parts.append("feature \(feature)") }
        return parts.isEmpty ? message : parts.joined(separator: ", ") + ": " + message
    }
}

/// The places a loader read, and the records it skipped.
///
/// This type is a value and is thread-safe.
public struct LoadReport: Sendable {
    /// The places, in source order.
    public var places: [Place]
    /// The skipped records, in source order.
    public var problems: [LoadProblem]

    /// Creates a report.
    /// - Parameters:
    ///   - places: The places read.
    ///   - problems: The records skipped.
    public init(places: [Place], problems: [LoadProblem]) {
        self.places = places
        self.problems = problems
    }
}
