import Foundation
import MeshLink
import MeshPlaces
import MeshSession
import MeshTestSupport
import MeshWire
import Places
import SwiftProtobuf
import Testing

/// The remote crash of issue 13: a place lookup with a radius of 1e19 or -1e308, sealed to a node
/// several hops away, trapped converting a `Double` to `Int`. Mallory (a session in this process,
/// writing its own queries) — bob — carol (real `meshchat` processes, carol with place data):
/// every hostile lookup is answered `refused` with the reason, and carol keeps serving.
@Suite("hostile place lookups", .serialized)
struct HostileLookupTests {
    static let fixture = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1280,51.5080]},"properties":{"name":"Pizza Express"}}
        ]}
        """

    /// A lookup from Charing Cross, changed by `hostile`.
    static func query(_ hostile: @Sendable (inout PlaceQueryPayload) -> Void) -> PlacesPayload {
        var query = PlaceQueryPayload()
        query.queryID = Data(NodeID.random().bytes)
        query.latitude = 51.5074
        query.longitude = -0.1278
        query.radiusM = 1_000
        query.limit = 20
        hostile(&query)
        var message = PlacesPayload()
        message.query = query
        return message
    }

    /// The hostile lookups and a fragment of the refusal each must get.
    static let hostile: [(String, @Sendable (inout PlaceQueryPayload) -> Void, String)] = [
        ("radius 1e19", { $0.radiusM = 1e19 }, "radius 1e+19 m is out of range"),
        ("radius -1e308", { $0.radiusM = -1e308 }, "radius -1e+308 m is out of range"),
        ("radius NaN", { $0.radiusM = .nan }, "radius nan m is out of range"),
        ("radius +infinity", { $0.radiusM = .infinity }, "radius inf m is out of range"),
        ("radius -infinity", { $0.radiusM = -.infinity }, "radius -inf m is out of range"),
        ("radius 9.3e18, just past Int.max", { $0.radiusM = 9.3e18 }, "radius 9.3e+18 m is out of range"),
        ("limit 2^32 - 1", { $0.limit = .max }, "limit 4294967295 is out of range"),
        ("latitude 1e300", { $0.latitude = 1e300 }, "is not a valid latitude,longitude"),
        ("longitude NaN, latitude -1e308", { $0.longitude = .nan; $0.latitude = -1e308 }, "is not a valid latitude,longitude"),
    ]

    @Test("lookups with a radius of 1e19, -1e308, NaN or ±infinity, a huge limit or latitude, sealed to a meshchat two hops away, are refused with the reason; it stays up and answers a valid lookup")
    func hostileLookupsAcrossAHop() async throws {
        let directory = TemporaryDirectory()
        let data = directory.appending("london.geojson")
        try Data(Self.fixture.utf8).write(to: URL(fileURLWithPath: data))
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob")], label: "bob")
        let port = try #require(Self.field("port", of: try await bob.waitForEvent("\"event\":\"ready\"")) as? Int)
        let carol = try ChatProcess(["--name", "carol", "--json", "--no-discovery", "--data-dir", directory.appending("carol"),
                                     "--connect", "127.0.0.1:\(port)", "--places", data, "--log-level", "notice"], label: "carol")
        let carolID = try NodeID(hex: try #require(Self.field("id", of: try await carol.waitForEvent("\"event\":\"ready\"")) as? String))

        var configuration = Session.Configuration()
        configuration.host = "127.0.0.1"
        let mallory = Session(peer: try LocalPeer(displayName: "mallory", identity: try LocalIdentity.generate()), configuration: configuration)
        let places = try mallory.register(channel: .places)
        _ = try await mallory.start()
        let runner = Task { try? await mallory.run() }
        var events = Events(iterator: mallory.events.makeAsyncIterator())
        var answers = Events(iterator: places.messages.makeAsyncIterator())
        mallory.connect(host: "127.0.0.1", port: port)
        do {
            let carolPeer = try await events.next(within: .seconds(20)) { event -> PeerID? in
                if case .reachabilityChanged(let peer, let route?) = event, peer.id == carolID, route.hops == 2 { return peer }
                return nil
            }
            for (name, change, refusal) in Self.hostile {
                let message = Self.query(change)
                try await places.send(try message.serializedData(), to: carolPeer)
                let answer = try await answers.answer(to: message.query.queryID, from: carolID)
                #expect(answer.refused.contains(refusal), "\(name): refused \"\(answer.refused)\"")
                #expect(answer.hits.isEmpty, "\(name)")
            }
            let valid = Self.query { _ in }
            try await places.send(try valid.serializedData(), to: carolPeer)
            let answer = try await answers.answer(to: valid.query.queryID, from: carolID)
            #expect(answer.refused.isEmpty)
            #expect(answer.hits.map(\.name) == ["Pizza Express"])
            #expect(carol.errors.contains("refused a places lookup"))
        } catch {
            Issue.record(error)
        }
        await mallory.disconnect()
        await runner.value
        for chat in [carol, bob] { chat.closeInput() }
        #expect(try await carol.waitForExit() == 0, "carol survived every lookup and quit normally")
        #expect(try await bob.waitForExit() == 0)
    }

    static func field(_ key: String, of line: String) -> Any? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[key]
    }
}

/// A session's events or a channel's messages, read with deadlines.
struct Events<Element: Sendable> {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    var iterator: EventQueue<Element>.AsyncIterator

    /// The first event `match` takes, skipping the others; an error at the deadline.
    mutating func next<T: Sendable>(within timeout: Duration, _ match: @escaping @Sendable (Element) -> T?) async throws -> T {
        let start = iterator
        let found = try await withThrowingTaskGroup(of: (T, EventQueue<Element>.AsyncIterator)?.self) { group in
            group.addTask {
                var iterator = start
                while let event = await iterator.next() {
                    if let value = match(event) { return (value, iterator) }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let (value, advanced) = found else { throw Timeout(description: "no matching event within \(timeout)") }
        iterator = advanced
        return value
    }

}

extension Events where Element == ChannelMessage {
    /// The answer to one lookup, sealed on channel 3 from one node.
    mutating func answer(to queryID: Data, from node: NodeID) async throws -> PlaceAnswerPayload {
        try await next(within: .seconds(10)) { message -> PlaceAnswerPayload? in
            guard message.delivery == .sealed, message.sender.id == node,
                  let places = try? PlacesPayload(serializedBytes: message.payload),
                  case .answer(let answer)? = places.body, answer.queryID == queryID else { return nil }
            return answer
        }
    }
}
