import Foundation
import Logging
import MeshPlaces
import Places

/// Loads the `--places` files for the chat: each becomes an indexed data set advertised to the mesh.
public enum PlacesLoading {
    /// Loads every file; a bad row is logged with its line number and skipped, a file that is not
    /// place data stops the chat with an error naming it.
    /// - Parameters:
    ///   - paths: GeoJSON (gzipped or not) or CSV files.
    ///   - logger: where skipped rows are reported.
    /// - Returns: the indexed data sets.
    /// - Throws: ``PlacesInputError`` naming the file that is not place data.
    public static func load(_ paths: [String], logger: Logger) throws -> LocalPlaces {
        var sets: [LocalPlaces.DataSet] = []
        for path in paths {
            let url = URL(fileURLWithPath: path)
            let report: LoadReport
            do {
                let lower = path.lowercased()
                if lower.hasSuffix(".csv") || lower.hasSuffix(".csv.gz") {
                    report = try CSVLoader().load(contentsOf: url)
                } else {
                    report = try GeoJSONLoader().load(contentsOf: url)
                }
            } catch {
                throw PlacesInputError("--places \(path): \(error)")
            }
            for problem in report.problems.prefix(20) {
                logger.warning("skipped a bad place", metadata: ["file": "\(path)", "problem": "\(problem)"])
            }
            if report.problems.count > 20 {
                logger.warning("skipped \(report.problems.count - 20) more bad places", metadata: ["file": "\(path)"])
            }
            let places = report.places
            let lats = places.map(\.latitude), lons = places.map(\.longitude)
            var name = url.lastPathComponent
            while name.utf8.count > PlacesLimits.placeSetNameBytes.upperBound { name.removeLast() }
            let info = PlaceSetInfo(name: name, count: places.count, south: lats.min() ?? 0, west: lons.min() ?? 0,
                                    north: lats.max() ?? 0, east: lons.max() ?? 0)
            sets.append(.init(info: info, index: PlaceIndex(places)))
        }
        return LocalPlaces(sets)
    }
}
