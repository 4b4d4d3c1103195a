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
/// The text is read in one pass, one feature at a time (``JSONReader``), so memory holds the
/// inflated text and the places, never a tree of the whole document.
///
/// This type is a value and is thread-safe.
public struct GeoJSONLoader: Sendable {
    /// The property that holds a feature's name.
    public var nameProperty: String

    /// Creates a loader.
    /// - Parameter nameProperty: The property that holds the name (default `name`); a
    ///   feature without it gets an empty name.
    public init(nameProperty: String = "name") {
        self.nameProperty = nameProperty
    }

    /// Reads places from GeoJSON bytes (gzip-compressed or not).
    /// - Parameter data: The file's contents.
    /// - Returns: The places and the features skipped, with their line numbers.
    /// - Throws: ``PlacesError`` when the gzip framing is broken, the text is not JSON, the
    ///   JSON is not a FeatureCollection, or not one feature is a usable place.
    public func load(_ data: Data) throws(PlacesError) -> LoadReport {
        let json = try Gzip.inflatingIfNeeded(data)
        let result: Result<LoadReport, PlacesError> = json.withUnsafeBytes { raw in
            do throws(PlacesError) {
                return .success(try load(raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads places from a GeoJSON file (gzip-compressed or not).
    /// - Parameter url: The file.
    /// - Returns: The places and the features skipped.
    /// - Throws: ``PlacesError`` as ``load(_:)``, or the file system's error when it cannot be read.
    public func load(contentsOf url: URL) throws -> LoadReport {
        try load(Data(contentsOf: url))
    }

    private func load(_ raw: UnsafeRawBufferPointer) throws(PlacesError) -> LoadReport {
        var reader = JSONReader(raw)
        var lines = LineCounter(raw)
        func notJSON(_ e: JSONSyntaxError) -> PlacesError {
            let (line, column) = lines.position(of: e.offset)
            return PlacesError.notJSON(e.message).at(line: line, column: column)
        }
        guard let first = reader.peek() else {
            let end = lines.position(of: raw.count)
            throw PlacesError.notJSON(raw.isEmpty ? "the file is empty" : "the file holds only whitespace")
                .at(line: end.line, column: end.column)
        }
        let top = lines.position(of: reader.position)
        guard first == UInt8(ascii: "{") else {
            // Tell JSON that is not an object apart from text that is not JSON at all.
            let kind: String
            do throws(JSONSyntaxError) {
                kind = try reader.value().kind
                if reader.peek() != nil { throw reader.error("unexpected text after the top-level value") }
            } catch {
                throw notJSON(error)
            }
            throw PlacesError.notFeatureCollection("top level is \(kind), not an object").at(line: top.line, column: top.column)
        }
        var builder = PlaceBuilder(nameProperty: nameProperty)
        builder.places.reserveCapacity(ByteSearch.count(Array("\"Point\"".utf8), in: raw))
        var problems: [LoadProblem] = []
        var type: JSONValue?
        var featuresKind: String?
        var featureCount = 0
        var repeatedFeatures: Int?
        var typeOffset: Int?, featuresOffset: Int?
        do throws(JSONSyntaxError) {
            try reader.enter()
            _ = reader.consume(UInt8(ascii: "{"))
            if !reader.consume(UInt8(ascii: "}")) {
                repeat {
                    _ = reader.peek()
                    let keyOffset = reader.position
                    let key = try reader.string()
                    try reader.expect(UInt8(ascii: ":"), "':' after an object key")
                    switch key {
                    case "features" where featuresKind != nil:
                        repeatedFeatures = repeatedFeatures ?? keyOffset
                        _ = try reader.value()
                    case "features" where reader.peek() == UInt8(ascii: "["):
                        featuresKind = "an array"
                        featuresOffset = reader.position
                        try reader.enter()
                        _ = reader.consume(UInt8(ascii: "["))
                        if !reader.consume(UInt8(ascii: "]")) {
                            repeat {
                                _ = reader.peek()
                                let start = reader.position
                                reader.stringFlaw = nil
                                let feature = try reader.value()
                                switch builder.place(from: feature, flaw: reader.stringFlaw) {
                                case .success(let place): builder.places.append(place)
                                case .failure(let bad):
                                    problems.append(LoadProblem(line: lines.position(of: start).line, feature: featureCount, message: bad.message))
                                }
                                featureCount += 1
                            } while reader.consume(UInt8(ascii: ","))
                            try reader.expect(UInt8(ascii: "]"), "',' or ']' in the features array")
                        }
                        reader.leave()
                    case "features":
                        _ = reader.peek()
                        featuresOffset = reader.position
                        featuresKind = try reader.value().kind
                    case "type":
                        _ = reader.peek()
                        typeOffset = reader.position
                        type = try reader.value()
                    default:
                        _ = try reader.value()
                    }
                } while reader.consume(UInt8(ascii: ","))
                try reader.expect(UInt8(ascii: "}"), "',' or '}' in the top-level object")
            }
            if reader.peek() != nil { throw reader.error("unexpected text after the top-level object") }
        } catch {
            throw notJSON(error)
        }
        if let repeatedFeatures {
            let at = lines.position(of: repeatedFeatures)
            throw PlacesError.notFeatureCollection("\"features\" appears a second time").at(line: at.line, column: at.column)
        }
        guard case .string("FeatureCollection") = type else {
            let found = type.map { value -> String in
                if case .string(let s) = value { return JSONValue.quoted(s) }
                return value.kind
            } ?? "missing"
            let at = typeOffset.map { lines.position(of: $0) } ?? top
            throw PlacesError.notFeatureCollection("top-level \"type\" is \(found), not \"FeatureCollection\"").at(line: at.line, column: at.column)
        }
        guard featuresKind == "an array" else {
            let at = featuresOffset.map { lines.position(of: $0) } ?? top
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
