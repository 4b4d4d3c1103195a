import CZlib
import Foundation
import Places
import Testing

/// Loading a chunk at a time: every chunk size gives the same places, problems and errors (line
/// and column numbers across chunk boundaries, CRLF, quoted line breaks, escapes, gzip members).
@Suite("streaming loads: chunk boundaries change nothing")
struct StreamingLoadTests {
    static let chunkSizes = [1, 2, 3, 5, 64, LoadLimits.standard.chunkBytes]

    /// What a load gave, as comparable text: each place (name, coordinates, properties) and
    /// problem, or the error's message.
    static func outcome(_ data: Data, _ name: String, _ limits: LoadLimits = .standard) -> [String] {
        do {
            let set = try PlaceDataSet(data: data, fileName: name, options: PlaceDataSet.Options(limits: limits))
            return set.places.map { place in
                "\(place.name)|\(place.coordinate.latitude),\(place.coordinate.longitude)|"
                    + place.orderedProperties.map { "\($0.key)=\($0.value)" }.joined(separator: ";")
            } + set.problems.map(\.description)
        } catch {
            return ["error: \(error.message)"]
        }
    }

    static let csv = "\u{FEFF}lat,lon,name,note\r\n"
        + "1,2,\"Ærøskøbing, \"\"old\"\"\",\"two\r\nlines\"\r\n"
        + "\r\n"
        + "abc,2,bad,x\r"
        + "3,4,Łódź,\"three\nline\rends\"\n"
        + "5,6,\"unclosed,x\n"
    static let geoJSON = "{\r\n  \"type\": \"FeatureCollection\",\r\n  \"features\": [\r\n"
        + "    {\"type\":\"Feature\",\"properties\":{\"name\":\"Caf\\u00e9 \\ud83c\\udf55\",\"n\":[1,{\"a\":null}]},"
        + "\"geometry\":{\"type\":\"Point\",\"coordinates\":[-6,54.7529]}},\r\n"
        + "    {\"type\":\"Feature\",\"properties\":{},\"geometry\":{\"type\":\"Point\",\"coordinates\":[200,1]}},\n"
        + "    {\"type\":\"Feature\",\"properties\":{\"name\":\"x\\ty\"},\"geometry\":{\"type\":\"Point\",\"coordinates\":[1.5e1,-2E-1]}}\n"
        + "  ]\n}\n"

    @Test("CSV and GeoJSON, plain and gzip (in several members), at every chunk size", arguments: [
        (csv, "x.csv"), (geoJSON, "x.geojson"),
        (csv.replacingOccurrences(of: ",", with: "\t"), "x.tsv"),
        (geoJSON.replacingOccurrences(of: "]\n}", with: "]\n} x"), "x.geojson"),
        (geoJSON.replacingOccurrences(of: "\"x\\ty\"", with: "\"x\\qy\""), "x.geojson"),
        (geoJSON.replacingOccurrences(of: "[1,{", with: "[1,,{"), "x.geojson"),
    ])
    func sameAtEveryChunkSize(_ text: String, _ name: String) {
        let bytes = Array(text.utf8)
        let expected = Self.outcome(Data(bytes), name)
        #expect(expected.count >= 1)
        let gzipped = Data(GzipWriter.member(Array(bytes.prefix(10))) + GzipWriter.member(Array(bytes.dropFirst(10))))
        for chunk in Self.chunkSizes {
            let limits = LoadLimits(chunkBytes: chunk)
            #expect(Self.outcome(Data(bytes), name, limits) == expected, "chunk \(chunk)")
            let inflated = Self.outcome(gzipped, name + ".gz", limits).map { $0.replacingOccurrences(of: name + ".gz", with: name) }
            #expect(inflated == expected, "gzip, chunk \(chunk)")
        }
    }

    @Test("the expected results, so the comparison above compares something")
    func expectedResults() {
        let csv = Self.outcome(Data(Self.csv.utf8), "x.csv")
        #expect(csv == [
            "Ærøskøbing, \"old\"|1.0,2.0|note=two\r\nlines",
            "Łódź|3.0,4.0|note=three\nline\rends",
            "line 5: latitude \"abc\" (column 1) is not a number",
            "line 9: quoted field opened on line 9 is not closed before the end of the file",
        ])
        let geo = Self.outcome(Data(Self.geoJSON.utf8), "x.geojson")
        #expect(geo == [
            "Café 🍕|54.7529,-6.0|n=[1,{\"a\":null}]",
            "x\ty|-0.2,15.0|",
            "line 5, feature 1: coordinates [200, 1] are out of range (lon -180...180, lat -90...90)",
        ])
        let broken = Self.outcome(Data(Self.geoJSON.replacingOccurrences(of: "\"x\\ty\"", with: "\"x\\qy\"").utf8), "x.geojson")
        #expect(broken == ["error: x.geojson:6:46: invalid escape \\q in a string"])
    }

    @Test("the real data sets load the same read 4 KiB at a time", .enabled(if: OracleDataSet.available))
    func realData() throws {
        for file in ["geonames-cities1000-rg.csv", "uk-eat-out-restaurants-2021-04-26.geojson.gz"] {
            let data = try Data(contentsOf: OracleDataSet.directory.appendingPathComponent(file))
            let whole = Self.outcome(data, file)
            #expect(whole.count > 60_000)
            #expect(Self.outcome(data, file, LoadLimits(chunkBytes: 4096)) == whole, "\(file)")
        }
    }
}

/// Every limit refuses the file with `tooLarge`, naming file, line and column where the field,
/// record or count went over, at every chunk size.
@Suite("load limits")
struct LoadLimitTests {
    static let limits = LoadLimits(maxFieldBytes: 20, maxRecordBytes: 100, maxPlaces: 2, maxSkipped: 2)
    static let collection = "{\"type\":\"FeatureCollection\",\"features\":["
    static let hundredBytes = "[" + String(repeating: "1,", count: 60) + "1]"

    @Test("each limit, where it is named", arguments: [
        ("lat,lon,name\n1,2,\"ab\r\ncdefghijklmnopqrstu\"\n", "x.csv", "x.csv:2:5: field 3 is longer than 20 bytes (the limit for one field)"),
        ("lat,lon,name\n1,2,x\n" + String(repeating: "abcdefg,", count: 15) + "\n", "x.csv",
         "x.csv:3:1: the row is longer than 100 bytes (the limit for one record)"),
        ("lat,lon,name\n1,2,a\n3,4,b\n5,6,c\n", "x.csv", "x.csv:4:1: more than 2 places (the limit for one file)"),
        ("lat,lon,name\nx,2,a\nx,4,b\nx,6,c\n", "x.csv", "x.csv:4:1: more than 2 records skipped (the limit for one file)"),
        (collection + "\n {\"properties\":{\"name\":\"123456789012345678901\"}}]}", "x.geojson",
         "x.geojson:2:24: a string is longer than 20 bytes (the limit for one field)"),
        (collection + "\n {\"properties\":{\"name\":\"1234567890\\u00e912345678901\"}}]}", "x.geojson",
         "x.geojson:2:24: a string is longer than 20 bytes (the limit for one field)"),
        (collection + "{},\n {\"a\":" + hundredBytes + "}]}", "x.geojson", "x.geojson:2:2: feature 1 is longer than 100 bytes (the limit for one record)"),
        (collection + "{" + String(repeating: " ", count: 120) + "}]}", "x.geojson", "x.geojson:1:41: feature 0 is longer than 100 bytes (the limit for one record)"),
        (collection + "],\"x\":" + hundredBytes + "}", "x.geojson",
         "x.geojson:1:43: the top-level member \"x\" is longer than 100 bytes (the limit for one record)"),
        (collection + "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}},{},{},{}]}", "x.geojson",
         "x.geojson:1:114: more than 2 records skipped (the limit for one file)"),
    ])
    func refused(_ text: String, _ name: String, _ expected: String) {
        for chunk in StreamingLoadTests.chunkSizes {
            var limits = Self.limits
            limits.chunkBytes = chunk
            #expect(StreamingLoadTests.outcome(Data(text.utf8), name, limits) == ["error: \(expected)"], "chunk \(chunk)")
        }
    }

    @Test("whitespace between records, blank lines and a file under every limit load at every chunk size")
    func underTheLimits() {
        let texts = [
            (Self.collection + "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}}"
                + String(repeating: "\r\n", count: 200) + "]" + String(repeating: " ", count: 200) + ",\"x\":1}" + String(repeating: "\n", count: 200),
             "x.geojson", ["|2.0,1.0|"]),
            ("lat,lon,name" + String(repeating: "\r\n", count: 200) + "1,2,\"12345678901234567890\"\n", "x.csv", ["12345678901234567890|1.0,2.0|"]),
        ]
        for (text, name, expected) in texts {
            for chunk in StreamingLoadTests.chunkSizes {
                var limits = Self.limits
                limits.chunkBytes = chunk
                #expect(StreamingLoadTests.outcome(Data(text.utf8), name, limits) == expected, "\(name), chunk \(chunk)")
            }
        }
    }

    @Test("limits set out of range through the properties are clamped, not trapped on")
    func outOfRangeLimits() {
        var limits = LoadLimits()
        limits.chunkBytes = 0
        limits.maxRecordBytes = .max
        limits.maxFieldBytes = .max
        for (text, name) in [(StreamingLoadTests.csv, "x.csv"), (StreamingLoadTests.geoJSON, "x.geojson")] {
            let data = Data(text.utf8)
            #expect(StreamingLoadTests.outcome(data, name, limits) == StreamingLoadTests.outcome(data, name))
        }
    }

    @Test("text past maxTextBytes refuses a gzip file, naming it")
    func tooMuchText() {
        let bomb = Data(GzipWriter.member(Array("lat,lon,name\n".utf8) + [UInt8](repeating: 0x0A, count: 10_000)))
        let outcome = StreamingLoadTests.outcome(bomb, "x.csv.gz", LoadLimits(maxTextBytes: 1000))
        #expect(outcome == ["error: x.csv.gz: the file holds more than 1000 bytes of text (the limit for one file)"])
        #expect(StreamingLoadTests.outcome(bomb, "x.csv.gz") == [])
    }
}

/// Decompression bombs and huge fields, loaded by `placesprobe` (``PlaceDataSet/load(contentsOf:options:)``
/// in a process of its own): each is refused at the field or record that goes over its limit,
/// and the process's peak resident memory (VmHWM) stays under 64 MB.
@Suite("a bomb costs one record of memory")
struct BombMemoryTests {
    static let bound = 64 << 20

    struct Probe: Decodable {
        let places: Int
        let error: String
        let vmHWM: Int
    }

    /// The directory of the built executables: `$MESHCHAT_BIN`'s, else this package's `.build/debug`.
    static var probePath: String {
        if let bin = ProcessInfo.processInfo.environment["MESHCHAT_BIN"], !bin.isEmpty {
            return URL(fileURLWithPath: bin).deletingLastPathComponent().appendingPathComponent("placesprobe").path
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/placesprobe").path
    }

    static func probe(_ file: URL) throws -> Probe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probePath)
        process.arguments = [file.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(Probe.self, from: data)
    }

    /// Writes a file into a fresh temporary directory, calls `body`, and removes the directory.
    static func withFile(_ name: String, _ write: (FileHandle) throws -> Void, _ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("places-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        try write(handle)
        try handle.close()
        try body(url)
    }

    /// 1 GiB of one byte, as 1,024 gzip members of 1 MiB each (about 1 MB of file).
    static func gigabyte(of byte: UInt8, to handle: FileHandle) throws {
        let member = Data(GzipWriter.member([UInt8](repeating: byte, count: 1 << 20)))
        for _ in 0..<1024 { try handle.write(contentsOf: member) }
    }

    /// Writes a file, loads it in `placesprobe`, and expects the refusal `expected(path)` at a
    /// peak RSS under ``bound``.
    static func expectRefused(_ name: String, _ write: (FileHandle) throws -> Void, _ expected: (String) -> String) throws {
        try withFile(name, write) { url in
            let probe = try probe(url)
            #expect(probe.error == expected(url.path))
            #expect(probe.vmHWM > 0 && probe.vmHWM < bound, "peak RSS \(probe.vmHWM) loading \(name)")
        }
    }

    @Test("a 1 MB gzip file holding a 1 GiB CSV field")
    func csvBomb() throws {
        try Self.expectRefused("bomb.csv.gz", { handle in
            try handle.write(contentsOf: Data(GzipWriter.member(Array("lat,lon,name\n1,2,".utf8))))
            try Self.gigabyte(of: UInt8(ascii: "a"), to: handle)
            let size = try handle.offset()
            #expect(size < 2 << 20)
        }) { "\($0):2:5: field 3 is longer than 65536 bytes (the limit for one field)" }
    }

    @Test("a 1 MB gzip file holding a GeoJSON feature of 1 GiB of spaces")
    func geoJSONBomb() throws {
        try Self.expectRefused("bomb.geojson.gz", { handle in
            try handle.write(contentsOf: Data(GzipWriter.member(Array("{\"type\":\"FeatureCollection\",\"features\":[\n{\"type\":".utf8))))
            try Self.gigabyte(of: UInt8(ascii: " "), to: handle)
        }) { "\($0):2:1: feature 0 is longer than 1048576 bytes (the limit for one record)" }
    }

    @Test("a 100 MB JSON string and a 100 MB CSV field, plain files")
    func hugeFields() throws {
        let hundred = Data(repeating: UInt8(ascii: "x"), count: 100 << 20)
        let line2 = "{\"type\":\"Feature\",\"properties\":{\"name\":\""
        try Self.expectRefused("big.geojson", { handle in
            try handle.write(contentsOf: Data("{\"type\":\"FeatureCollection\",\"features\":[\n\(line2)".utf8))
            try handle.write(contentsOf: hundred)
            try handle.write(contentsOf: Data("\"}}]}".utf8))
        }) { "\($0):2:\(line2.utf8.count): a string is longer than 65536 bytes (the limit for one field)" }
        try Self.expectRefused("big.csv", { handle in
            try handle.write(contentsOf: Data("lat,lon,name\r\n1,2,x\r\n3,4,\"a\r\nb".utf8))
            try handle.write(contentsOf: hundred)
            try handle.write(contentsOf: Data("\"\r\n".utf8))
        }) { "\($0):3:5: field 3 is longer than 65536 bytes (the limit for one field)" }
    }

    @Test("the probe measures: a real data set loads and reports its places")
    func probeWorks() throws {
        try Self.withFile("ok.csv", { handle in
            try handle.write(contentsOf: Data("lat,lon,name\n1,2,a\n3,4,b\n".utf8))
        }) { url in
            let probe = try Self.probe(url)
            #expect(probe.error == "" && probe.places == 2)
            #expect(probe.vmHWM > 1 << 20)
        }
    }
}

/// gzip writing for the tests, through zlib's deflate.
enum GzipWriter {
    /// The bytes as one gzip member.
    static func member(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return []
        }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        input.withUnsafeMutableBufferPointer { inBuf in
            out.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = uInt(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(outBuf.count)
                _ = deflate(&stream, Z_FINISH)
            }
        }
        out.removeSubrange(Int(stream.total_out)...)
        return out
    }
}
