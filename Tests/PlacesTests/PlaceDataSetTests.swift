import Foundation
import Places
import Testing

@Suite("PlaceDataSet: one call from a file to an index and a summary")
struct PlaceDataSetTests {
    private static let geoJSON = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","properties":{"name":"Suva"},"geometry":{"type":"Point","coordinates":[178.44,-18.14]}},
        {"type":"Feature","properties":{"name":"Apia"},"geometry":{"type":"Point","coordinates":[-171.76,-13.83]}},
        {"type":"Feature","properties":{"name":"bad"},"geometry":{"type":"Point","coordinates":[-171.76,-93]}}
        ]}
        """

    private func write(_ text: String, to name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    private func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("places-dataset-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("GeoJSON by content (any extension), named from the file, problems with lines, a box across 180°")
    func geoJSONFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try PlaceDataSet.load(contentsOf: write(Self.geoJSON, to: "pacific-islands.txt", in: dir))
        #expect(set.name == "pacific-islands" && set.format == .geoJSON && !set.compressed)
        #expect(set.places.map(\.name) == ["Suva", "Apia"])
        #expect(set.problems.map(\.line) == [4])
        #expect(set.summary.count == 2 && set.summary.skipped == 1)
        let box = try #require(set.summary.bounds)
        #expect(box == BoundingBox(south: -18.14, west: 178.44, north: -13.83, east: -171.76))
        #expect(set.summary.covers(Coordinate(latitude: -15, longitude: 180)))
        #expect(!set.summary.covers(Coordinate(latitude: -15, longitude: 0)))
        #expect(set.summary.description == "pacific-islands: 2 places (GeoJSON), 1 record(s) skipped, box -18.14,178.44,-13.83,-171.76 (S,W,N,E)")
        #expect(set.index.nearest(to: Coordinate(latitude: -18, longitude: 178), k: 1).first?.place.name == "Suva")
    }

    @Test("gzipped GeoJSON and CSV with column options; .tsv reads tabs; world data covers everywhere")
    func csvAndGzip() throws {
        let gz = try PlaceDataSet(data: Data(GeoJSONFixtures.gzippedOnePoint), fileName: "one.geojson.gz")
        #expect(gz.name == "one" && gz.format == .geoJSON && gz.compressed && gz.places.map(\.name) == ["Gz"])

        var options = PlaceDataSet.Options()
        options.csv = CSVLoader(latitude: .named("Y"), longitude: .named("X"), name: .named("Title"))
        let csv = try PlaceDataSet(data: Data("Title,X,Y\nA,-170,0\nB,-50,10\nC,70,20\nD,170,30\n".utf8), fileName: "World.CSV", options: options)
        #expect(csv.name == "World" && csv.format == .csv && csv.places.count == 4)
        #expect(csv.summary.bounds == .world && csv.summary.description.hasSuffix("worldwide"))
        #expect(csv.summary.covers(Coordinate(latitude: -89, longitude: 0)))

        let tsv = try PlaceDataSet(data: Data("lat\tlon\tname\n1\t2\tT\n".utf8), fileName: "tabs.tsv")
        #expect(tsv.places.map(\.name) == ["T"])

        let forced = PlaceDataSet.Options(format: .csv)
        #expect(throws: PlacesError.self) { try PlaceDataSet(data: Data(Self.geoJSON.utf8), fileName: "x.geojson", options: forced) }
    }

    @Test("files that are not place data, or cannot be read, are clear errors")
    func notData() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        func code(_ body: () throws -> PlaceDataSet) -> (PlacesError.Code?, String) {
            do {
                _ = try body()
                return (nil, "")
            } catch let error as PlacesError {
                return (error.code, error.message)
            } catch {
                return (nil, "\(error)")
            }
        }
        let missing = code { try PlaceDataSet.load(contentsOf: dir.appendingPathComponent("nope.csv")) }
        #expect(missing.0 == .unreadable && missing.1.contains("no such file"))
        let directory = code { try PlaceDataSet.load(contentsOf: dir) }
        #expect(directory.0 == .unreadable && directory.1.contains("is a directory"))
        let png = code { try PlaceDataSet(data: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00]), fileName: "x.png") }
        #expect(png.0 == .notCSV)
        let brokenJSON = code { try PlaceDataSet(data: Data("{\"type\":\n\"Feature".utf8), fileName: "x.csv") }
        #expect(brokenJSON.0 == .notJSON && brokenJSON.1.hasPrefix("x.csv:2:1: "))
        let jsonByName = code { try PlaceDataSet(data: Data("not json".utf8), fileName: "x.geojson") }
        #expect(jsonByName.0 == .notJSON)
        let empty = code { try PlaceDataSet(data: Data(), fileName: "x.csv") }
        #expect(empty.0 == .notCSV && empty.1.contains("empty"))
        let noColumns = code { try PlaceDataSet(data: Data("a,b\n1,2\n".utf8), fileName: "x.csv") }
        #expect(noColumns.0 == .missingColumns)
    }
}
