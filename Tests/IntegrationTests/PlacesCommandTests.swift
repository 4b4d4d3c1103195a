import Foundation
import MeshTestSupport
import Testing

/// `meshchat places query` as a script meets it: the real binary, small fixture files written
/// here, and the shared data sets when `../shared` is beside the checkout.
@Suite("meshchat places query")
struct PlacesCommandTests {
    /// What one run of the binary did.
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs `meshchat ARGUMENTS` to completion, stdout and stderr captured apart (through files,
    /// so a large output cannot block the child).
    static func meshchat(_ arguments: [String]) throws -> Run {
        let directory = TemporaryDirectory("places-run")
        let out = directory.appending("stdout"), err = directory.appending("stderr")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = ChatProcess.binDirectory.appendingPathComponent("meshchat")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                   stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// `meshchat places query --data FILE ARGUMENTS`.
    static func query(_ file: String, _ arguments: [String]) throws -> Run {
        try meshchat(["places", "query", "--data", file] + arguments)
    }

    /// A JSON object per line.
    static func objects(_ run: Run) throws -> [[String: Any]] {
        try run.lines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// Fixtures: London-ish places (CSV, with two bad rows), Pacific islands (GeoJSON, one bad
    /// feature), a headerless lon-first file.
    final class Fixtures: Sendable {
        let directory = TemporaryDirectory("places-fixtures")
        var csv: String { directory.appending("london.csv") }
        var geoJSON: String { directory.appending("pacific.geojson") }
        var headerless: String { directory.appending("hotels.txt") }

        init() throws {
            let csv = """
                name,lat,lon,kind
                Clapham,51.4613,-0.1383,town
                Brixton,51.4627,-0.1145,town
                bad latitude,north,-0.1,x
                Battersea,51.4748,-0.1555,town
                Zürich Café,51.49,-0.10,cafe
                too far north,91,0,x
                Wimbledon,51.4214,-0.2064,town

                """
            try Data(csv.utf8).write(to: URL(fileURLWithPath: self.csv))
            let geoJSON = """
                {"type":"FeatureCollection","features":[
                {"type":"Feature","properties":{"name":"Suva","country":"FJ"},"geometry":{"type":"Point","coordinates":[178.44,-18.14]}},
                {"type":"Feature","properties":{"name":"Apia","country":"WS"},"geometry":{"type":"Point","coordinates":[-171.76,-13.83]}},
                {"type":"Feature","properties":{"name":"Nowhere"},"geometry":null},
                {"type":"Feature","properties":{"name":"Nuku'alofa","country":"TO"},"geometry":{"type":"Point","coordinates":[-175.2,-21.14]}}
                ]}

                """
            try Data(geoJSON.utf8).write(to: URL(fileURLWithPath: self.geoJSON))
            let hotels = "-71.26086, 42.48550, Best Western Inn-Sovereign, USA\n-93.71701, 41.64753, Wells Bed & Breakfast, USA\n"
            try Data(hotels.utf8).write(to: URL(fileURLWithPath: headerless))
        }
    }

    @Test("--near with --limit prints a table nearest first: name, distance, direction, lat, lon; load problems on stderr with lines")
    func nearTable() throws {
        let f = try Fixtures()
        let run = try Self.query(f.csv, ["--near", "51.4613,-0.1383", "--limit", "3"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 4, "\(run.stdout)")
        #expect(run.lines[0].split(separator: " ", omittingEmptySubsequences: true) == ["NAME", "DISTANCE", "DIR", "LAT", "LON"])
        #expect(run.lines[1].hasPrefix("Clapham ") && run.lines[1].contains(" 0 m ") && run.lines[1].contains("51.4613"))
        #expect(run.lines[2].hasPrefix("Brixton ") && run.lines[2].contains("1.7 km") && run.lines[2].contains(" E "))
        #expect(run.lines[3].hasPrefix("Battersea ") && run.lines[3].contains("1.9 km") && run.lines[3].contains(" NW "))
        // The bad rows are named with their lines; the good ones were still queried.
        #expect(run.stderr.contains("\(f.csv):4: latitude \"north\" (column 2) is not a number"), "\(run.stderr)")
        #expect(run.stderr.contains("\(f.csv):7: latitude 91 is outside -90...90"), "\(run.stderr)")
        #expect(run.stderr.contains("skipped 2 of 7 records"), "\(run.stderr)")
        let miles = try Self.query(f.csv, ["--near", "51.4613,-0.1383", "--limit", "2", "--units", "imperial"])
        #expect(miles.lines[2].contains("1.0 mi"), "\(miles.stdout)")
    }

    @Test("--json: one object per result with name, lat, lon, distance_m, bearing_deg, compass, index, dataset, properties")
    func jsonFields() throws {
        let f = try Fixtures()
        let run = try Self.query(f.csv, ["--near", "51.4613,-0.1383", "--radius", "2km", "--json"])
        #expect(run.status == 0)
        let objects = try Self.objects(run)
        #expect(objects.map { $0["name"] as? String } == ["Clapham", "Brixton", "Battersea"])
        let brixton = objects[1]
        #expect(brixton["lat"] as? Double == 51.4627 && brixton["lon"] as? Double == -0.1145)
        let metres = try #require(brixton["distance_m"] as? Double)
        #expect(abs(metres - 1_660) < 30, "\(metres)")
        let bearing = try #require(brixton["bearing_deg"] as? Double)
        #expect(bearing > 80 && bearing < 90)
        #expect(brixton["compass"] as? String == "E")
        #expect(brixton["index"] as? Int == 1)
        #expect(brixton["dataset"] as? String == "london")
        #expect((brixton["properties"] as? [String: String]) == ["kind": "town"])
        let distances = objects.compactMap { $0["distance_m"] as? Double }
        #expect(distances == distances.sorted() && distances.allSatisfy { $0 <= 2_000 })
        let limited = try Self.query(f.csv, ["--near", "51.4613,-0.1383", "--radius", "2km", "--json", "--limit", "1"])
        #expect(limited.lines.count == 1)
    }

    @Test("--bbox across the antimeridian from a GeoJSON file; a bad feature is reported with its line and feature index")
    func boxAcrossTheAntimeridian() throws {
        let f = try Fixtures()
        let run = try Self.query(f.geoJSON, ["--bbox", "-22,170,-10,-170", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let names = try Self.objects(run).compactMap { $0["name"] as? String }
        #expect(Set(names) == ["Suva", "Apia", "Nuku'alofa"])
        #expect(run.stderr.contains("\(f.geoJSON):4: feature 2: geometry is null, not an object"), "\(run.stderr)")
        let west = try Self.query(f.geoJSON, ["--bbox", "-22,170,-10,180", "--json"])
        #expect(try Self.objects(west).compactMap { $0["name"] as? String } == ["Suva"])
    }

    @Test("--name finds prefixes then substrings, ignoring case and accents; with --near ranked by distance")
    func names() throws {
        let f = try Fixtures()
        let run = try Self.query(f.csv, ["--name", "ZURICH CAFE", "--json"])
        let objects = try Self.objects(run)
        #expect(objects.map { $0["name"] as? String } == ["Zürich Café"])
        #expect(objects.first?["match"] as? String == "prefix" && objects.first?["distance_m"] == nil)
        let near = try Self.query(f.csv, ["--name", "a", "--near", "51.4214,-0.2064", "--json"])
        #expect(try Self.objects(near).compactMap { $0["name"] as? String } == ["Clapham", "Battersea", "Zürich Café"])
        let table = try Self.query(f.csv, ["--name", "ton"])
        #expect(table.lines.count == 2 && table.lines[1].hasPrefix("Brixton") && table.lines[1].contains("substring"), "\(table.stdout)")
        let none = try Self.query(f.csv, ["--name", "qqq"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("no places match"))
    }

    @Test("a headerless file with columns by number, lon first; GeoJSON name property by --name-field")
    func columnOptions() throws {
        let f = try Fixtures()
        let run = try Self.query(f.headerless, ["--no-header", "--lat-field", "#2", "--lon-field", "#1", "--name-field", "#3",
                                                "--near", "42.4,-71.2", "--limit", "1", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.objects(run).first?["name"] as? String == "Best Western Inn-Sovereign")
        let byCountry = try Self.query(f.geoJSON, ["--name-field", "country", "--name", "ws", "--json"])
        #expect(try Self.objects(byCountry).first?["name"] as? String == "WS")
    }

    @Test("a bad command line exits 64 with a message naming what was wrong, and prints no results", arguments: [
        (["--near", "91,0"], "--near: latitude 91 in \"91,0\" is outside -90...90"),
        (["--near", "51.5"], "--near: \"51.5\" is not LAT,LON"),
        (["--near", "abc,1"], "--near: latitude \"abc\""),
        (["--near", "51,0", "--radius", "5 parsecs"], "--radius: distance \"5 parsecs\" has unknown unit \"parsecs\""),
        (["--near", "51,0", "--radius", "-5km"], "is negative"),
        (["--near", "51,0", "--bbox", "50,-1,52,1"], "--near and --bbox cannot be combined"),
        (["--name", "x", "--bbox", "50,-1,52,1"], "--name and --bbox cannot be combined"),
        (["--radius", "5mi"], "--radius needs --near"),
        ([], "Give --near LAT,LON"),
        (["--bbox", "52,0,50,1"], "--bbox: south edge 52.0 is north of the north edge 50.0"),
        (["--near", "51,0", "--limit", "0"], "--limit 0 is not a count"),
        (["--name", "  "], "--name \"  \" has nothing to search for"),
        (["--near", "51,0", "--delimiter", "ab"], "--delimiter \"ab\" is not one ASCII character"),
        (["--near", "51,0", "--lat-field", "#0"], "--lat-field \"#0\" is not a column number"),
        (["--near", "51,0", "--units", "furlongs"], "'furlongs' is invalid for '--units"),
        (["--near", "51,0", "--frobnicate"], "Unknown option '--frobnicate'"),
    ])
    func badArguments(arguments: [String], message: String) throws {
        let f = try Fixtures()
        let run = try Self.query(f.csv, arguments)
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test("a file that cannot be read or is not place data exits 1 naming the file or what is wrong")
    func badFiles() throws {
        let directory = TemporaryDirectory("places-bad")
        let missing = try Self.query(directory.appending("missing.csv"), ["--near", "51,0"])
        #expect(missing.status == 1 && missing.stderr.contains("\(directory.appending("missing.csv")): no such file"))
        let binary = directory.appending("image.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00]).write(to: URL(fileURLWithPath: binary))
        let png = try Self.query(binary, ["--near", "51,0"])
        #expect(png.status == 1 && png.stderr.contains("\(binary):3:1: binary data"), "\(png.stderr)")
        let broken = directory.appending("broken.geojson")
        try Data("{\"type\":\"FeatureCollection\",\n\"features\":[{]}".utf8).write(to: URL(fileURLWithPath: broken))
        let json = try Self.query(broken, ["--near", "51,0"])
        #expect(json.status == 1 && json.stderr.contains("meshchat places: \(broken):2:14: "), "\(json.stderr)")
        #expect(missing.stdout.isEmpty && png.stdout.isEmpty && json.stdout.isEmpty)
    }

    @Test("the chat's own command line is unchanged: meshchat --help is the chat's, places has its own help")
    func helpStaysSeparate() throws {
        let chat = try Self.meshchat(["--help"])
        #expect(chat.status == 0 && chat.stdout.contains("USAGE: meshchat") && chat.stdout.contains("--hop-limit")
                && chat.stdout.contains("meshchat places query --help"))
        let places = try Self.meshchat(["places", "query", "--help"])
        #expect(places.status == 0 && places.stdout.contains("USAGE: meshchat places query") && places.stdout.contains("--lat-field"))
    }

    /// `../shared/data` (or `$MESHCHAT_SHARED_DIR/data`), if present.
    static let sharedData: String? = {
        let environment = ProcessInfo.processInfo.environment
        let shared = environment["MESHCHAT_SHARED_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ChatProcess.packageRoot.deletingLastPathComponent().appendingPathComponent("shared").path
        let data = shared + "/data"
        return FileManager.default.fileExists(atPath: data + "/geonames-cities1000-rg.csv") ? data : nil
    }()

    @Test("real data sets: the 145k GeoNames cities CSV and the 55k UK restaurants GeoJSON (gz)")
    func realData() throws {
        guard let data = Self.sharedData else {
            print("SKIPPED: meshchat places query on real data (../shared/data not found)")
            if ProcessInfo.processInfo.environment["CI"].map({ !$0.isEmpty }) ?? false {
                Issue.record("CI is set but ../shared/data was not found")
            }
            return
        }
        let cities = try Self.query(data + "/geonames-cities1000-rg.csv", ["--near", "51.5074,-0.1278", "--limit", "3", "--json"])
        #expect(cities.status == 0 && cities.stderr.isEmpty, "\(cities.stderr)")
        let nearest = try Self.objects(cities)
        #expect(nearest.count == 3)
        #expect((nearest.first?["properties"] as? [String: String])?["cc"] == "GB")
        let restaurants = try Self.query(data + "/uk-eat-out-restaurants-2020-08-05.geojson.gz", ["--near", "51.4613,-0.1383", "--radius", "5mi", "--json"])
        #expect(restaurants.status == 0, "\(restaurants.stderr)")
        let found = try Self.objects(restaurants)
        #expect(found.count > 500, "\(found.count)")
        let distances = found.compactMap { $0["distance_m"] as? Double }
        #expect(distances.count == found.count && distances == distances.sorted() && (distances.last ?? .infinity) <= 8_046.72)
        let samoa = try Self.query(data + "/geonames-cities15000.csv", ["--bbox", "-15,-173,-13,-171", "--json"])
        #expect(try Self.objects(samoa).contains { ($0["properties"] as? [String: String])?["cc"] == "WS" })
    }
}
