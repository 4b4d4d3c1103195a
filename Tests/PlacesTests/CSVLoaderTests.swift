import Foundation
import Places
import Testing

@Suite("CSVLoader")
struct CSVLoaderTests {
    private func load(_ text: String, _ loader: CSVLoader = CSVLoader()) throws(PlacesError) -> LoadReport {
        try loader.load(Data(text.utf8))
    }

    @Test("CRLF line ends, quoted fields with commas, quotes and a line break")
    func crlfAndQuotes() throws {
        let text = "lat,lon,name,admin1\r\n"
            + "42.57952,1.65362,El Tarter,Canillo\r\n"
            + "-33.45,-70.6,\"Villa Presidente Frei, Nunoa, Santiago, Chile\",\"Region, Metropolitana\"\r\n"
            + "51.5,-0.1,\"Meat\"\"N\"\" Plaice\",\"two\r\nlines\"\r\n"
            + "52.0,0.1,Last,NoLineEnd"
        let report = try load(text)
        #expect(report.problems.isEmpty)
        #expect(report.places.map(\.name) == ["El Tarter", "Villa Presidente Frei, Nunoa, Santiago, Chile", "Meat\"N\" Plaice", "Last"])
        #expect(report.places[1].properties == ["admin1": "Region, Metropolitana"])
        #expect(report.places[2].properties["admin1"] == "two\r\nlines")
        #expect(report.places[1].coordinate == Coordinate(latitude: -33.45, longitude: -70.6))
    }

    @Test("integer coordinates, names with tabs and padding kept as written, lat before or after lon")
    func messyValues() throws {
        let report = try load("name,postcode,lat,lon\n\t500 Degrees Herne Hill ,SE24 0NG,51,-6\n  Padded  ,X, 54.75 , -6.0 \n")
        #expect(report.problems.isEmpty)
        #expect(report.places.map(\.name) == ["\t500 Degrees Herne Hill ", "  Padded  "])
        #expect(report.places.map(\.displayName) == ["500 Degrees Herne Hill", "Padded"])
        #expect(report.places[0].coordinate == Coordinate(latitude: 51, longitude: -6))
        #expect(report.places[1].coordinate == Coordinate(latitude: 54.75, longitude: -6))
        #expect(report.places[0].properties == ["postcode": "SE24 0NG"])
    }

    @Test("bad rows are reported with their line numbers and skipped; the load goes on")
    func badRows() throws {
        let text = "lat,lon,name\n1,2,ok\nabc,2,bad lat\n\n91,2,too far north\n3,4\n5,181,too far east\n6,7,\"open\n8,9,never\n"
        let report = try load(text)
        #expect(report.places.map(\.name) == ["ok"])
        #expect(report.problems.map(\.line) == [3, 5, 6, 7, 8])
        #expect(report.problems[0].description.contains("line 3: latitude \"abc\""))
        #expect(report.problems[1].message.contains("outside -90...90"))
        #expect(report.problems[2].message.contains("2 field(s), need at least 3"))
        #expect(report.problems[4].message.contains("not closed"))
    }

    @Test("headerless lon-first hotel format with comma-space separators, by column index")
    func headerlessByIndex() throws {
        let loader = CSVLoader(latitude: .index(1), longitude: .index(0), name: .index(2), hasHeader: false)
        let report = try load("-71.26086, 42.48550, Best Western Inn-Sovereign, USA-United States, +1 781-275-6700\n", loader)
        #expect(report.places.count == 1)
        #expect(report.places[0].coordinate == Coordinate(latitude: 42.4855, longitude: -71.26086))
        #expect(report.places[0].name == " Best Western Inn-Sovereign")
        #expect(report.places[0].properties["column 5"] == " +1 781-275-6700")
    }

    @Test("properties: header order, extra fields as column N, a repeated header keeps the last value; equal to a dictionary-made place")
    func compactProperties() throws {
        let report = try load("lat,lon,name,a,b,a\n1,2,x,p,q,r\n3,4,y,p\n5,6,z,p,q,r,extra\n")
        #expect(report.problems.isEmpty)
        let (x, y, z) = (report.places[0], report.places[1], report.places[2])
        #expect(x.properties == ["a": "r", "b": "q"])
        #expect(x.orderedProperties.map(\.key) == ["a", "b"])
        #expect(x.property("a") == "r" && x.property("b") == "q" && x.property("lat") == nil)
        #expect(y.properties == ["a": "p"])
        #expect(z.properties == ["a": "r", "b": "q", "column 7": "extra"])
        let made = Place(name: "x", coordinate: Coordinate(latitude: 1, longitude: 2), properties: ["b": "q", "a": "r"])
        #expect(x == made)
        #expect(x.hashValue == made.hashValue)
        var changed = x
        changed.properties["b"] = "new"
        #expect(changed != x && changed.property("b") == "new" && changed.property("a") == "r")
    }

    @Test("a NUL byte in a field past the first 64 KiB is kept in the value")
    func nulInField() throws {
        var bytes = Array("lat,lon,name,note\n".utf8)
        while bytes.count < 70_000 { bytes += Array("1,2,pad,x\n".utf8) }
        bytes += Array("3,4,nul,a".utf8) + [0] + Array("b\n".utf8)
        let report = try CSVLoader().load(Data(bytes))
        #expect(report.problems.isEmpty)
        #expect(report.places.last?.property("note") == "a\u{0}b")
        #expect(report.places.last?.properties == ["note": "a\u{0}b"])
    }

    @Test("a field that is not UTF-8 makes its row a problem naming the field")
    func invalidUTF8() throws {
        let bytes = Array("lat,lon,name\n1,2,ok\n3,4,".utf8) + [0xC3, 0x28] + Array("\n5,6,é\n".utf8)
        let report = try CSVLoader().load(Data(bytes))
        #expect(report.places.map(\.name) == ["ok", "é"])
        #expect(report.problems.map(\.description) == ["line 3: field 3 is not valid UTF-8"])
    }

    @Test("coordinate columns are guessed from the header like csv2geojson (Latitude, Lng)")
    func guessedColumns() throws {
        let report = try load("Name,Latitude,Lng\nA,10,20\n")
        #expect(report.places.first?.coordinate == Coordinate(latitude: 10, longitude: 20))
        #expect(report.places.first?.name == "A")
    }

    @Test("input that is not CSV place data is a clear error")
    func notData() throws {
        #expect(throws: PlacesError.notCSVCode) { try load("") }
        #expect(throws: PlacesError.missingColumnsCode) { try load("{\"type\":\"FeatureCollection\"}\n") }
        #expect(throws: PlacesError.missingColumnsCode) { try load("a,b,c\n1,2,3\n") }
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D])
        #expect(throws: PlacesError.notCSVCode) { try CSVLoader().load(png) }
        do {
            _ = try load("lat,lon,name\nx,y,z\n")
            Issue.record("expected noPlaces")
        } catch {
            #expect(error.code == .noPlaces)
            #expect(error.description.contains("line 2"))
        }
    }
}

extension PlacesError {
    /// Values that compare equal to any error with that code (equality is by code only).
    static var notCSVCode: PlacesError { probe { () throws(PlacesError) -> LoadReport in try CSVLoader().load(Data()) } }
    static var missingColumnsCode: PlacesError { probe { () throws(PlacesError) -> LoadReport in try CSVLoader().load(Data("a\n1\n".utf8)) } }
    static var notJSONCode: PlacesError { probe { () throws(PlacesError) -> LoadReport in try GeoJSONLoader().load(Data("nope".utf8)) } }
    static var notFeatureCollectionCode: PlacesError { probe { () throws(PlacesError) -> LoadReport in try GeoJSONLoader().load(Data("[]".utf8)) } }
    static var badGzipCode: PlacesError { probe { () throws(PlacesError) -> LoadReport in try GeoJSONLoader().load(Data([0x1f, 0x8b, 0, 0])) } }

    private static func probe(_ body: () throws(PlacesError) -> LoadReport) -> PlacesError {
        do { _ = try body() } catch { return error }
        fatalError("probe did not throw")
    }
}
