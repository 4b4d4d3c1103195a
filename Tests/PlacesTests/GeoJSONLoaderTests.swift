import Foundation
import Places
import Testing

@Suite("GeoJSONLoader")
struct GeoJSONLoaderTests {
    private func feature(_ name: String, _ coordinates: String, extra: String = "") -> String {
        "{\"type\":\"Feature\",\"properties\":{\"name\":\(name)\(extra)},\"geometry\":{\"type\":\"Point\",\"coordinates\":\(coordinates)}}"
    }

    @Test("[lon, lat] order, integer coordinates, tabs kept, other properties as strings")
    func points() throws {
        let json = "{\"type\":\"FeatureCollection\",\"features\":["
            + feature("\"\\t500 Degrees Herne Hill\"", "[-0.103,51.4528]", extra: ",\"postcode\":\"SE24 0NG\",\"rank\":3,\"open\":true")
            + "," + feature("\"Belfast\"", "[-6,54.7529]")
            + "]}"
        let report = try GeoJSONLoader().load(Data(json.utf8))
        #expect(report.problems.isEmpty)
        #expect(report.places.map(\.name) == ["\t500 Degrees Herne Hill", "Belfast"])
        #expect(report.places[0].coordinate == Coordinate(latitude: 51.4528, longitude: -0.103))
        #expect(report.places[1].coordinate == Coordinate(latitude: 54.7529, longitude: -6))
        #expect(report.places[0].properties == ["postcode": "SE24 0NG", "rank": "3", "open": "true"])
    }

    @Test("bad features are reported by index and skipped")
    func badFeatures() throws {
        let json = "{\"type\":\"FeatureCollection\",\"features\":["
            + feature("\"ok\"", "[1,2]") + ","
            + "{\"type\":\"Feature\",\"properties\":{},\"geometry\":null},"
            + feature("\"line\"", "[[1,2],[3,4]]") + ","
            + feature("\"far\"", "[200,2]") + ","
            + feature("\"bool\"", "[true,2]") + ","
            + "{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,4]]}},"
            + "42"
            + "]}"
        let report = try GeoJSONLoader().load(Data(json.utf8))
        #expect(report.places.map(\.name) == ["ok"])
        #expect(report.problems.map(\.feature) == [1, 2, 3, 4, 5, 6])
        #expect(report.problems[0].description == "feature 1: geometry is null, not an object")
        #expect(report.problems[2].message.contains("out of range"))
        #expect(report.problems[3].message.contains("not numbers"))
        #expect(report.problems[4].message.contains("\"LineString\""))
    }

    @Test("gzip-compressed input is inflated")
    func gzip() throws {
        let report = try GeoJSONLoader().load(Data(GeoJSONFixtures.gzippedOnePoint))
        #expect(report.places == [Place(name: "Gz", coordinate: Coordinate(latitude: 2, longitude: 1))])
    }

    @Test("input that is not a FeatureCollection is a clear error")
    func notData() throws {
        #expect(throws: PlacesError.notJSONCode) { try GeoJSONLoader().load(Data("lat,lon\n1,2\n".utf8)) }
        #expect(throws: PlacesError.notFeatureCollectionCode) { try GeoJSONLoader().load(Data("{\"type\":\"Feature\"}".utf8)) }
        #expect(throws: PlacesError.notFeatureCollectionCode) { try GeoJSONLoader().load(Data("{\"type\":\"FeatureCollection\"}".utf8)) }
        #expect(throws: PlacesError.badGzipCode) { try GeoJSONLoader().load(Data(GeoJSONFixtures.gzippedOnePoint.prefix(40))) }
        #expect(throws: PlacesError.badGzipCode) { try GeoJSONLoader().load(Data([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff])) }
        let empty = try GeoJSONLoader().load(Data("{\"type\":\"FeatureCollection\",\"features\":[]}".utf8))
        #expect(empty.places.isEmpty && empty.problems.isEmpty)
    }
}

enum GeoJSONFixtures {
    /// gzip of a one-feature FeatureCollection: "Gz" at [1, 2] (Python gzip.compress, mtime 0).
    static let gzippedOnePoint: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x5d, 0xcc, 0xb1, 0x0e, 0x83, 0x30,
        0x10, 0x03, 0xd0, 0x7f, 0xf1, 0x9c, 0xa5, 0x8c, 0xac, 0x95, 0xca, 0xca, 0x8e, 0x32, 0x44, 0xe9,
        0x81, 0x22, 0x41, 0x2e, 0x3a, 0xae, 0x03, 0x8d, 0xf2, 0xef, 0x24, 0x2d, 0x13, 0xab, 0x9f, 0xed,
        0x0c, 0x3d, 0x12, 0xa1, 0xc7, 0x8b, 0x9c, 0x7e, 0x84, 0x9e, 0xbc, 0xae, 0xe4, 0x35, 0x70, 0x84,
        0xc1, 0xfc, 0xcf, 0x76, 0xf4, 0x53, 0xbe, 0xf5, 0xaa, 0x26, 0xe1, 0x44, 0xa2, 0xa1, 0x79, 0x46,
        0x74, 0x5b, 0xe3, 0xe1, 0x8b, 0x62, 0xb0, 0x10, 0x6f, 0xa4, 0x72, 0x34, 0xb8, 0x76, 0x23, 0x87,
        0xa8, 0x75, 0xe5, 0x99, 0xe5, 0x1d, 0xa2, 0xd3, 0xdf, 0xed, 0xc3, 0x74, 0xb6, 0x14, 0x5b, 0x4e,
        0xd0, 0xea, 0xc7, 0x87, 0x87, 0x00, 0x00, 0x00,
    ]
}
