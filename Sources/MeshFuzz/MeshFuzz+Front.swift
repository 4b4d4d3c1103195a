import struct Foundation.Data
import MeshChat
import MeshChatKit
import MeshPlaces
import Places

extension MeshFuzz {
    /// The TOML configuration file: read, or refused with a located error.
    @Sendable static func fuzzConfig(_ bytes: [UInt8]) {
        _ = try? ConfigFile.parse(String(decoding: bytes, as: UTF8.self), file: "/fuzz/config.toml", home: "/fuzz")
    }

    /// Typed lines (one per input line): commands, `host:port`, distances, coordinates and boxes,
    /// and a lookup made of what parses (a typed `/near` builds one the same way); each line also as
    /// a peer's chat line checked for mentions (with its own start as a mention word) and as a
    /// peer's away text attachment.
    @Sendable static func fuzzCommand(_ bytes: [UInt8]) {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).prefix(64) {
            let text = String(line)
            _ = try? ChatCommand.parse(text)
            _ = Attention.mentions(text, anyOf: ["alice", String(text.prefix(3))])
            _ = AwayText.text(fromAttachment: Data(line.utf8))
            _ = try? HostPort.parse(text)
            _ = try? PeerAddress.parse(text)
            _ = try? BoundingBox(parsing: text)
            let coordinate = try? Coordinate(parsing: text)
            if let distance = try? Distance(parsing: text) {
                _ = distance.formatted(units: .metric)
                _ = distance.formatted(units: .imperial)
                _ = try? PlaceLookup(centre: coordinate ?? Coordinate(latitude: 51.5, longitude: -0.12), radius: distance, text: text)
            }
        }
    }

    /// Terminal key bytes, all at once and one byte at a time.
    @Sendable static func fuzzKeys(_ bytes: [UInt8]) {
        var whole = KeyDecoder()
        _ = whole.decode(bytes)
        var drip = KeyDecoder()
        for byte in bytes { _ = drip.decode([byte]) }
    }

    /// A place data file: the first byte picks the file name (GeoJSON, CSV, TSV, JSON or none) and
    /// a small chunk size, the rest is the file (gzip or not). Read a few bytes at a time it must
    /// load the same as read whole; what loads answers a few queries.
    @Sendable static func fuzzPlaceData(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let names = ["fuzz.geojson", "fuzz.csv", "fuzz.tsv", "fuzz.json", "fuzz"]
        let name = names[Int(first) % names.count]
        func load(_ limits: LoadLimits) -> Result<PlaceDataSet, PlacesError> {
            Result { () throws(PlacesError) in
                try PlaceDataSet(data: Data(bytes.dropFirst()), fileName: name, options: PlaceDataSet.Options(limits: limits))
            }
        }
        func outcome(_ result: Result<PlaceDataSet, PlacesError>) -> String {
            switch result {
            case .success(let set): "\(set.places.map(\.name)) \(set.places.map(\.coordinate)) \(set.problems)"
            case .failure(let error): error.message
            }
        }
        let loaded = load(.standard)
        let streamed = load(LoadLimits(chunkBytes: 1 + Int(first / 5) % 7))
        precondition(outcome(loaded) == outcome(streamed), "a small chunk size changed the load")
        guard case .success(let set) = loaded else { return }
        _ = set.summary.description
        guard let place = set.places.first else { return }
        _ = set.index.within(.kilometres(10), of: place.coordinate)
        _ = set.index.nearest(to: place.coordinate, k: 5)
        _ = set.index.clusters(zoom: 3)
        _ = set.index.describe(place.coordinate)?.formatted()
    }
}
