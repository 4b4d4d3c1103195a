import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Three hosts in a line, A—B—C (scripts/netns-hosts "A-B B-C": A and C share no link and do not
/// discover each other), each with its own avahi-daemon; peers find each other with no address
/// given. Needs root; where it cannot run, it fails rather than skips (CI runs as root).
@Suite("three hosts in a line (network namespaces)", .serialized)
struct MeshHostsTests {
    @Test("A's private line reaches C through B, B never sees its text, A gets the receipt; with B killed, queued lines arrive once, in order, when B is back")
    func relayAcrossHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "mcm\(getpid() % 100000)-"
        try MultiHostTests.hosts(["up", "A-B B-C"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        func start(_ name: String, on host: String, extra: [String] = []) throws -> ChatProcess {
            try MultiHostTests.peer(name, on: host, prefix: prefix, service: service, directory, extra: extra)
        }
        let alice = try start("alice", on: "A")
        // B logs everything it does, so that its logs would show a leaked text.
        var bob = try start("bob", on: "B", extra: ["--log-level", "trace"])
        let carol = try start("carol", on: "C")

        let reachable = try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"carol\"", timeout: .seconds(30))
        #expect(JSONLine(reachable)?.int("hops") == 2, "\(reachable)")
        #expect(JSONLine(reachable)?.object("via")?["name"] as? String == "bob", "\(reachable)")
        alice.send("/route @carol")
        let route = try await alice.waitForEvent("\"event\":\"route\"")
        #expect(route.contains("\"name\":\"bob\"") && route.contains("\"name\":\"carol\"") && route.contains("latency_ms"))

        let secret = "the key is under the third stone"
        alice.send("/msg @carol \(secret)")
        let sent = try await alice.waitForEvent("\"event\":\"sent\"", "\"private\":true")
        let id = try #require(JSONLine(sent)?.string("id"))
        let message = try await carol.waitForEvent("\"event\":\"message\"", secret)
        #expect(message.contains("\"private\":true") && message.contains("\"hops\":2") && message.contains("\"name\":\"alice\""))
        try await alice.waitForEvent("\"event\":\"receipt\"", id, "\"status\":\"delivered\"")
        // B relayed it and logged at trace level, yet never had the text.
        #expect(!bob.output.joined().contains(secret))
        #expect(!bob.errors.contains(secret))
        #expect(bob.errors.contains("routed") || bob.errors.contains("mesh"), "bob's trace log is empty: the check above would prove nothing")

        // B dies; A keeps sending to C. Everything waits in A's outbox.
        bob.kill9()
        _ = try await bob.waitForExit()  // its data directory's lock is free before bob starts again below
        try await alice.waitForEvent("\"event\":\"unreachable\"", "\"name\":\"carol\"", timeout: .seconds(10))
        let queuedTexts = (1...5).map { "queued line \($0)" }
        var queuedIDs: [String] = []
        for text in queuedTexts {
            alice.send("/msg @carol \(text)")
            let queued = try await alice.waitForEvent("\"event\":\"sent\"", text, "\"status\":\"queued\"")
            queuedIDs.append(try #require(JSONLine(queued)?.string("id")))
        }
        // B comes back with the same identity; the route returns and the outbox drains.
        bob = try start("bob", on: "B")
        for text in queuedTexts {
            try await carol.waitForEvent("\"event\":\"message\"", text, timeout: .seconds(30))
        }
        for queuedID in queuedIDs {
            try await alice.waitForEvent("\"event\":\"receipt\"", queuedID, "\"status\":\"delivered\"")
        }
        // Exactly once, in order.
        let received = carol.output.compactMap { line -> String? in
            guard line.contains("\"event\":\"message\"") else { return nil }
            return JSONLine(line)?.string("text")
        }
        #expect(received == [secret] + queuedTexts)
        for process in [alice, bob, carol] { process.closeInput() }
        for process in [alice, bob, carol] { _ = try await process.waitForExit() }
    }

    @Test("places across hosts: A, with no data, finds C's places through B by discovery alone, and C's pin reaches A")
    func placesAcrossHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "mcp\(getpid() % 100000)-"
        try MultiHostTests.hosts(["up", "A-B B-C"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let data = directory.appending("london.geojson")
        try Data(PlacesMeshTests.fixture.utf8).write(to: URL(fileURLWithPath: data))
        let service = DiscoveryTests.uniqueService()
        func start(_ name: String, on host: String, extra: [String] = []) throws -> ChatProcess {
            try MultiHostTests.peer(name, on: host, prefix: prefix, service: service, directory, extra: extra)
        }
        let alice = try start("alice", on: "A")
        let bob = try start("bob", on: "B")
        let carol = try start("carol", on: "C", extra: ["--places", data])
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"carol\"", "\"hops\":2", timeout: .seconds(30))

        alice.send("/here \(PlacesMeshTests.here.lat),\(PlacesMeshTests.here.lon)")
        try await alice.waitForEvent("\"event\":\"here\"")
        alice.send("/near 2km pizza")
        let line = try await alice.waitForEvent("\"event\":\"places\"")
        let places = try #require(JSONLine(line))
        let results = try #require(places.object["results"] as? [[String: Any]])
        #expect(results.compactMap { $0["name"] as? String } == ["Pizza Express", "PIZZA hut"], "\(line)")
        #expect(results.allSatisfy { ($0["source"] as? [String: Any])?["name"] as? String == "carol" })
        #expect((places.object["sources"] as? [[String: Any]])?.first?["hops"] as? Int == 2)

        carol.send("/pin 51.501,-0.142 gates")
        try await alice.waitForEvent("\"event\":\"pin\"", "\"label\":\"gates\"", timeout: .seconds(10))
        for process in [alice, bob, carol] { process.closeInput() }
        for process in [alice, bob, carol] { _ = try await process.waitForExit() }
    }
}
