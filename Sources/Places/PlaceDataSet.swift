import Foundation

/// A place data set loaded from one file in one call: places, an index over them, the records
/// skipped, and a summary (name, count, bounding box) for `--places FILE`-style options.
///
/// ``load(contentsOf:options:)`` reads the file a chunk at a time, inflating it if it is gzip,
/// decides the format (``Format``) from the first chunk, loads it with ``GeoJSONLoader`` or
/// ``CSVLoader`` as it is read (within ``Options/limits``), and builds a ``PlaceIndex``.
///
/// The format is, in order: ``Options/format`` when set; GeoJSON when the text starts with `{`
/// (after a byte-order mark and whitespace); otherwise the file name's extension (without a
/// `.gz`): `.geojson` and `.json` are GeoJSON, anything else CSV. A `.tsv` file is read with a
/// tab separator unless the CSV options name another.
///
/// This type is a value and is thread-safe.
public struct PlaceDataSet: Sendable {
    /// The file formats a data set can be read from.
    public enum Format: Sendable, Hashable, CustomStringConvertible {
        /// An RFC 7946 FeatureCollection of Points.
        case geoJSON
        /// Comma- (or otherwise) separated values with coordinate columns.
        case csv

        /// "GeoJSON" or "CSV".
        public var description: String {
            switch self {
            case .geoJSON: "GeoJSON"
            case .csv: "CSV"
            }
        }
    }

    /// How to read a data set.
    public struct Options: Sendable {
        /// The format; nil to decide from the content and the file name.
        public var format: Format?
        /// The column mapping and separator for CSV.
        public var csv: CSVLoader
        /// The name property for GeoJSON.
        public var geoJSON: GeoJSONLoader
        /// The bounds on fields, records and the whole file; they replace the loaders' own.
        public var limits: LoadLimits

        /// Creates options.
        /// - Parameters:
        ///   - format: The format; nil (the default) to decide from the content and file name.
        ///   - csv: How to read CSV (default: columns guessed from the header as csv2geojson does).
        ///   - geoJSON: How to read GeoJSON (default: the name in the `name` property).
        ///   - limits: The bounds on fields, records and the whole file (default ``LoadLimits/standard``).
        public init(format: Format? = nil, csv: CSVLoader = CSVLoader(), geoJSON: GeoJSONLoader = GeoJSONLoader(),
                    limits: LoadLimits = .standard) {
            self.format = format
            self.csv = csv
            self.geoJSON = geoJSON
            self.limits = limits
        }
    }

    /// The data set's name: the file name without `.gz` and a data extension
    /// (`uk-eat-out-restaurants-2020-08-05` for `uk-eat-out-restaurants-2020-08-05.geojson.gz`).
    public let name: String
    /// The format the file was read as.
    public let format: Format
    /// Whether the file was gzip-compressed.
    public let compressed: Bool
    /// The index over the places (``PlaceIndex/places`` holds them in file order).
    public let index: PlaceIndex
    /// The records skipped, with their line numbers, in file order.
    public let problems: [LoadProblem]
    /// Name, count and bounding box.
    public let summary: Summary

    /// The places, in file order.
    public var places: [Place] { index.places }

    /// Loads a data set from a file.
    /// - Parameters:
    ///   - url: The file.
    ///   - options: The format and column options.
    /// - Returns: The data set.
    /// - Throws: ``PlacesError``: ``PlacesError/Code/unreadable`` when the file cannot be read,
    ///   otherwise as the loaders throw for input that is not place data at all.
    public static func load(contentsOf url: URL, options: Options = Options()) throws(PlacesError) -> PlaceDataSet {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PlacesError.unreadable("no such file").about(file: url.relativePath)
        }
        guard !isDirectory.boolValue else { throw PlacesError.unreadable("it is a directory, not a file").about(file: url.relativePath) }
        // The file is read a chunk at a time; only the places outlive the parse.
        func read() throws(PlacesError) -> Parsed {
            do {
                let input = try PlaceInput(path: path, limits: options.limits)
                return try Self.parse(input, fileName: url.lastPathComponent, options: options)
            } catch {
                throw error.about(file: url.relativePath)
            }
        }
        return PlaceDataSet(try read())
    }

    /// Loads a data set from bytes already in memory.
    /// - Parameters:
    ///   - data: The file's contents (gzip-compressed or not).
    ///   - fileName: The file's name, for the data set's name and the extension rule.
    ///   - options: The format and column options.
    /// - Throws: ``PlacesError`` as the loaders throw for input that is not place data at all.
    public init(data: Data, fileName: String, options: Options = Options()) throws(PlacesError) {
        do {
            self.init(try Self.parse(PlaceInput(data: data, limits: options.limits), fileName: fileName, options: options))
        } catch {
            throw error.about(file: fileName)
        }
    }

    /// A loaded file before indexing.
    private struct Parsed {
        var name: String
        var format: Format
        var compressed: Bool
        var report: LoadReport
    }

    private init(_ parsed: Parsed) {
        name = parsed.name
        format = parsed.format
        compressed = parsed.compressed
        index = PlaceIndex(parsed.report.places)
        problems = parsed.report.problems
        summary = Summary(name: parsed.name, format: parsed.format, count: index.indexedCount, skipped: parsed.report.problems.count,
                          bounds: BoundingBox(enclosing: parsed.report.places.lazy.map(\.coordinate)))
    }

    private static func parse(_ input: PlaceInput, fileName: String, options: Options) throws(PlacesError) -> Parsed {
        let (stem, ext) = split(fileName)
        let limits = options.limits
        let window = ByteWindow(input, limits: limits, tracksLines: false)
        let format: Format
        if let chosen = options.format {
            format = chosen
        } else {
            window.fill(atLeast: 4096)
            format = Self.format(of: window.bytes, extension: ext)
        }
        window.tracksLines = format == .geoJSON
        let report: LoadReport
        switch format {
        case .geoJSON:
            var geoJSON = options.geoJSON
            geoJSON.limits = limits
            report = try geoJSON.load(window)
        case .csv:
            var csv = options.csv
            csv.limits = limits
            if ext == "tsv" && csv.separator == UInt8(ascii: ",") { csv.separator = UInt8(ascii: "\t") }
            report = try csv.load(window)
        }
        return Parsed(name: stem, format: format, compressed: input.compressed, report: report)
    }

    /// The format by content, then by extension: see the type's documentation (only the first
    /// bytes are looked at).
    static func format(of bytes: UnsafeRawBufferPointer, extension ext: String) -> Format {
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i += 3 }
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "{") { return .geoJSON }
        return ext == "geojson" || ext == "json" ? .geoJSON : .csv
    }

    /// The file name without `.gz` and a data extension, and that extension (lowercased).
    static func split(_ fileName: String) -> (stem: String, extension: String) {
        var stem = Substring(fileName)
        if stem.lowercased().hasSuffix(".gz") { stem = stem.dropLast(3) }
        guard let dot = stem.lastIndex(of: "."), dot != stem.startIndex else { return (String(stem), "") }
        let ext = stem[stem.index(after: dot)...].lowercased()
        guard ["geojson", "json", "csv", "tsv", "txt"].contains(ext) else { return (String(stem), "") }
        return (String(stem[..<dot]), ext)
    }
}

extension PlaceDataSet {
    /// What a data set holds, in brief: its name, how many places, and where they are.
    ///
    /// This type is a value and is thread-safe.
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// The data set's name (from the file name).
        public var name: String
        /// The format it was read as.
        public var format: Format
        /// The number of places loaded.
        public var count: Int
        /// The number of records skipped as problems.
        public var skipped: Int
        /// The box around the places (``BoundingBox/init(enclosing:)``): crossing the
        /// antimeridian only when the places do, the whole globe for global data; nil when
        /// there are no places.
        public var bounds: BoundingBox?

        /// Creates a summary.
        /// - Parameters:
        ///   - name: The data set's name.
        ///   - format: The format it was read as.
        ///   - count: The number of places.
        ///   - skipped: The number of records skipped.
        ///   - bounds: The box around the places.
        public init(name: String, format: Format, count: Int, skipped: Int, bounds: BoundingBox?) {
            self.name = name
            self.format = format
            self.count = count
            self.skipped = skipped
            self.bounds = bounds
        }

        /// Whether a position lies in the data set's box (antimeridian-aware): a quick test of
        /// whether the data can say anything about a place there.
        /// - Parameter coordinate: The position.
        /// - Returns: Whether it is inside ``bounds`` (false with no places).
        public func covers(_ coordinate: Coordinate) -> Bool {
            bounds?.contains(coordinate) ?? false
        }

        /// "cities1000: 144563 places (CSV), box -77.846,-179.12198,78.22334,179.38333 (S,W,N,E)".
        public var description: String {
            var text = "\(name): \(count) places (\(format))"
            if skipped > 0 { text += ", \(skipped) record(s) skipped" }
            if let bounds {
                text += bounds == .world ? ", worldwide" : ", box \(bounds) (S,W,N,E)"
            }
            return text
        }
    }
}
