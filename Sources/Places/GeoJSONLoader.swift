import Foundation

/// Reads places from an RFC 7946 GeoJSON FeatureCollection of Points (gzip-compressed or not).
///
/// Coordinates are `[longitude, latitude]` (an optional altitude is ignored); integers such
/// as `[-6,54.7529]` are read as numbers. The name comes from the `name` property (or the
/// one given), kept exactly as written; every other property goes into
/// ``Place/properties`` (strings as they are, other values as compact JSON).
///
/// A bad feature (not an object, no Point geometry, coordinates missing, not numbers or out
/// of range) is reported in ``LoadReport/problems`` with its 0-based index in `features`
/// and skipped. Input that is not a FeatureCollection at all throws ``PlacesError``.
///
/// The whole document is parsed in memory with `JSONSerialization`; that suits files of
/// tens of megabytes, not streams. Line numbers are not reported for GeoJSON.
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
    /// - Returns: The places and the features skipped.
    /// - Throws: ``PlacesError`` when the gzip framing is broken, the text is not JSON, the
    ///   JSON is not a FeatureCollection, or not one feature is a usable place.
    public func load(_ data: Data) throws(PlacesError) -> LoadReport {
        let json = try Gzip.inflatingIfNeeded(data)
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        } catch {
            let head = String(decoding: json.prefix(40), as: UTF8.self).debugDescription
            throw .notJSON("\(json.count) bytes starting \(head) do not parse as JSON: \(error)")
        }
        guard let object = root as? [String: Any] else {
            throw .notFeatureCollection("top level is \(Self.kind(root)), not an object")
        }
        guard let type = object["type"] as? String, type == "FeatureCollection" else {
            throw .notFeatureCollection("top-level \"type\" is \(object["type"].map(Self.kind) ?? "missing"), not \"FeatureCollection\"")
        }
        guard let features = object["features"] as? [Any] else {
            throw .notFeatureCollection("\"features\" is \(object["features"].map(Self.kind) ?? "missing"), not an array")
        }
        var places: [Place] = []
        places.reserveCapacity(features.count)
        var problems: [LoadProblem] = []
        for (i, feature) in features.enumerated() {
            switch place(from: feature) {
            case .success(let p): places.append(p)
            case .failure(let bad): problems.append(LoadProblem(feature: i, message: bad.message))
            }
        }
        if places.isEmpty && !features.isEmpty {
            throw .noPlaces(rows: features.count, firstProblem: problems.first)
        }
        return LoadReport(places: places, problems: problems)
    }

    /// Reads places from a GeoJSON file (gzip-compressed or not).
    /// - Parameter url: The file.
    /// - Returns: The places and the features skipped.
    /// - Throws: ``PlacesError`` as ``load(_:)``, or the file system's error when it cannot be read.
    public func load(contentsOf url: URL) throws -> LoadReport {
        try load(Data(contentsOf: url))
    }

    private struct Bad: Error { let message: String }

    private func place(from feature: Any) -> Result<Place, Bad> {
        guard let f = feature as? [String: Any] else {
            return .failure(Bad(message: "is \(Self.kind(feature)), not an object"))
        }
        guard let geometry = f["geometry"] as? [String: Any] else {
            return .failure(Bad(message: "geometry is \(f["geometry"].map(Self.kind) ?? "missing"), not an object"))
        }
        guard let gtype = geometry["type"] as? String, gtype == "Point" else {
            return .failure(Bad(message: "geometry type is \(geometry["type"].map(Self.describe) ?? "missing"), not \"Point\""))
        }
        guard let coords = geometry["coordinates"] as? [Any], coords.count >= 2 else {
            return .failure(Bad(message: "coordinates \(geometry["coordinates"].map(Self.describe) ?? "missing") are not a [lon, lat] array"))
        }
        guard let lon = Self.number(coords[0]), let lat = Self.number(coords[1]) else {
            return .failure(Bad(message: "coordinates \(Self.describe(coords)) are not numbers"))
        }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else {
            return .failure(Bad(message: "coordinates [\(lon), \(lat)] are out of range (lon -180...180, lat -90...90)"))
        }
        var name = ""
        var properties: [String: String] = [:]
        if let props = f["properties"] as? [String: Any] {
            for (key, value) in props {
                if key == nameProperty, let s = value as? String {
                    name = s
                } else {
                    properties[key] = (value as? String) ?? Self.describe(value)
                }
            }
        }
        return .success(Place(name: name, coordinate: coordinate, properties: properties))
    }

    /// A JSON number as a Double; nil for booleans, strings and everything else.
    private static func number(_ value: Any) -> Double? {
        guard let n = value as? NSNumber, !isBoolean(n) else { return nil }
        return n.doubleValue
    }

    private static func isBoolean(_ n: NSNumber) -> Bool {
        // JSONSerialization gives booleans as NSNumber with objCType "c" (and as CFBoolean on Darwin).
        String(cString: n.objCType) == "c"
    }

    private static func kind(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case let n as NSNumber: isBoolean(n) ? "a boolean" : "a number"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is NSNull: "null"
        default: "\(type(of: value))"
        }
    }

    private static func describe(_ value: Any) -> String {
        if let s = value as? String { return s.debugDescription }
        if let n = value as? NSNumber { return isBoolean(n) ? (n.boolValue ? "true" : "false") : "\(n)" }
        if value is NSNull { return "null" }
        if JSONSerialization.isValidJSONObject(value),
           let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }
}
