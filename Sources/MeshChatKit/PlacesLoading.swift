import Foundation
import Logging
import MeshPlaces
import Places

/// Loads the `--places` files for the chat: each becomes an indexed data set advertised to the mesh.
public enum PlacesLoading {
    /// Bad rows reported one by one in the log; the rest are counted.
    static let problemsLogged = 20

    /// Loads every file (``Places/PlaceDataSet/load(contentsOf:options:)``: GeoJSON, gzipped or
    /// not, or CSV with latitude/longitude/name columns found by their headers). A bad row is
    /// logged with its line number and skipped; a file that is not place data stops the chat with
    /// an error naming it.
    /// - Parameters:
    ///   - paths: the files.
    ///   - logger: where skipped rows are reported.
    /// - Returns: the indexed data sets.
    /// - Throws: ``MeshPlaces/PlacesInputError`` naming the file and what is wrong with it.
    public static func load(_ paths: [String], logger: Logger) throws -> LocalPlaces {
        var sets: [LocalPlaces.DataSet] = []
        for path in paths {
            let dataSet: PlaceDataSet
            do {
                dataSet = try PlaceDataSet.load(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw PlacesInputError("--places: \(error.message)")
            }
            for problem in dataSet.problems.prefix(problemsLogged) {
                logger.warning("skipped a bad place", metadata: ["file": "\(path)", "problem": "\(problem)"])
            }
            if dataSet.problems.count > problemsLogged {
                logger.warning("skipped \(dataSet.problems.count - problemsLogged) more bad places", metadata: ["file": "\(path)"])
            }
            // An empty set has no box: it covers nothing but a point nobody asks about.
            let bounds = dataSet.summary.bounds ?? BoundingBox(south: 0, west: 0, north: 0, east: 0)
            var name = URL(fileURLWithPath: path).lastPathComponent
            while name.utf8.count > PlacesLimits.placeSetNameBytes.upperBound { name.removeLast() }
            let info = PlaceSetInfo(name: name, count: dataSet.summary.count, bounds: bounds)
            sets.append(.init(info: info, index: dataSet.index))
        }
        return LocalPlaces(sets)
    }
}
