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
        #expect(report.places[0].property("postcode") == "SE24 0NG")
        #expect(report.places[0].property("name") == nil)
        #expect(report.places[0].orderedProperties.map(\.key) == ["postcode", "rank", "open"])
        #expect(report.places[1].properties.isEmpty)
    }

    @Test("property values: numbers as written, nested values as compact JSON in file order, escapes decoded, last repeated key wins")
    func propertyValues() throws {
        let json = #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"Caf\u00e9 \"Z\" \ud83c\udf55","n":1.50e2,"#
            + #""tags":{"b":[1, true, null],"a":"x\ny"},"dup":"first","dup":"last","nul":"a\u0000b"},"#
            + #""geometry":{"type":"Point","coordinates":[1,2,30]}}]}"#
        let report = try GeoJSONLoader().load(Data(json.utf8))
        #expect(report.problems.isEmpty)
        let place = try #require(report.places.first)
        #expect(place.name == "Café \"Z\" 🍕")
        #expect(place.property("n") == "1.50e2")
        #expect(place.property("tags") == #"{"b":[1,true,null],"a":"x\ny"}"#)
        #expect(place.property("dup") == "last")
        #expect(place.property("nul") == "a\u{0}b")
        #expect(place.orderedProperties.count == 4)
    }

    @Test("problems carry the line each bad feature starts on, for one feature per line and for pretty-printed files")
    func lineNumbers() throws {
        let oneLine = "{\"type\":\"FeatureCollection\",\"features\":[\n"
            + feature("\"ok\"", "[1,2]") + ",\n"
            + feature("\"far\"", "[200,2]") + ",\r\n"
            + feature("\"ok2\"", "[1,3]") + ",\n"
            + "{\"type\":\"Feature\",\"geometry\":null}\n]}\n"
        let report = try GeoJSONLoader().load(Data(oneLine.utf8))
        #expect(report.places.map(\.name) == ["ok", "ok2"])
        #expect(report.problems.map(\.line) == [3, 5])
        #expect(report.problems.map(\.feature) == [1, 3])
        #expect(report.problems[0].description.hasPrefix("line 3, feature 1: coordinates [200, 2] are out of range"))

        let pretty = """
            {
              "type": "FeatureCollection",
              "features": [
                {
                  "type": "Feature",
                  "properties": { "name": "A" },
                  "geometry": { "type": "Point", "coordinates": [0.1, 51.5] }
                },
                {
                  "type": "Feature",
                  "properties": { "name": "B" },
                  "geometry": { "type": "Point", "coordinates": ["x", 51.5] }
                }
              ]
            }
            """
        let prettyReport = try GeoJSONLoader().load(Data(pretty.utf8))
        #expect(prettyReport.places.map(\.name) == ["A"])
        #expect(prettyReport.problems.map(\.line) == [9])
        #expect(prettyReport.problems.first?.message.contains("not numbers") == true)
    }

    @Test("a feature with a string that is not UTF-8 is a problem on its line; the rest load")
    func invalidUTF8() throws {
        var bytes = Array("{\"type\":\"FeatureCollection\",\"features\":[\n".utf8)
        bytes += Array(feature("\"ok\"", "[1,2]").utf8) + Array(",\n".utf8)
        bytes += Array("{\"type\":\"Feature\",\"properties\":{\"name\":\"bad ".utf8) + [0xFF, 0xFE]
        bytes += Array("\"},\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}}\n]}".utf8)
        let report = try GeoJSONLoader().load(Data(bytes))
        #expect(report.places.map(\.name) == ["ok"])
        #expect(report.problems.map(\.line) == [3])
        #expect(report.problems.first?.message == "a string is not valid UTF-8")
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
        #expect(report.problems[0].description == "line 1, feature 1: geometry is null, not an object")
        #expect(report.problems[2].message.contains("out of range"))
        #expect(report.problems[3].message.contains("not numbers"))
        #expect(report.problems[4].message.contains("\"LineString\""))
    }

    @Test("gzip-compressed input is inflated")
    func gzip() throws {
        let report = try GeoJSONLoader().load(Data(GeoJSONFixtures.gzippedOnePoint))
        #expect(report.places == [Place(name: "Gz", coordinate: Coordinate(latitude: 2, longitude: 1))])
    }

    @Test("text that is not JSON names the line and column of the first error; no input crashes", arguments: [
        ("{\"type\":\"FeatureCollection\",\n\"features\":[{\"a\":1,}]}", "line 2, column 20: expected a string"),
        ("{\"type\":\"FeatureCollection\",\"features\":[1,2", "line 1, column 44: expected ',' or ']' in the features array, found the end of the input"),
        ("{\"features\":[]} trailing", "line 1, column 17: unexpected text after the top-level object"),
        ("{\"a\":\"unterminated", "line 1, column 6: a string is not closed"),
        ("{\"a\":01}", "line 1, column 7: expected ',' or '}' in the top-level object, found '1'"),
        ("{\"a\":-}", "line 1, column 6: a number has no digits"),
        ("{\"a\":\"\\x\"}", "line 1, column 7: invalid escape \\x"),
        ("{\"a\":tru}", "line 1, column 6: expected a value"),
        ("\u{FEFF}   \n", "the file holds only whitespace"),
        ("", "the file is empty"),
        (String(repeating: "[", count: 100_000), "nest deeper than 512 levels"),
        ("{\"features\":" + String(repeating: "[", count: 600), "nest deeper than 512 levels"),
    ])
    func syntaxErrors(text: String, message: String) {
        do {
            _ = try GeoJSONLoader().load(Data(text.utf8))
            Issue.record("no error for \(text.prefix(60).debugDescription)")
        } catch {
            #expect(error.code == .notJSON)
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("input that is not a FeatureCollection is a clear error")
    func notData() throws {
        #expect(throws: PlacesError.notJSONCode) { try GeoJSONLoader().load(Data("lat,lon\n1,2\n".utf8)) }
        #expect(throws: PlacesError.notFeatureCollectionCode) { try GeoJSONLoader().load(Data("{\"type\":\"Feature\"}".utf8)) }
        #expect(throws: PlacesError.notFeatureCollectionCode) { try GeoJSONLoader().load(Data("{\"type\":\"FeatureCollection\"}".utf8)) }
        #expect(throws: PlacesError.badGzipCode) { try GeoJSONLoader().load(Data(GeoJSONFixtures.gzippedOnePoint.prefix(40))) }
        #expect(throws: PlacesError.badGzipCode) { try GeoJSONLoader().load(Data([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff])) }
        #expect(throws: PlacesError.notFeatureCollectionCode) { try GeoJSONLoader().load(Data("[1, 2]".utf8)) }
        #expect(throws: PlacesError.notFeatureCollectionCode) {
            try GeoJSONLoader().load(Data("{\"type\":\"FeatureCollection\",\"features\":[],\"features\":[]}".utf8))
        }
        #expect(throws: PlacesError.notFeatureCollectionCode) {
            try GeoJSONLoader().load(Data("{\"type\":\"FeatureCollection\",\"features\":{}}".utf8))
        }
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
