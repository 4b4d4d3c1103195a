import Foundation

/// The Python anchor figures (`../shared/bench-anchors/results-run3.json`, written by
/// `geo_anchor.py --json`), looked up by data set and key; every lookup is nil when the file
/// is absent.
struct PlacesAnchors {
    private let root: [String: Any]

    /// Reads the file; an absent or unreadable file gives an empty set of anchors.
    init(path: String) {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        root = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
    }

    /// Whether any figures were read.
    var isEmpty: Bool { root.isEmpty }

    private func dataSet(_ name: String) -> [String: Any]? {
        (root["index"] as? [[String: Any]])?.first { ($0["dataset"] as? String) == name }
    }

    /// A figure of one data set's index section, e.g. `build_ms`.
    func index(_ dataSet: String, _ key: String) -> Double? {
        (self.dataSet(dataSet)?[key] as? NSNumber)?.doubleValue
    }

    /// A figure of one data set's `bbox` or `near` query section, e.g. `knn10_loop_qps`.
    func query(_ dataSet: String, _ kind: String, _ key: String) -> Double? {
        ((self.dataSet(dataSet)?[kind] as? [String: Any])?[key] as? NSNumber)?.doubleValue
    }

    /// A figure of the parse section for one file, e.g. `json_loads_ms`.
    func parse(_ file: String, _ key: String) -> Double? {
        ((root["parse"] as? [[String: Any]])?.first { ($0["file"] as? String) == file }?[key] as? NSNumber)?.doubleValue
    }

    /// A figure of the reverse_geocoder section, e.g. `query_mode1_loop_qps`.
    func reverseGeocoder(_ key: String) -> Double? {
        ((root["rg"] as? [String: Any])?[key] as? NSNumber)?.doubleValue
    }
}
