import struct Foundation.Data
import MeshLink
import MeshTestSupport
import MeshWire
import Testing

/// A neighbour that completes a real handshake, then misbehaves, against a real `meshchat` (bob,
/// between honest alice and carol). After each case bob is alive, alice's lines still reach carol
/// through him and him directly within a second, he kept his honest links, and his memory is bounded.
@Suite("hostile neighbour", .serialized)
struct HostileNeighbourTests {
    /// Routed-layer violations that close the link (PROTOCOL.md §13.1, §13.6); each one used to
    /// leave the closed neighbour behind as a ghost.
    enum Violation: String, CaseIterable, CustomStringConvertible {
        case hopLimitAbove32, hopsAbove32, originOfWrongSize, packetIDOfWrongSize, sealedOver65535

        var description: String { rawValue }

        func envelope(from mallory: HostilePeer) -> Envelope {
            let me = Data(mallory.nodeID.bytes)
            let to = Data(mallory.victim.bytes)
            switch self {
            case .hopLimitAbove32: return HostilePeer.routed(origin: me, destination: to, hopLimit: 33, payload: .sealed(Data(count: 100)))
            case .hopsAbove32: return HostilePeer.routed(origin: me, destination: to, hops: 40, payload: .sealed(Data(count: 100)))
            case .originOfWrongSize: return HostilePeer.routed(origin: Data(count: 5), destination: to, payload: .sealed(Data(count: 100)))
            case .packetIDOfWrongSize: return HostilePeer.routed(origin: me, destination: to, packetID: Data(count: 3), payload: .sealed(Data(count: 100)))
            case .sealedOver65535: return HostilePeer.routed(origin: me, destination: to, payload: .sealed(Data(count: 65_536)))
            }
        }
    }

    /// alice — bob — carol, and mallory connected to bob (the victim).
    static func victim(_ directory: TemporaryDirectory, identity: LocalIdentity? = nil) async throws -> (ChatLine, HostilePeer) {
        let line = try await ChatLine.start(directory)
        let mallory = try await HostilePeer(port: line.bobPort, identity: identity)
        try await line.bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"mallory\"", "\"state\":\"connected\"")
        return (line, mallory)
    }

    @Test("a neighbour closed for a routed-layer violation leaves no ghost; its reconnect is fresh", arguments: Violation.allCases)
    func noGhost(_ violation: Violation) async throws {
        let directory = TemporaryDirectory()
        let identity = try LocalIdentity.generate()
        let (line, mallory) = try await Self.victim(directory, identity: identity)
        let bobID = try line.bob.nodeID
        try await mallory.send(mallory.advert(sequence: 1, neighbors: [bobID]))
        try await line.alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"mallory\"")
        try await mallory.send(violation.envelope(from: mallory))
        let reason = await mallory.waitUntilClosed()
        #expect(reason?.code == .protocolViolation)
        try await line.bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"mallory\"", "\"state\":\"notConnected\"")
        // Gone from bob's advert: alice no longer reaches mallory.
        try await line.alice.waitForEvent("\"event\":\"unreachable\"", "\"name\":\"mallory\"")
        // The same identity again: a fresh `connected`, and bob sends it his database.
        let from = line.bob.output.count
        let again = try await HostilePeer(port: line.bobPort, identity: identity)
        try await line.bob.waitForLine(from: from) { $0.contains("\"name\":\"mallory\"") && $0.contains("\"state\":\"connected\"") }
        try await waitUntil { again.advertsReceived.contains(bobID) }
        try await Self.stillServes(line, marker: "after \(violation)")
        await again.close()
    }

    @Test("a direct chat line over 64 KiB closes only that link, without stalling the node")
    func oversizedChat() async throws {
        let directory = TemporaryDirectory()
        let (line, mallory) = try await Self.victim(directory)
        let text = String(repeating: "x", count: WireLimits.maxMessageSize - 1_000)
        try await mallory.send(.chat(id: Data(count: 16), text: text, sentAtMilliseconds: 0))
        #expect(await mallory.waitUntilClosed(timeout: .seconds(20))?.code == .protocolViolation)
        try await line.bob.waitForEvent("\"name\":\"mallory\"", "\"state\":\"notConnected\"")
        #expect(!line.bob.output.contains { $0.contains("xxxxxxxx") })
        try await Self.stillServes(line, marker: "after a 16 MiB chat line")
    }

    @Test("a 16 MiB data envelope is delivered without the node dropping its honest links")
    func largeData() async throws {
        let directory = TemporaryDirectory()
        let (line, mallory) = try await Self.victim(directory)
        try await mallory.send(.data(Data(count: WireLimits.maxMessageSize - 1_000)))
        try await line.bob.waitForEvent("\"event\":\"data\"", "\"name\":\"mallory\"", timeout: .seconds(30))
        try await Self.stillServes(line, marker: "after 16 MiB of data")
        #expect(mallory.closed == nil)
    }

    @Test("a flood from one neighbour leaves the honest links and lines alone", arguments: HostilePeer.Flood.allCases)
    func flood(_ flood: HostilePeer.Flood) async throws {
        let directory = TemporaryDirectory()
        let (line, mallory) = try await Self.victim(directory)
        let carolID = try line.carol.nodeID
        let count = flood == .adverts ? 10_000 : flood == .inventedNodes ? HostilePeer.inventedNodes + 1 : 20_000
        let sending = Task { await mallory.flood(flood, count: count, relayTo: carolID) }
        // While the flood runs (and after it), the honest lines arrive within a second.
        try await Self.stillServes(line, marker: "during \(flood)")
        _ = await sending.value
        try await Self.stillServes(line, marker: "after \(flood)")
        if flood == .inventedNodes {
            // A new honest node joining behind carol still gets into bob's full database.
            let dave = try ChatProcess.local("dave", directory, ["--connect", "127.0.0.1:\(try line.carol.port)"])
            try await line.bob.waitForEvent("\"event\":\"reachable\"", "\"name\":\"dave\"")
            _ = dave
        }
    }

    /// bob still serves: alice's private line reaches carol through him and her line to everyone
    /// reaches him, each within a second; nobody honest was disconnected; bob's memory is bounded.
    static func stillServes(_ line: ChatLine, marker: String) async throws {
        do {
            try await linesArrive(line, marker: marker)
        } catch {
            // The victim's side of the story (its stdout is in the error only when it timed out).
            for chat in [line.alice, line.bob, line.carol] {
                Issue.record("\(chat.label)'s stderr: \(chat.errors.suffix(3000))\nits last stdout: \(chat.output.suffix(5).map { $0.prefix(300) })")
            }
            throw error
        }
    }

    private static func linesArrive(_ line: ChatLine, marker: String) async throws {
        let carolFrom = line.carol.output.count
        let bobFrom = line.bob.output.count
        line.alice.send("/msg @carol \(marker) (private)")
        try await line.carol.waitForLine(timeout: .seconds(1), from: carolFrom) {
            $0.contains("\"event\":\"message\"") && $0.contains("\(marker) (private)")
        }
        line.alice.send("\(marker) (to all)")
        try await line.bob.waitForLine(timeout: .seconds(1), from: bobFrom) {
            $0.contains("\"event\":\"message\"") && $0.contains("\(marker) (to all)")
        }
        for chat in [line.alice, line.carol] {
            #expect(!chat.output.contains { $0.contains("\"state\":\"notConnected\"") && $0.contains("\"name\":\"bob\"") })
        }
        for name in ["alice", "carol"] {
            #expect(!line.bob.output.contains { $0.contains("\"state\":\"notConnected\"") && $0.contains("\"name\":\"\(name)\"") })
        }
        #expect(line.bob.residentBytes ?? 0 < 400 * 1024 * 1024)
    }

    /// Bounded polling for a condition of a hostile peer (it has no event stream to wait on).
    private func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            try #require(ContinuousClock.now < deadline, "condition not met within \(timeout)")
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension ChatProcess {
    /// The node id from the process's `ready` event.
    var nodeID: NodeID {
        get throws {
            let ready = try #require(output.first { $0.contains("\"event\":\"ready\"") })
            return try NodeID(hex: try #require(JSONLine(ready)?.string("id")))
        }
    }

    /// The listening port from the process's `ready` event.
    var port: Int {
        get throws {
            let ready = try #require(output.first { $0.contains("\"event\":\"ready\"") })
            return try #require(JSONLine(ready)?.int("port"))
        }
    }
}
