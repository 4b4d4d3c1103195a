/// A place data set that could not be loaded at all, or user text that could not be read as a
/// distance, coordinate or box.
///
/// Row-level trouble never throws: a bad row becomes a ``LoadProblem`` in the ``LoadReport``
/// and the load goes on. This error is for input that is not place data at all (not JSON,
/// not a FeatureCollection, a CSV without coordinate columns, a broken gzip stream, a file
/// that cannot be read, a file over its ``LoadLimits``) and for text given to ``Distance/init(parsing:)``,
/// ``Coordinate/init(parsing:)`` or ``BoundingBox/init(parsing:)``.
///
/// Equality compares ``code`` only; ``description`` says what failed and where.
public struct PlacesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Hashable {
            case gzip, notJSON, notFeatureCollection, notCSV, noColumns, noPlaces, unreadable, tooLarge, distance, coordinate, box
        }
        private let base: Base

        /// The bytes are gzip-framed but do not inflate.
        public static let badGzip = Code(base: .gzip)
        /// The bytes are not JSON.
        public static let notJSON = Code(base: .notJSON)
        /// The JSON is not a GeoJSON FeatureCollection.
        public static let notFeatureCollection = Code(base: .notFeatureCollection)
        /// The bytes are not text in CSV form (binary, not UTF-8).
        public static let notCSV = Code(base: .notCSV)
        /// The CSV header names no latitude, longitude or name column that was asked for.
        public static let missingColumns = Code(base: .noColumns)
        /// Rows were read but not one of them held a usable place.
        public static let noPlaces = Code(base: .noPlaces)
        /// The file could not be read (missing, a directory, no permission).
        public static let unreadable = Code(base: .unreadable)
        /// The file goes over one of its ``LoadLimits``: a field or record too long, too much text,
        /// too many places or skipped records.
        public static let tooLarge = Code(base: .tooLarge)
        /// Text given as a distance is not one (see ``Distance/init(parsing:)``).
        public static let badDistance = Code(base: .distance)
        /// Text given as a coordinate is not one (see ``Coordinate/init(parsing:)``).
        public static let badCoordinate = Code(base: .coordinate)
        /// Text given as a box is not one (see ``BoundingBox/init(parsing:)``).
        public static let badBox = Code(base: .box)

        /// The code's name.
        public var description: String {
            switch base {
            case .gzip: "badGzip"
            case .notJSON: "notJSON"
            case .notFeatureCollection: "notFeatureCollection"
            case .notCSV: "notCSV"
            case .noColumns: "missingColumns"
            case .noPlaces: "noPlaces"
            case .unreadable: "unreadable"
            case .tooLarge: "tooLarge"
            case .distance: "badDistance"
            case .coordinate: "badCoordinate"
            case .box: "badBox"
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What failed, without the code's name or the place: a sentence ("expected ',' …").
    public let detail: String
    /// The file a load error is about, as the caller named it (`nil` for text that is not a file).
    public private(set) var file: String?
    /// The 1-based line of the file where the problem is, when it has one (a gzip stream has no
    /// lines: its errors give the compressed byte offset in ``detail``).
    public private(set) var line: Int?
    /// The 1-based byte column on ``line``, when known.
    public private(set) var column: Int?

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// What failed, with the value or position involved.
    public var description: String { "\(code): \(message)" }

    /// What failed and where, without the code's name: a sentence to show a user. Load errors
    /// start with `FILE:LINE:COL: ` (as far as each is known: `FILE: ` for an unreadable file or a
    /// broken gzip stream, `FILE:LINE: ` without a column), as compilers write them; text errors
    /// are the sentence alone ("distance \"5 parsecs\" has unknown unit …").
    public var message: String {
        var place = file ?? ""
        if let line {
            place += file == nil ? "line \(line)" : ":\(line)"
            if let column { place += file == nil ? ", column \(column)" : ":\(column)" }
        }
        return place.isEmpty ? detail : "\(place): \(detail)"
    }

    /// The same error at a position in its file (a position already set is kept).
    func at(line: Int, column: Int? = nil) -> PlacesError {
        var copy = self
        if copy.line == nil {
            copy.line = line
            copy.column = column
        }
        return copy
    }

    /// The same error about a file (a file already named is kept).
    func about(file: String) -> PlacesError {
        var copy = self
        if copy.file == nil { copy.file = file }
        return copy
    }

    /// Compares ``code`` only.
    public static func == (lhs: PlacesError, rhs: PlacesError) -> Bool { lhs.code == rhs.code }

    /// Hashes ``code`` only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    @inline(never)
    static func badGzip(_ detail: String) -> PlacesError { PlacesError(.badGzip, detail) }

    @inline(never)
    static func notJSON(_ detail: String) -> PlacesError { PlacesError(.notJSON, detail) }

    @inline(never)
    static func notFeatureCollection(_ detail: String) -> PlacesError { PlacesError(.notFeatureCollection, detail) }

    @inline(never)
    static func notCSV(_ detail: String) -> PlacesError { PlacesError(.notCSV, detail) }

    @inline(never)
    static func missingColumns(_ detail: String) -> PlacesError { PlacesError(.missingColumns, detail) }

    @inline(never)
    static func unreadable(_ detail: String) -> PlacesError { PlacesError(.unreadable, detail) }

    @inline(never)
    static func tooLarge(_ detail: String) -> PlacesError { PlacesError(.tooLarge, detail) }

    @inline(never)
    static func badDistance(_ detail: String) -> PlacesError { PlacesError(.badDistance, detail) }

    @inline(never)
    static func badCoordinate(_ detail: String) -> PlacesError { PlacesError(.badCoordinate, detail) }

    @inline(never)
    static func badBox(_ detail: String) -> PlacesError { PlacesError(.badBox, detail) }

    @inline(never)
    static func noPlaces(rows: Int, firstProblem: LoadProblem?) -> PlacesError {
        let first = firstProblem.map { problem in
            "; the first: " + (problem.feature.map { "feature \($0): " } ?? "") + problem.message
        } ?? ""
        let error = PlacesError(.noPlaces, "none of \(rows) records held a usable place\(first)")
        return firstProblem?.line.map { error.at(line: $0) } ?? error
    }
}
