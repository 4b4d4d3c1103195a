import ArgumentParser
import Foundation
import Places

/// `meshbench places`: the offline places library measured on the real data sets, each figure
/// beside a brute-force baseline measured in the same run and beside the Python anchor figures
/// (`../shared/bench-anchors/results-run3.json`: scipy cKDTree one call per query, numpy,
/// reverse_geocoder). One thread, one call per query.
struct PlacesBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "Places benchmarks: load, index build, queries, names, clustering, reverse lookup, memory.")

    @Option(help: "Directory holding the data sets.") var dataDir = "../shared/data"
    @Option(help: "The Python anchor figures (geo_anchor.py --json output).") var anchors = "../shared/bench-anchors/results-run3.json"
    @Option(help: "Queries per query figure (the anchors' one-call-per-query loop has 5000).") var queries = 5000
    @Option(help: "Queries per brute-force figure (the anchors use 200).") var bruteQueries = 200
    @Option(help: "Timed runs per figure; the median is reported, after one untimed run.") var runs = 5
    @Option(help: "Timed runs per brute-force figure.") var bruteRuns = 3
    @Option(help: "Seed for the query points.") var seed: UInt64 = 20_240_601
    @Option(help: "The meshchat binary for the `places query` memory figure (default: beside meshbench).") var meshchat: String?
    @Option(help: "Only these sections (comma-separated): load, queries, search, memory.") var only: String?
    @Option(help: "Only the data sets whose file name contains one of these (comma-separated).") var sets: String?

    func run() throws {
        let anchors = PlacesAnchors(path: self.anchors)
        if anchors.isEmpty { progress("no anchor figures at \(self.anchors): the anchor column stays empty") }
        let sections = Set((only ?? "load,queries,search,memory").split(separator: ",").map(String.init))
        let filters = (self.sets ?? "").split(separator: ",").map(String.init)
        let sets = try PlacesBenchData.all(in: dataDir).filter { set in filters.isEmpty || filters.contains { set.file.contains($0) } }
        if sections.contains("load") { try loadTable(sets, anchors).print() }
        if sections.contains("queries") {
            for set in sets { queryTable(set, anchors).print() }
        }
        if sections.contains("search") { searchTable(sets, anchors).print() }
        if sections.contains("memory") { try memoryTable(sets).print() }
    }

    // MARK: Load and build

    private func loadTable(_ sets: [PlacesBenchData], _ anchors: PlacesAnchors) throws -> PlacesTable {
        var table = PlacesTable(title: "Places: load and index build (median of \(runs), ms)",
                                baselineName: "baseline (same run) ¹", anchorName: "Python anchor (run 3)")
        for set in sets {
            progress("load \(set.file)")
            let data = set.data
            let load = medianSeconds(runs: runs) {
                (try? PlaceDataSet(data: data, fileName: set.file, options: set.options))?.index.count ?? 0
            }
            let loader = medianSeconds(runs: runs) { set.loadOnly(data) }
            let baseline = medianSeconds(runs: runs) { set.foundationBaseline() }
            let anchor = set.isGeoJSON
                ? anchors.parse(set.file, "gunzip_ms").flatMap { g in anchors.parse(set.file, "json_loads_ms").map { g + $0 } }
                : anchors.parse(set.file, "csv_reader_ms")
            table.rows.append(PlacesRow(
                label: "\(set.label): load\(set.isGeoJSON ? " (gunzip + parse)" : "") → places", unit: "ms",
                value: loader.seconds * 1000, baseline: baseline.seconds * 1000, anchor: anchor, higherIsBetter: false))
            let places = set.places
            let build = medianSeconds(runs: runs) { PlaceIndex(places).indexedCount }
            let anchorBuild = anchors.index(set.anchorName, "build_ms").flatMap { b in anchors.index(set.anchorName, "xyz_ms").map { b + $0 } }
            table.rows.append(PlacesRow(label: "\(set.label): index build (2 KD-trees + names)", unit: "ms",
                                        value: build.seconds * 1000, baseline: nil, anchor: anchorBuild, higherIsBetter: false))
            table.rows.append(PlacesRow(label: "\(set.label): PlaceDataSet load (all of the above + summary)", unit: "ms",
                                        value: load.seconds * 1000, baseline: nil, anchor: nil, higherIsBetter: false))
        }
        table.notes = [
            "Bytes already in memory (file reads not timed), as the anchors. GeoJSON loads include gunzip (system zlib).",
            "¹ Baseline: GeoJSON, Foundation `JSONSerialization.jsonObject` of the inflated text (parse only, no places; what "
                + "the loader used before); CSV, a naive split into lines and commas with `Double()` on the coordinates "
                + "(wrong for quoted fields).",
            "Anchor: GeoJSON, Python `gzip.decompress` + `json.loads`; CSV, `list(csv.reader(...))`; index build, numpy unit "
                + "vectors + `cKDTree` build (one tree; ours builds two trees and the name table).",
            "A ratio below 1 is faster than the baseline (times).",
        ]
        return table
    }

    // MARK: Queries

    private func queryTable(_ set: PlacesBenchData, _ anchors: PlacesAnchors) -> PlacesTable {
        progress("queries on \(set.file)")
        let index = PlaceIndex(set.places)
        let brute = BrutePlaces(set.places)
        var table = PlacesTable(
            title: "Places queries: \(set.label) (\(set.places.count) places), one call per query, one thread",
            baselineName: "brute-force scan (same run)", anchorName: "cKDTree one call per query")
        let fiveMiles = Distance.miles(5).metres
        for kind in ["bbox", "near"] {
            let points = kind == "bbox"
                ? PlacesQueries.uniformInBox(set.places, count: queries, seed: seed)
                : PlacesQueries.nearPlaces(set.places, count: queries, seed: seed &+ 1)
            let few = Array(points.prefix(bruteQueries))
            for (label, metres, key) in [("radius 5 km", 5000.0, "5km"), ("radius 5 mi", fiveMiles, "5mi")] {
                let ours = rate(points) { index.within(.metres(metres), of: $0).count }
                let base = rate(few, runs: bruteRuns) { brute.within(metres, of: $0).count }
                let hits = Double(ours.checksum) / Double(points.count)
                let anchorHits = anchors.query(set.anchorName, kind, "radius_\(key)_mean_hits")
                table.rows.append(PlacesRow(
                    label: "[\(kind)] \(label) (mean hits \(Self.hits(hits)); anchor \(anchorHits.map(Self.hits) ?? "—"))", unit: "q/s",
                    value: ours.rate, baseline: base.rate, anchor: anchors.query(set.anchorName, kind, "radius_\(key)_loop_qps"),
                    goal: "≥ anchor"))
            }
            let knn = rate(points) { index.nearest(to: $0, k: 10).count }
            let knnBase = rate(few, runs: bruteRuns) { brute.nearest(to: $0, k: 10).count }
            table.rows.append(PlacesRow(label: "[\(kind)] nearest k = 10", unit: "q/s", value: knn.rate, baseline: knnBase.rate,
                                        anchor: anchors.query(set.anchorName, kind, "knn10_loop_qps"), goal: "≥ anchor"))
            let box = rate(points) { index.inBox(PlacesQueries.box(around: $0)).count }
            let boxBase = rate(few, runs: bruteRuns) { brute.inBox(PlacesQueries.box(around: $0)).count }
            table.rows.append(PlacesRow(
                label: "[\(kind)] box ±0.05° lat (mean hits \(Self.hits(Double(box.checksum) / Double(points.count))); "
                    + "anchor \(anchors.query(set.anchorName, kind, "brute_bbox_mean_hits").map(Self.hits) ?? "—")) ¹",
                unit: "q/s", value: box.rate, baseline: boxBase.rate,
                anchor: anchors.query(set.anchorName, kind, "brute_bbox_0.1deg_qps"), goal: "≥ anchor"))
        }
        if set.anchorName == "geonames-cities1000-rg" {
            let points = PlacesQueries.uniformInBox(set.places, count: queries, seed: seed &+ 2)
            let few = Array(points.prefix(bruteQueries))
            let ours = rate(points) { index.describe($0) == nil ? 0 : 1 }
            let base = rate(few, runs: bruteRuns) { brute.nearest(to: $0, k: 1).count }
            table.rows.append(PlacesRow(label: "[bbox] reverse lookup `describe` (nearest place, distance, bearing) ²", unit: "q/s",
                                        value: ours.rate, baseline: base.rate, anchor: anchors.reverseGeocoder("query_mode1_loop_qps"),
                                        goal: "≥ anchor"))
        }
        table.notes = [
            "Queries: `bbox` uniform in latitude and longitude over the data's min/max box; `near` a random place plus N(0, 0.01°) "
                + "(about 1 km), as geo_anchor.py generates them (our own seeded generator, so different points, same distributions). "
                + "\(queries) queries per figure, median of \(runs) runs after one warm-up; brute force \(bruteQueries) queries, median of \(bruteRuns).",
            "Ours return matches sorted by (distance, name, index) with exact distances and bearings; cKDTree's `query_ball_point` "
                + "returns unsorted indices only.",
            "Brute force: `Geodesy.distance` for every place, filter, sort: the same answers as the index.",
            "¹ The anchor for boxes is the numpy brute-force mask (cKDTree has no box query).",
            "² The anchor is reverse_geocoder 1.5.1 mode 1, one call per point (its nearest is by degrees, not great-circle).",
        ]
        return table
    }

    // MARK: Names and clustering

    private func searchTable(_ sets: [PlacesBenchData], _ anchors: PlacesAnchors) -> PlacesTable {
        var table = PlacesTable(title: "Places: name search and grid clustering", baselineName: "brute-force scan (same run)",
                                anchorName: "Python anchor (run 3)")
        for set in sets {
            progress("names and clusters on \(set.file)")
            let index = PlaceIndex(set.places)
            let brute = BrutePlaces(set.places)
            let tokens = set.anchorName.hasPrefix("uk") ? ["pizza", "cafe", "king", "inn"] : ["san", "berg", "ville", "abad"]
            let ours = rate(tokens, runs: runs) { index.named($0, limit: .max).count }
            let base = rate(tokens, runs: runs) { brute.named($0).count }
            table.rows.append(PlacesRow(label: "\(set.label): name search, every match (\(tokens.joined(separator: "/")))", unit: "q/s",
                                        value: ours.rate, baseline: base.rate, anchor: anchors.index(set.anchorName, "name_substring_qps")))
            for cell in [0.5, 0.05] {
                let key = cell == 0.5 ? "0.5" : "0.05"
                let clusters = medianSeconds(runs: runs) { index.clusters(cellDegrees: cell).count }
                let baseline = medianSeconds(runs: runs) { brute.grid(cellDegrees: cell) }
                let cells = (clusters.checksum) / (runs + 1)
                let anchorCells = anchors.index(set.anchorName, "grid_\(key)deg_cells").map { String(Int($0)) } ?? "—"
                table.rows.append(PlacesRow(
                    label: "\(set.label): clusters, whole set, \(key)° cells (\(cells) cells; anchor \(anchorCells))", unit: "ms",
                    value: clusters.seconds * 1000, baseline: baseline.seconds * 1000,
                    anchor: anchors.index(set.anchorName, "grid_\(key)deg_ms"), higherIsBetter: false))
            }
        }
        table.notes = [
            "Name search: `named(token, limit: .max)` returns every prefix and substring match of the folded name, sorted; "
                + "the baseline and the anchor (a pure-Python casefold scan) return unsorted index lists.",
            "Clusters: count, centroid and a representative (the place nearest the centroid) per cell; the baseline is a "
                + "dictionary keyed by `GridCell` with count and coordinate sums; the anchor is numpy `unique` + `bincount` "
                + "(count and centroid only). Times: lower is better.",
        ]
        return table
    }

    // MARK: Memory

    private func memoryTable(_ sets: [PlacesBenchData]) throws -> PlacesTable {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let meshchatPath = meshchat ?? me.deletingLastPathComponent().appendingPathComponent("meshchat").path
        var table = PlacesTable(title: "Places: resident memory with the 145k GeoNames cities loaded and indexed",
                                baselineName: "the same process empty", anchorName: "Python anchor")
        guard let cities = sets.first(where: { $0.anchorName == "geonames-cities1000-rg" }) else { return table }
        progress("memory")
        let mb = 1024.0 * 1024
        let empty = try PlacesMemory.resident(meshbench: me.path, arguments: ["--empty"])
        let loaded = try PlacesMemory.resident(meshbench: me.path, arguments: ["--data", cities.path])
        table.rows.append(PlacesRow(label: "`meshbench places-resident`: VmRSS after load + index + one query", unit: "MB",
                                    value: loaded.rss / mb, baseline: empty.rss / mb, anchor: nil, goal: "≤ 64 MB", higherIsBetter: false))
        table.rows.append(PlacesRow(label: "`meshbench places-resident`: VmHWM (peak)", unit: "MB",
                                    value: loaded.hwm / mb, baseline: empty.hwm / mb, anchor: nil, goal: "≤ 64 MB", higherIsBetter: false))
        if FileManager.default.isExecutableFile(atPath: meshchatPath),
           let query = try PlacesMemory.peak([meshchatPath, "places", "query", "--data", cities.path, "--near", "51.5,-0.12", "--json"]),
           let bare = try PlacesMemory.peak([meshchatPath, "places", "query", "--help"]) {
            table.rows.append(PlacesRow(label: "`meshchat places query --near … --json` on cities1000: peak RSS (GNU time %M; exit \(query.status))",
                                        unit: "MB", value: query.bytes / mb, baseline: bare.bytes / mb, anchor: nil, goal: "≤ 64 MB",
                                        higherIsBetter: false))
        } else {
            progress("no meshchat binary at \(meshchatPath) or no /usr/bin/time: the `places query` memory row is left out")
        }
        table.notes = [
            "Fresh processes with glibc's default heap settings. Baseline: the same binary doing nothing "
                + "(`places-resident --empty`, `places query --help`); the difference is the data's cost.",
        ]
        return table
    }

    // MARK: Helpers

    /// Queries per second of `body` over `points`, median of `runs`; the checksum is the
    /// total of `body`'s results over one pass.
    private func rate<T>(_ points: [T], runs: Int? = nil, _ body: (T) -> Int) -> (rate: Double, checksum: Int) {
        let runs = runs ?? self.runs
        let timing = medianSeconds(runs: runs) {
            var total = 0
            for p in points { total &+= body(p) }
            return total
        }
        return (Double(points.count) / timing.seconds, timing.checksum / (runs + 1))
    }

    private static func hits(_ value: Double) -> String {
        value >= 10 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }
}
