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
/// The text is read (and inflated) a chunk at a time and parsed as it comes, so memory holds
/// one row and the places, never the whole text. A field, row or file over ``limits`` refuses
/// the file (``PlacesError/Code/tooLarge``, at the line and column where it starts).
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
    /// How long a field or row may be, and how much the file may hold.
    public var limits: LoadLimits

    /// Creates a loader.
    /// - Parameters:
    ///   - latitude: The latitude column (default: guessed from the header).
    ///   - longitude: The longitude column (default: guessed from the header).
    ///   - name: The name column (default: the one headed `name`); nil for none.
    ///   - hasHeader: Whether the first record is a header (default true). Without one,
    ///     columns must be given by ``Column/index(_:)``.
    ///   - separator: The field separator byte (default `,`).
    ///   - limits: The bounds on fields, rows and the whole file (default ``LoadLimits/standard``).
    public init(
        latitude: Column = .automatic,
        longitude: Column = .automatic,
        name: Column? = .named("name"),
        hasHeader: Bool = true,
        separator: UInt8 = UInt8(ascii: ","),
        limits: LoadLimits = .standard
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.name = name
        self.hasHeader = hasHeader
        self.separator = separator
        self.limits = limits
    }

    /// Reads places from CSV bytes (gzip-compressed or not).
    /// - Parameter data: The file's contents.
    /// - Returns: The places and the rows skipped.
    /// - Throws: ``PlacesError`` when the input is not CSV place data at all: empty, binary,
    ///   a header without the requested columns, not one usable row, or over ``limits``.
    public func load(_ data: Data) throws(PlacesError) -> LoadReport {
        try load(ByteWindow(PlaceInput(data: data, limits: limits), limits: limits, tracksLines: false))
    }

    /// Reads places from a CSV file (gzip-compressed or not), a chunk at a time.
    /// - Parameter url: The file.
    /// - Returns: The places and the rows skipped.
    /// - Throws: ``PlacesError`` as ``load(_:)``, or ``PlacesError/Code/unreadable`` when it cannot be read.
    public func load(contentsOf url: URL) throws -> LoadReport {
        try load(ByteWindow(PlaceInput(path: url.path, limits: limits), limits: limits, tracksLines: false))
    }

    /// Reads places from the text a window gives (it must not have dropped any text).
    func load(_ window: ByteWindow) throws(PlacesError) -> LoadReport {
        window.fill(atLeast: 65_536)
        if let failure = window.failure { throw failure }
        let head = UnsafeRawBufferPointer(rebasing: window.bytes.prefix(65_536))
        if head.isEmpty { throw PlacesError.notCSV("the file is empty").at(line: 1, column: 1) }
        if let nul = head.firstIndex(of: 0) {
            var lines = LineTracker()
            lines.scan(head, base: 0, upTo: nul)
            throw PlacesError.notCSV("binary data: a NUL byte (offset \(nul))").at(line: lines.line, column: nul - lines.lineStart + 1)
        }
        var records = CSVRecords(window: window, separator: separator)
        var record = CSVRecord()
        var problems: [LoadProblem] = []
        var header: [String]?
        if hasHeader {
            switch try records.next(into: &record) {
            case .failure(let problem): throw PlacesError.notCSV("header: \(problem.message)").at(line: problem.line ?? 1)
            case .success(false): throw PlacesError.notCSV("no header row").at(line: 1, column: 1)
            case .success(true):
                if let bad = record.firstInvalidField() { throw PlacesError.notCSV("header: field \(bad) is not valid UTF-8").at(line: 1) }
                header = (0..<record.count).map { record.string($0) ?? "" }
            }
        }
        var mapping: ColumnMapping
        do {
            mapping = try ColumnMapping(loader: self, header: header)
        } catch {
            throw error.at(line: 1)
        }
        var places: [Place] = []
        var rows = 0
        while true {
            switch try records.next(into: &record) {
            case .success(false):
                if places.isEmpty && rows > 0 {
                    throw .noPlaces(rows: rows, firstProblem: problems.first)
                }
                mapping.attachProperties(to: &places)
                return LoadReport(places: places, problems: problems)
            case .failure(let problem):
                rows += 1
                problems.append(problem)
            case .success(true):
                rows += 1
                switch mapping.place(from: record) {
                case .success(let place): places.append(place)
                case .failure(let problem): problems.append(problem)
                }
            }
            if places.count > limits.maxPlaces { throw limits.tooManyPlaces.at(line: record.line, column: 1) }
            if problems.count > limits.maxSkipped { throw limits.tooManySkipped.at(line: record.line, column: 1) }
        }
    }
}

/// Resolved 0-based column positions for one file, and the shared property keys per row width.
private struct ColumnMapping {
    let latitude: Int
    let longitude: Int
    let name: Int?
    let propertyNames: [String]
    /// For rows of each field count: the fields that are properties (in order), their keys,
    /// and the keys' index in the property store.
    private var layouts: [Int: (fields: [Int], keys: [String], set: Int?)] = [:]
    private var properties = PropertyStoreBuilder()
    private var ranges: [Range<Int>] = []

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

    /// The property fields and keys for rows of `count` fields (a repeated header name keeps
    /// its first position and the last field's value, as a dictionary would).
    private mutating func layout(_ count: Int) -> (fields: [Int], keys: [String], set: Int?) {
        if let known = layouts[count] { return known }
        var keys: [String] = []
        var fields: [Int] = []
        for i in 0..<count where i != latitude && i != longitude && i != name {
            let key = i < propertyNames.count ? propertyNames[i] : "column \(i + 1)"
            if let existing = keys.firstIndex(of: key) {
                fields[existing] = i
            } else {
                keys.append(key)
                fields.append(i)
            }
        }
        let made = (fields, keys, properties.keySet(keys))
        layouts[count] = made
        return made
    }

    /// Points the places made by ``place(from:)`` at the finished property store.
    func attachProperties(to places: inout [Place]) {
        let store = properties.finish()
        for i in places.indices {
            places[i].storage = PlaceProperties(store: store, slot: places[i].storage.slot)
        }
    }

    mutating func place(from record: CSVRecord) -> Result<Place, LoadProblem> {
        let needed = max(latitude, longitude, name ?? 0) + 1
        guard record.count >= needed else {
            return .failure(LoadProblem(line: record.line, message: "\(record.count) field(s), need at least \(needed)"))
        }
        if let bad = record.firstInvalidField() {
            return .failure(LoadProblem(line: record.line, message: "field \(bad) is not valid UTF-8"))
        }
        let latText = record.trimmedString(latitude)
        let lonText = record.trimmedString(longitude)
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
        let (fields, keys, set) = layout(record.count)
        ranges.removeAll(keepingCapacity: true)
        for i in fields { ranges.append(record.range(i)) }
        // The store is attached when the load is done (attachProperties); until then a place
        // holds only its slot.
        let slot = properties.add(set: set, keys: keys, fields: ranges, of: record.bytes)
        return .success(Place(name: name.map { record.string($0) ?? "" } ?? "", coordinate: Coordinate(latitude: lat, longitude: lon),
                              properties: PlaceProperties(store: nil, slot: slot)))
    }
}
