import Foundation

/// Reads places from an RFC 7946 GeoJSON FeatureCollection of Points (gzip-compressed or not).
///
/// Coordinates are `[longitude, latitude]` (an optional altitude is ignored); integers such
/// as `[-6,54.7529]` are read as numbers. The name comes from the `name` property (or the
/// one given), kept exactly as written; every other property goes into
/// ``Place/properties`` (strings as they are, numbers as written in the file, `true`,
/// `false`, `null`, and arrays and objects as compact JSON with members in file order).
///
/// A bad feature (not an object, no Point geometry, coordinates missing, not numbers or out
/// of range, a string that is not valid UTF-8) is reported in ``LoadReport/problems`` with the
/// line it starts on and its 0-based index in `features`, and skipped. Input that is not a
/// FeatureCollection at all throws ``PlacesError``: text that is not JSON (naming the line and
/// column of the first syntax error), JSON that is not a FeatureCollection, or a collection in
/// which not one feature is usable.
///
/// The text is read (and inflated) a chunk at a time and parsed in one pass, one feature at a
/// time (``JSONReader``), so memory holds one feature and the places, never the whole text or a
/// tree of the whole document. A string, feature or file over ``limits`` refuses the file
/// (``PlacesError/Code/tooLarge``, at the line and column where it starts).
///
/// This type is a value and is thread-safe.
public struct GeoJSONLoader: Sendable {
    /// The property that holds a feature's name.
    public var nameProperty: String
    /// How long a field or feature may be, and how much the file may hold.
    public var limits: LoadLimits

    /// Creates a loader.
    /// - Parameters:
    ///   - nameProperty: The property that holds the name (default `name`); a feature without
    ///     it gets an empty name.
    ///   - limits: The bounds on fields, features and the whole file (default ``LoadLimits/standard``).
    public init(nameProperty: String = "name", limits: LoadLimits = .standard) {
        self.nameProperty = nameProperty
        self.limits = limits
    }

    /// Reads places from GeoJSON bytes (gzip-compressed or not).
    /// - Parameter data: The file's contents.
    /// - Returns: The places and the features skipped, with their line numbers.
    /// - Throws: ``PlacesError`` when the gzip framing is broken, the text is not JSON, the
    ///   JSON is not a FeatureCollection, not one feature is a usable place, or the text goes over
    ///   ``limits``.
    public func load(_ data: Data) throws(PlacesError) -> LoadReport {
        try load(ByteWindow(PlaceInput(data: data, limits: limits), limits: limits, tracksLines: true))
    }

    /// Reads places from a GeoJSON file (gzip-compressed or not), a chunk at a time.
    /// - Parameter url: The file.
    /// - Returns: The places and the features skipped.
    /// - Throws: ``PlacesError`` as ``load(_:)``, or ``PlacesError/Code/unreadable`` when it cannot be read.
    public func load(contentsOf url: URL) throws -> LoadReport {
        try load(ByteWindow(PlaceInput(path: url.path, limits: limits), limits: limits, tracksLines: true))
    }

    /// Reads places from the text a window gives (it must track lines and not have dropped any text).
    func load(_ window: ByteWindow) throws(PlacesError) -> LoadReport {
        var reader = JSONReader(window)
        var featureCount = 0
        /// The record being read, for a refusal when it is too long.
        var record = "the top-level value"
        var refusal: PlacesError?
        /// Throws why the text stopped early, if it did (the parser saw only an early end).
        func checkStopped() throws(PlacesError) {
            if let failure = window.failure { throw failure }
            guard window.recordOverflow else { return }
            let at = window.position(of: reader.mark)
            throw limits.recordTooLarge(record).at(line: at.line, column: at.column)
        }
        /// Refuses a record that ended past the limit (a long one stops the window before its end).
        func checkLength(from start: Int) throws(JSONSyntaxError) {
            guard reader.offset - start > limits.maxRecordBytes else { return }
            let at = window.position(of: start)
            refusal = limits.recordTooLarge(record).at(line: at.line, column: at.column)
            throw reader.error(record)
        }
        func located(_ e: JSONSyntaxError) throws(PlacesError) -> PlacesError {
            try checkStopped()
            let (line, column) = window.position(of: e.offset)
            return (e.tooLarge ? PlacesError.tooLarge(e.message) : PlacesError.notJSON(e.message)).at(line: line, column: column)
        }
        reader.skipWhitespace()
        guard let first = reader.peek() else {
            try checkStopped()
            let end = window.position(of: reader.offset)
            throw PlacesError.notJSON(reader.offset == 0 ? "the file is empty" : "the file holds only whitespace")
                .at(line: end.line, column: end.column)
        }
        let top = window.position(of: reader.offset)
        guard first == UInt8(ascii: "{") else {
            // Tell JSON that is not an object apart from text that is not JSON at all.
            let kind: String
            do throws(JSONSyntaxError) {
                kind = try reader.value().kind
                reader.skipWhitespace()
                if reader.peek() != nil { throw reader.error("unexpected text after the top-level value") }
            } catch {
                throw try located(error)
            }
            try checkStopped()
            throw PlacesError.notFeatureCollection("top level is \(kind), not an object").at(line: top.line, column: top.column)
        }
        var builder = PlaceBuilder(nameProperty: nameProperty)
        var problems: [LoadProblem] = []
        var type: JSONValue?
        var featuresKind: String?
        var repeatedFeatures: (line: Int, column: Int)?
        var typeAt: (line: Int, column: Int)?, featuresAt: (line: Int, column: Int)?
        do throws(JSONSyntaxError) {
            try reader.enter()
            _ = reader.consume(UInt8(ascii: "{"))
            if !reader.consume(UInt8(ascii: "}")) {
                repeat {
                    reader.skipWhitespace()
                    let keyOffset = reader.offset
                    reader.mark = keyOffset
                    let key = try reader.string()
                    record = "the top-level member \(JSONValue.quoted(key))"
                    var isFeatureArray = false
                    try reader.expect(UInt8(ascii: ":"), "':' after an object key")
                    switch key {
                    case "features" where featuresKind != nil:
                        repeatedFeatures = repeatedFeatures ?? window.position(of: keyOffset)
                        _ = try reader.value()
                    case "features" where reader.peek() == UInt8(ascii: "["):
                        featuresKind = "an array"
                        featuresAt = window.position(of: reader.offset)
                        try reader.enter()
                        _ = reader.consume(UInt8(ascii: "["))
                        isFeatureArray = true
                        reader.skipWhitespace()
                        if !reader.consume(UInt8(ascii: "]")) {
                            repeat {
                                reader.skipWhitespace()
                                let start = reader.offset
                                reader.mark = start
                                record = "feature \(featureCount)"
                                reader.stringFlaw = nil
                                let feature = try reader.value()
                                try checkLength(from: start)
                                switch builder.place(from: feature, flaw: reader.stringFlaw) {
                                case .success(let place):
                                    builder.places.append(place)
                                    if builder.places.count > limits.maxPlaces { refusal = limits.tooManyPlaces }
                                case .failure(let bad):
                                    problems.append(LoadProblem(line: window.position(of: start).line, feature: featureCount, message: bad.message))
                                    if problems.count > limits.maxSkipped { refusal = limits.tooManySkipped }
                                }
                                if let refused = refusal {
                                    let at = window.position(of: start)
                                    refusal = refused.at(line: at.line, column: at.column)
                                    throw reader.error(refused.detail)
                                }
                                featureCount += 1
                                reader.skipWhitespace()
                            } while reader.consume(UInt8(ascii: ","))
                            try reader.expect(UInt8(ascii: "]"), "',' or ']' in the features array")
                        }
                        reader.leave()
                    case "features":
                        _ = reader.peek()
                        featuresAt = window.position(of: reader.offset)
                        featuresKind = try reader.value().kind
                    case "type":
                        _ = reader.peek()
                        typeAt = window.position(of: reader.offset)
                        type = try reader.value()
                    default:
                        _ = try reader.value()
                    }
                    if !isFeatureArray { try checkLength(from: keyOffset) }
                    reader.skipWhitespace()
                } while reader.consume(UInt8(ascii: ","))
                try reader.expect(UInt8(ascii: "}"), "',' or '}' in the top-level object")
            }
            reader.skipWhitespace()
            if reader.peek() != nil { throw reader.error("unexpected text after the top-level object") }
        } catch {
            if let refusal { throw refusal }
            throw try located(error)
        }
        try checkStopped()
        if let repeatedFeatures {
            throw PlacesError.notFeatureCollection("\"features\" appears a second time").at(line: repeatedFeatures.line, column: repeatedFeatures.column)
        }
        guard case .string("FeatureCollection") = type else {
            let found = type.map { value -> String in
                if case .string(let s) = value { return JSONValue.quoted(s) }
                return value.kind
            } ?? "missing"
            let at = typeAt ?? top
            throw PlacesError.notFeatureCollection("top-level \"type\" is \(found), not \"FeatureCollection\"").at(line: at.line, column: at.column)
        }
        guard featuresKind == "an array" else {
            let at = featuresAt ?? top
            throw PlacesError.notFeatureCollection("\"features\" is \(featuresKind ?? "missing"), not an array").at(line: at.line, column: at.column)
        }
        if builder.places.isEmpty && featureCount > 0 {
            throw .noPlaces(rows: featureCount, firstProblem: problems.first)
        }
        return LoadReport(places: builder.finish(), problems: problems)
    }
}

/// Turns parsed features into places whose properties share one ``PropertyStore``.
private struct PlaceBuilder {
    let nameProperty: String
    var places: [Place] = []
    private var properties = PropertyStoreBuilder()

    init(nameProperty: String) {
        self.nameProperty = nameProperty
    }

    struct Bad: Error { let message: String }

    mutating func place(from feature: JSONValue, flaw: String?) -> Result<Place, Bad> {
        guard case .object = feature else {
            return .failure(Bad(message: "is \(feature.kind), not an object"))
        }
        guard let geometry = feature["geometry"], case .object = geometry else {
            return .failure(Bad(message: "geometry is \(feature["geometry"]?.kind ?? "missing"), not an object"))
        }
        guard case .string("Point") = geometry["type"] else {
            return .failure(Bad(message: "geometry type is \(geometry["type"].map(Self.describe) ?? "missing"), not \"Point\""))
        }
        guard case .array(let coords) = geometry["coordinates"], coords.count >= 2 else {
            return .failure(Bad(message: "coordinates \(geometry["coordinates"].map(Self.describe) ?? "missing") are not a [lon, lat] array"))
        }
        guard case .number(let lonText) = coords[0], case .number(let latText) = coords[1],
              let lon = Double(lonText), let lat = Double(latText)
        else {
            return .failure(Bad(message: "coordinates \(Self.describe(.array(coords))) are not numbers"))
        }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else {
            return .failure(Bad(message: "coordinates [\(lonText), \(latText)] are out of range (lon -180...180, lat -90...90)"))
        }
        if let flaw {
            return .failure(Bad(message: flaw))
        }
        var name = ""
        var keys: [String] = []
        var values: [String] = []
        if case .object(let members) = feature["properties"] {
            for (key, value) in members {
                if key == nameProperty, case .string(let s) = value {
                    name = s
                    continue
                }
                let text: String
                if case .string(let s) = value { text = s } else { text = value.jsonText }
                if let existing = keys.firstIndex(of: key) {
                    values[existing] = text  // a repeated key: the last value wins
                } else {
                    keys.append(key)
                    values.append(text)
                }
            }
        }
        // The store is attached by finish(); until then a place holds only its slot.
        let slot = properties.add(keys: keys, values: values)
        return .success(Place(name: name, coordinate: coordinate, properties: PlaceProperties(store: nil, slot: slot)))
    }

    /// The places, pointing at the finished property store.
    mutating func finish() -> [Place] {
        let store = properties.finish()
        for i in places.indices {
            places[i].storage = PlaceProperties(store: store, slot: places[i].storage.slot)
        }
        return places
    }

    /// A value as it appears in a message: strings quoted, others as compact JSON.
    static func describe(_ value: JSONValue) -> String {
        value.jsonText
    }
}
