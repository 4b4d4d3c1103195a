import Foundation

/// Reads places from CSV text, with the column mapping csv2geojson uses.
///
/// By default the header row is searched for the coordinate columns the way csv2geojson
/// guesses them (`lat`/`latitude`, then `lon`/`lng`/`long`/`longitude`, case-insensitive,
/// exact names before names that merely contain them) and the name comes from a `name`
/// column. Columns can also be named or given by 0-based position (for headerless files
/// such as the thoughtbot hotel format, `lon, lat, name, …`).
///
/// Fields may be RFC 4180 quoted; line ends may be LF, CRLF or CR; the text must be UTF-8
/// (a byte-order mark is skipped). Coordinate fields are trimmed before parsing, so
/// `" 42.48550"` and integers such as `-6` are read. Names are kept exactly as written.
/// Every other column goes into ``Place/properties`` under its header name (or `column N`,
/// 1-based, without a header).
///
/// A bad row (too few fields, a coordinate that is not a number or out of range, a quote
/// never closed, invalid UTF-8) is reported in ``LoadReport/problems`` with its line number
/// and skipped. Input that is not CSV place data at all throws ``PlacesError``.
///
/// This type is a value and is thread-safe.
public struct CSVLoader: Sendable {
    /// Where a field is found.
    public enum Column: Sendable, Hashable {
        /// Guess from the header (coordinates only), as csv2geojson does.
        case automatic
        /// The column whose header is this name (case-insensitive, surrounding spaces ignored).
        case named(String)
        /// The column at this 0-based position.
        case index(Int)
    }

    /// The latitude column.
    public var latitude: Column
    /// The longitude column.
    public var longitude: Column
    /// The name column; nil gives every place an empty name.
    public var name: Column?
    /// Whether the first record is a header.
    public var hasHeader: Bool
    /// The field separator, an ASCII character.
    public var separator: UInt8

    /// Creates a loader.
    /// - Parameters:
    ///   - latitude: The latitude column (default: guessed from the header).
    ///   - longitude: The longitude column (default: guessed from the header).
    ///   - name: The name column (default: the one headed `name`); nil for none.
    ///   - hasHeader: Whether the first record is a header (default true). Without one,
    ///     columns must be given by ``Column/index(_:)``.
    ///   - separator: The field separator byte (default `,`).
    public init(
        latitude: Column = .automatic,
        longitude: Column = .automatic,
        name: Column? = .named("name"),
        hasHeader: Bool = true,
        separator: UInt8 = UInt8(ascii: ",")
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.name = name
        self.hasHeader = hasHeader
        self.separator = separator
    }

    /// Reads places from CSV bytes (gzip-compressed or not).
    /// - Parameter data: The file's contents.
    /// - Returns: The places and the rows skipped.
    /// - Throws: ``PlacesError`` when the input is not CSV place data at all: empty, binary,
    ///   a header without the requested columns, or not one usable row.
    public func load(_ data: Data) throws(PlacesError) -> LoadReport {
        let bytes = [UInt8](try Gzip.inflatingIfNeeded(data))
        if bytes.isEmpty { throw .notCSV("the file is empty") }
        if let nul = bytes.prefix(65_536).firstIndex(of: 0) {
            throw .notCSV("binary data: NUL byte at offset \(nul)")
        }
        var records = CSVRecords(bytes: bytes, separator: separator)
        var problems: [LoadProblem] = []
        var header: [String]?
        if hasHeader {
            while header == nil, let first = records.next() {
                switch first {
                case .success(let record): header = record.fields
                case .failure(let problem): throw .notCSV("header: \(problem)")
                }
            }
            if header == nil { throw .notCSV("no header row") }
        }
        let mapping = try ColumnMapping(loader: self, header: header)
        var places: [Place] = []
        var rows = 0
        while let next = records.next() {
            rows += 1
            switch next {
            case .failure(let problem):
                problems.append(problem)
            case .success(let record):
                switch mapping.place(from: record) {
                case .success(let place): places.append(place)
                case .failure(let problem): problems.append(problem)
                }
            }
        }
        if places.isEmpty && rows > 0 {
            throw .noPlaces(rows: rows, firstProblem: problems.first)
        }
        return LoadReport(places: places, problems: problems)
    }

    /// Reads places from a CSV file (gzip-compressed or not).
    /// - Parameter url: The file.
    /// - Returns: The places and the rows skipped.
    /// - Throws: ``PlacesError`` as ``load(_:)``, or the file system's error when it cannot be read.
    public func load(contentsOf url: URL) throws -> LoadReport {
        try load(Data(contentsOf: url))
    }
}

/// Resolved 0-based column positions for one file.
private struct ColumnMapping {
    let latitude: Int
    let longitude: Int
    let name: Int?
    let propertyNames: [String]

    init(loader: CSVLoader, header: [String]?) throws(PlacesError) {
        let folded = header?.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        func resolve(_ column: CSVLoader.Column, role: String, exact: [String], contains: [String]) throws(PlacesError) -> Int {
            switch column {
            case .index(let i):
                guard i >= 0 else { throw .missingColumns("\(role) column index \(i) is negative") }
                return i
            case .named(let wanted):
                guard let folded else { throw .missingColumns("\(role) column named \"\(wanted)\" needs a header row") }
                let key = wanted.trimmingCharacters(in: .whitespaces).lowercased()
                guard let i = folded.firstIndex(of: key) else {
                    throw .missingColumns("no \(role) column \"\(wanted)\" in header \(header ?? [])")
                }
                return i
            case .automatic:
                guard let folded else { throw .missingColumns("\(role) column cannot be guessed without a header row") }
                if let i = folded.firstIndex(where: { exact.contains($0) }) { return i }
                if let i = folded.firstIndex(where: { f in contains.contains { f.contains($0) } }) { return i }
                throw .missingColumns("no \(role) column in header \(header ?? []) (looked for \(exact.joined(separator: ", ")))")
            }
        }
        latitude = try resolve(loader.latitude, role: "latitude", exact: ["lat", "latitude"], contains: ["lat"])
        longitude = try resolve(loader.longitude, role: "longitude", exact: ["lon", "lng", "long", "longitude"], contains: ["lon", "lng"])
        if latitude == longitude {
            throw .missingColumns("latitude and longitude both map to column \(latitude + 1)")
        }
        if let n = loader.name {
            name = try resolve(n, role: "name", exact: ["name"], contains: ["name"])
        } else {
            name = nil
        }
        propertyNames = header ?? []
    }

    func place(from record: CSVRecord) -> Result<Place, LoadProblem> {
        let needed = max(latitude, longitude, name ?? 0) + 1
        guard record.fields.count >= needed else {
            return .failure(LoadProblem(line: record.line, message: "\(record.fields.count) field(s), need at least \(needed)"))
        }
        let latText = record.fields[latitude].trimmingCharacters(in: .whitespaces)
        let lonText = record.fields[longitude].trimmingCharacters(in: .whitespaces)
        guard let lat = Double(latText) else {
            return .failure(LoadProblem(line: record.line, message: "latitude \"\(latText)\" (column \(latitude + 1)) is not a number"))
        }
        guard let lon = Double(lonText) else {
            return .failure(LoadProblem(line: record.line, message: "longitude \"\(lonText)\" (column \(longitude + 1)) is not a number"))
        }
        guard lat.isFinite, abs(lat) <= 90 else {
            return .failure(LoadProblem(line: record.line, message: "latitude \(latText) is outside -90...90"))
        }
        guard lon.isFinite, abs(lon) <= 180 else {
            return .failure(LoadProblem(line: record.line, message: "longitude \(lonText) is outside -180...180"))
        }
        var properties: [String: String] = [:]
        for (i, value) in record.fields.enumerated() where i != latitude && i != longitude && i != name {
            let key = i < propertyNames.count ? propertyNames[i] : "column \(i + 1)"
            properties[key] = value
        }
        return .success(Place(name: name.map { record.fields[$0] } ?? "", coordinate: Coordinate(latitude: lat, longitude: lon), properties: properties))
    }
}
