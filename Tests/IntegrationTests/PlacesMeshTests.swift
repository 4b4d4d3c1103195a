import Foundation
import MeshTestSupport
import Testing

/// Places over the mesh (PROTOCOL.md §14) with real `meshchat` processes on loopback: lookups
/// answered across hops by the peer whose data covers the point, pins shared, caught up,
/// withdrawn and exported.
@Suite("places over the mesh", .serialized)
struct PlacesMeshTests {
    /// A small data set around Charing Cross, London; "Far Pizza" is 10 km north.
    static let fixture = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1280,51.5080]},"properties":{"name":"Pizza Express"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1200,51.5100]},"properties":{"name":"PIZZA hut"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1300,51.5070]},"properties":{"name":"Café Nero"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1000,51.6000]},"properties":{"name":"Far Pizza"}},
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1420,51.5010]},"properties":{"name":"Buckingham Palace"}}
        ]}
        """

    static let here = (lat: 51.5074, lon: -0.1278)

    /// alice — bob — carol on loopback (alice and carol not linked); carol holds the fixture.
    static func line(_ directory: TemporaryDirectory) async throws -> (alice: ChatProcess, bob: ChatProcess, carol: ChatProcess) {
        let data = directory.appending("london.geojson")
        try Data(fixture.utf8).write(to: URL(fileURLWithPath: data))
        let line = try await ChatLine.start(directory, carol: ["--places", data])
        return (line.alice, line.bob, line.carol)
    }

    /// Sends a line and waits for the first event after it that contains every fragment.
    @discardableResult
    static func ask(_ chat: ChatProcess, _ line: String, _ fragments: String...) async throws -> JSONLine {
        let mark = chat.output.count
        chat.send(line)
        let found = try await chat.waitForLine(from: mark) { line in fragments.allSatisfy { line.contains($0) } }
        return try #require(JSONLine(found))
    }

    static func stop(_ chats: ChatProcess...) async throws {
        for chat in chats { chat.closeInput() }
        for chat in chats { _ = try await chat.waitForExit() }
    }

    /// Haversine on the sphere of PROTOCOL.md §14 (R = 6,371,008.8 m), written out independently.
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let r = 6_371_008.8, p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180
        let dp = p2 - p1, dl = (lon2 - lon1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, sqrt(a)))
    }

    static func bearing(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180, dl = (lon2 - lon1) * .pi / 180
        let y = sin(dl) * cos(p2), x = cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl)
        let degrees = atan2(y, x) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    @Test("a peer without data asks across two hops: the answer comes from the peer whose data covers the point, with distance and bearing from me, text folded, the far place left out")
    func lookupAcrossHops() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try await Self.line(directory)
        alice.send("/near 2km")
        let unset = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"error\"", "/near")))
        #expect(unset.string("message")?.contains("/here") == true)

        alice.send("/here \(Self.here.lat),\(Self.here.lon)")
        try await alice.waitForEvent("\"event\":\"here\"", "\"set\":true")
        alice.send("/near 2km pizza")
        let line = try await alice.waitForEvent("\"event\":\"places\"")
        let event = try #require(JSONLine(line))
        let results = try #require(event.object["results"] as? [[String: Any]])
        #expect(results.map { $0["name"] as? String } == ["Pizza Express", "PIZZA hut"])
        for result in results {
            let lat = try #require(result["lat"] as? Double), lon = try #require(result["lon"] as? Double)
            let metres = try #require(result["distance_m"] as? Double)
            let degrees = try #require(result["bearing_deg"] as? Double)
            #expect(abs(metres - Self.distance(Self.here.lat, Self.here.lon, lat, lon)) < 0.2)
            #expect(abs(degrees - Self.bearing(Self.here.lat, Self.here.lon, lat, lon)) < 0.2)
            #expect((result["source"] as? [String: Any])?["name"] as? String == "carol")
            #expect(result["place_set"] as? String == "london.geojson")
        }
        let sources = try #require(event.object["sources"] as? [[String: Any]])
        #expect(sources.count == 1)
        #expect(sources.first?["status"] as? String == "answered")
        #expect(sources.first?["hops"] as? Int == 2)
        #expect(event.object["covered"] as? Bool == true)

        // Folding: "cafe" finds "Café Nero".
        alice.send("/near 500m cafe")
        let cafe = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"places\"", "\"text\":\"cafe\"")))
        #expect((cafe.object["results"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Café Nero"])

        // The relay cannot read the lookups: bob saw neither the query text nor the answers.
        #expect(!bob.output.contains { $0.contains("Pizza Express") || $0.contains("\"places\"") })
        try await Self.stop(alice, bob, carol)
    }

    @Test("a lookup nobody can answer says so at once; a peer with data answers from its own data and names where it is")
    func uncoveredAndLocal() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try await Self.line(directory)
        alice.send("/here -33.8688,151.2093")
        try await alice.waitForEvent("\"event\":\"here\"")
        let asked = ContinuousClock.now
        alice.send("/near 5km")
        let none = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"places\"")))
        #expect(none.object["covered"] as? Bool == false)
        #expect((none.object["results"] as? [Any])?.isEmpty == true)
        #expect(ContinuousClock.now - asked < .seconds(3))

        carol.send("/here \(Self.here.lat),\(Self.here.lon)")
        let here = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"here\"")))
        #expect(here.string("description")?.hasSuffix("of Pizza Express") == true)
        carol.send("/near 1.5km")
        let local = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"places\"")))
        let results = try #require(local.object["results"] as? [[String: Any]])
        #expect(results.map { $0["name"] as? String } == ["Pizza Express", "Café Nero", "PIZZA hut", "Buckingham Palace"])
        #expect(results.allSatisfy { $0["source"] as? String == "me" })
        let distances = results.compactMap { $0["distance_m"] as? Double }
        #expect(distances == distances.sorted())
        try await Self.stop(alice, bob, carol)
    }

    @Test("lookups beyond the rate limit are refused with the reason, and the answering peer keeps serving")
    func rateLimit() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try await Self.line(directory)
        alice.send("/here \(Self.here.lat),\(Self.here.lon)")
        try await alice.waitForEvent("\"event\":\"here\"")
        alice.send(lines: Array(repeating: "/near 1km", count: 25))
        let deadline = ContinuousClock.now + .seconds(60)
        while alice.output.filter({ $0.contains("\"event\":\"places\"") }).count < 25 {
            #expect(ContinuousClock.now < deadline, "25 lookups did not all end within 60 s")
            if ContinuousClock.now >= deadline { break }
            let seen = alice.output.count
            _ = try await alice.waitForLine(from: seen) { $0.contains("\"event\":\"places\"") }
        }
        let events = alice.output.filter { $0.contains("\"event\":\"places\"") }
        let refused = events.filter { $0.contains("rate limited") }
        let answered = events.filter { $0.contains("\"status\":\"answered\"") }
        // A burst of 10, then 5 per second: 25 lookups in well under 3 s cannot all be answered.
        #expect(answered.count >= 10)
        #expect(!refused.isEmpty)
        #expect(answered.count + refused.count == 25)
        try await Self.stop(alice, bob, carol)
    }

    @Test("pins: shared with everyone across hops, listed with distance and bearing, caught up by a node that joins later and after a restart, withdrawn everywhere, exported as GeoJSON")
    func pins() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try await Self.line(directory)
        carol.send("/here \(Self.here.lat),\(Self.here.lon)")
        try await carol.waitForEvent("\"event\":\"here\"")
        alice.send("/pin 51.5010,-0.1420 \"Meet here\" by the gates at 8")
        let pinned = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"pinned\"")))
        let id = try #require(pinned.object("pin")?["id"] as? String)
        let arrived = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"pin\"", id)))
        let pin = try #require(arrived.object("pin"))
        #expect(pin["label"] as? String == "Meet here")
        #expect(pin["note"] as? String == "by the gates at 8")
        #expect((pin["author"] as? [String: Any])?["name"] as? String == "alice")
        let metres = try #require(pin["distance_m"] as? Double)
        #expect(abs(metres - Self.distance(Self.here.lat, Self.here.lon, 51.5010, -0.1420)) < 0.2)
        try await bob.waitForEvent("\"event\":\"pin\"", id)

        // /pin N pins the Nth place of the last /near.
        carol.send("/near 300m")
        try await carol.waitForEvent("\"event\":\"places\"")
        carol.send("/pin 1 lunch?")
        let second = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"pinned\"")))
        #expect(second.object("pin")?["label"] as? String == "Pizza Express")
        try await alice.waitForEvent("\"event\":\"pin\"", "Pizza Express")

        // dave joins after both pins were broadcast: each author catches him up.
        let port = try #require(JSONLine(bob.output.first { $0.contains("\"event\":\"ready\"") } ?? "")?.int("port"))
        let dave = try ChatProcess.local("dave", directory, ["--connect", "127.0.0.1:\(port)"])
        try await dave.waitForEvent("\"event\":\"pin\"", id)
        try await dave.waitForEvent("\"event\":\"pin\"", "Pizza Express")
        dave.send("/pins")
        let listed = try #require(JSONLine(try await dave.waitForEvent("\"event\":\"pins\"")))
        #expect((listed.object["pins"] as? [[String: Any]])?.count == 2)

        // carol's pins survive a restart.
        try await Self.stop(carol)
        let carolAgain = try ChatProcess.local("carol", directory, ["--connect", "127.0.0.1:\(port)"])
        try await carolAgain.waitForEvent("\"event\":\"ready\"")
        carolAgain.send("/pins")
        let kept = try #require(JSONLine(try await carolAgain.waitForEvent("\"event\":\"pins\"")))
        let keptPins = try #require(kept.object["pins"] as? [[String: Any]])
        #expect(Set(keptPins.compactMap { $0["label"] as? String }) == ["Meet here", "Pizza Express"])
        #expect(keptPins.allSatisfy { $0["distance_m"] != nil })

        // Only the author may withdraw; then it is gone everywhere.
        carolAgain.send("/unpin all")
        try await carolAgain.waitForEvent("\"event\":\"unpinned\"", "Pizza Express")
        let remaining = try await Self.ask(carolAgain, "/pins", "\"event\":\"pins\"")
        #expect((remaining.object["pins"] as? [[String: Any]])?.compactMap { $0["label"] as? String } == ["Meet here"])
        carolAgain.send("/unpin 1")
        let refused = try #require(JSONLine(try await carolAgain.waitForEvent("\"event\":\"error\"", "/unpin")))
        #expect(refused.string("message")?.contains("only its author") == true)
        alice.send("/unpin")
        try await alice.waitForEvent("\"event\":\"unpinned\"", id)
        try await dave.waitForEvent("\"event\":\"unpinned\"", id)
        try await carolAgain.waitForEvent("\"event\":\"unpinned\"", id)
        let empty = try await Self.ask(dave, "/pins", "\"event\":\"pins\"")
        #expect((empty.object["pins"] as? [Any])?.isEmpty == true)

        // GeoJSON export opens as a FeatureCollection with [lon, lat].
        alice.send("/pin 51.5,-0.12 picnic")
        try await alice.waitForEvent("\"event\":\"pinned\"", "picnic")
        let file = directory.appending("pins.geojson")
        alice.send("/pins --geojson \(file)")
        try await alice.waitForEvent("\"event\":\"exported\"", "\"count\":1")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect(document["type"] as? String == "FeatureCollection")
        let feature = try #require((document["features"] as? [[String: Any]])?.first)
        #expect((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [-0.12, 51.5])
        #expect((feature["properties"] as? [String: Any])?["label"] as? String == "picnic")
        try await Self.stop(alice, bob, carolAgain, dave)
    }
}
