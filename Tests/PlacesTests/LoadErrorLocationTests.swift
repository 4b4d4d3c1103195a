import Foundation
import Places
import Testing

/// Every problem that stops a load names its file, line and column as `FILE:LINE:COL: …`
/// (as far as each is known), so that with several files the user knows which one to fix.
@Suite("load errors name FILE:LINE:COL")
struct LoadErrorLocationTests {
    static func message(_ text: String, _ name: String) -> String {
        message(Data(text.utf8), name)
    }

    static func message(_ data: Data, _ name: String) -> String {
        do {
            _ = try PlaceDataSet(data: data, fileName: name)
            return "loaded"
        } catch {
            return error.message
        }
    }

    @Test("every loader problem, with the position it names", arguments: [
        ("", "x.csv", "x.csv:1:1: the file is empty"),
        ("", "x.geojson", "x.geojson:1:1: the file is empty"),
        ("\n  ", "x.geojson", "x.geojson:2:3: the file holds only whitespace"),
        ("nope", "x.geojson", "x.geojson:1:1: "),
        ("{\"type\":\n\"Feature", "x.geojson", "x.geojson:2:1: "),
        ("  [1, 2]", "x.geojson", "x.geojson:1:3: top level is an array, not an object"),
        ("{\"type\": \"Feature\", \"features\": []}", "x.geojson", "x.geojson:1:10: top-level \"type\" is \"Feature\", not \"FeatureCollection\""),
        ("{\"type\":\"FeatureCollection\",\n\"features\": 3}", "x.geojson", "x.geojson:2:13: \"features\" is a number, not an array"),
        ("{\"type\":\"FeatureCollection\",\"features\":[],\n \"features\":[]}", "x.geojson", "x.geojson:2:2: \"features\" appears a second time"),
        ("{\"features\":[]}", "x.geojson", "x.geojson:1:1: top-level \"type\" is missing"),
        ("{\"type\":\"FeatureCollection\",\"features\":[\n{\"type\":\"Feature\",\"geometry\":null}]}", "x.geojson",
         "x.geojson:2: none of 1 records held a usable place; the first: feature 0: "),
        ("lat,lon\n1,2\nx\u{0}y", "x.csv", "x.csv:3:2: binary data"),
        ("\"lat,lon\n", "x.csv", "x.csv:1: header: "),
        ("a,b\n1,2\n", "x.csv", "x.csv:1: no latitude column"),
        ("lat,lon,name\nabc,1,x\n", "x.csv", "x.csv:2: none of 1 records held a usable place; the first: "),
    ])
    func located(_ text: String, _ name: String, _ expected: String) {
        let message = Self.message(text, name)
        #expect(message.hasPrefix(expected), "\(message)")
    }

    @Test("a broken gzip stream names the file and the compressed byte offset (it has no lines)")
    func gzip() {
        let truncated = Data([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b, 0x4c])
        let message = Self.message(truncated, "x.geojson.gz")
        #expect(message.hasPrefix("x.geojson.gz: gzip stream truncated after 12 bytes"), "\(message)")
    }

    @Test("files from disk are named as the caller gave them; unreadable ones say why")
    func fromDisk() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("places-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.csv")
        try Data("lat,lon\n1,2\n\u{0}".utf8).write(to: file)
        do {
            _ = try PlaceDataSet.load(contentsOf: file)
            Issue.record("loaded")
        } catch {
            #expect(error.message.hasPrefix("\(file.path):3:1: binary data"), "\(error.message)")
            #expect(error.file == file.path && error.line == 3 && error.column == 1)
        }
        for (url, why) in [(directory.appendingPathComponent("none.csv"), "no such file"), (directory, "it is a directory")] {
            do {
                _ = try PlaceDataSet.load(contentsOf: url)
                Issue.record("loaded \(url.path)")
            } catch {
                #expect(error.message.hasPrefix("\(url.path): \(why)"), "\(error.message)")
            }
        }
    }
}
