import ArgumentParser
import Foundation
import Places

/// One data set of the places benchmark: its file, how to load it, and its anchor name.
struct PlacesBenchData {
    /// The file name under the data directory.
    let file: String
    /// Its full path.
    let path: String
    /// A short label for table rows.
    let label: String
    /// Its name in the anchors' JSON.
    let anchorName: String
    /// The file's bytes.
    let data: Data
    /// The places, loaded once.
    let places: [Place]
    /// How it is loaded.
    let options: PlaceDataSet.Options

    /// Whether it is gzipped GeoJSON.
    var isGeoJSON: Bool { file.hasSuffix(".geojson.gz") }

    /// The three data sets the anchors measure queries on.
    static func all(in directory: String) throws -> [PlacesBenchData] {
        try [
            ("uk-eat-out-restaurants-2020-08-05.geojson.gz", "UK restaurants 2020 (GeoJSON gz)", "uk-restaurants-2020-08-05"),
            ("uk-eat-out-restaurants-2021-04-26.geojson.gz", "UK restaurants 2021 (GeoJSON gz)", "uk-restaurants-2021-04-26"),
            ("geonames-cities1000-rg.csv", "GeoNames cities1000 (CSV)", "geonames-cities1000-rg"),
        ].map { file, label, anchor in
            let path = directory + "/" + file
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read \(path); pass --data-dir (the data sets are in ../shared/data)")
            }
            let set = try PlaceDataSet(data: data, fileName: file)
            return PlacesBenchData(file: file, path: path, label: label, anchorName: anchor, data: data, places: set.places,
                                   options: PlaceDataSet.Options())
        }
    }

    /// The loader alone (inflate + parse + places), without the index.
    func loadOnly(_ data: Data) -> Int {
        let report = isGeoJSON ? try? GeoJSONLoader().load(data) : try? CSVLoader().load(data)
        return report?.places.count ?? 0
    }

    /// The inflated text, made once with the system's gzip (not timed).
    private static let inflatedCache = InflatedCache()

    /// The same-run baseline for loading: Foundation's JSON parser for GeoJSON, a naive split for CSV.
    func foundationBaseline() -> Int {
        if isGeoJSON {
            let text = Self.inflatedCache.inflated(path)
            let object = try? JSONSerialization.jsonObject(with: text)
            return ((object as? [String: Any])?["features"] as? [Any])?.count ?? 0
        }
        var count = 0
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            if fields.count > 1, Double(fields[0]) != nil, Double(fields[1]) != nil { count += 1 }
        }
        return count
    }
}

/// Inflated copies of gzip files, made with `gzip -dc` once per path.
final class InflatedCache: @unchecked Sendable {
    // @unchecked: the lock guards `texts`.
    private let lock = NSLock()
    private var texts: [String: Data] = [:]

    func inflated(_ path: String) -> Data {
        lock.withLock {
            if let text = texts[path] { return text }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/gzip")
            process.arguments = ["-dc", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try? process.run()
            let text = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            texts[path] = text
            return text
        }
    }
}
