import Foundation
import Places
import Testing

/// Loads of the real data sets under ../shared/data, checked against the facts its README states.
/// Skipped (with the trait's comment as the reason) when that directory is absent.
@Suite("Real data sets load as documented", .enabled(if: OracleDataSet.available, "../shared/data is absent: data-set load tests skipped"))
struct DataSetLoadTests {
    private func data(_ file: String) throws -> Data {
        try Data(contentsOf: OracleDataSet.directory.appendingPathComponent(file))
    }

    @Test("the 2021 GeoJSON and the CSV made from it hold the same places in the same order")
    func geoJSONMatchesCSV() throws {
        let geo = try GeoJSONLoader().load(data("uk-eat-out-restaurants-2021-04-26.geojson.gz"))
        let csv = try CSVLoader().load(data("uk-eat-out-restaurants-64k.csv"))
        #expect(geo.problems.isEmpty && csv.problems.isEmpty)
        #expect(geo.places.count == 64_340)
        #expect(geo.places.map(\.name) == csv.places.map(\.name))
        #expect(geo.places.map(\.coordinate) == csv.places.map(\.coordinate))
        #expect(geo.places.map { $0.properties["postcode"] } == csv.places.map { $0.properties["postcode"] })
        #expect(geo.places[0].name == "\t500 Degrees Herne Hill")
    }

    @Test("the 2020 GeoJSON has up to 23 venues on one point, at 51.3746,-0.0951")
    func crowdedPoint() throws {
        let places = try GeoJSONLoader().load(data("uk-eat-out-restaurants-2020-08-05.geojson.gz")).places
        let counts = Dictionary(places.map { ($0.coordinate, 1) }, uniquingKeysWith: +)
        #expect(counts.count == 42_914)
        let top = counts.max { $0.value < $1.value }!
        #expect(top.value == 23)
        #expect(top.key == Coordinate(latitude: 51.3746, longitude: -0.0951))
        let index = PlaceIndex(places)
        #expect(index.nearest(to: top.key, k: 23).allSatisfy { $0.distance.metres == 0 })
        #expect(index.nearest(to: top.key, k: 24).last!.distance.metres > 0)
    }

    @Test("the headerless lon-first hotel sample loads all 218 rows by column index")
    func hotels() throws {
        let loader = CSVLoader(latitude: .index(1), longitude: .index(0), name: .index(2), hasHeader: false)
        let report = try loader.load(data("usa-hotels-sample-218.csv"))
        #expect(report.problems.isEmpty)
        #expect(report.places.count == 218)
        #expect(report.places.allSatisfy { (19.64318...61.42663).contains($0.latitude) && (-155.99542 ... -60.08186).contains($0.longitude) })
    }

    @Test("cities1000 (CRLF, quoted names) loads every row; quoted names keep their commas")
    func geonames() throws {
        let report = try CSVLoader().load(data("geonames-cities1000-rg.csv"))
        #expect(report.problems.isEmpty)
        #expect(report.places.count == 144_563)
        #expect(report.places.contains { $0.name == "Villa Presidente Frei, Nunoa, Santiago, Chile" })
        #expect(!report.places.contains { $0.name.hasSuffix("\r") || ($0.properties["cc"] ?? "").hasSuffix("\r") })
    }
}
