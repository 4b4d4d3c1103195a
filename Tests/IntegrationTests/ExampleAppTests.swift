import Foundation
import MeshTestSupport
import Testing

/// `Examples/meshboard`, a third-party-style program on the public library API with a channel of
/// its own (PROTOCOL.md §13.12), run as three real processes in a line over loopback.
@Suite("Example application: meshboard", .serialized)
struct ExampleAppTests {
    /// A running meshboard and the id and port of its ready line.
    struct Board {
        let process: ChatProcess
        let id: String
        let port: Int
    }

    struct ReadyLineMissing: Error, CustomStringConvertible {
        let description: String
    }

    static func start(_ name: String, in directory: TemporaryDirectory, _ extra: [String]) async throws -> Board {
        let process = try ChatProcess(["--name", name, "--data-dir", directory.appending(name), "--port", "0", "--no-discovery"] + extra,
                                      executable: "meshboard", label: name)
        try await process.waitForStderr("\"event\":\"ready\"")
        let line = process.errors.split(separator: "\n").first { $0.contains("\"event\":\"ready\"") } ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        guard let id = object?["id"] as? String, let port = object?["port"] as? Int, id.count == 32 else {
            throw ReadyLineMissing(description: "\(name): a ready line without id and port: \(line)")
        }
        return Board(process: process, id: id, port: port)
    }

    @Test("posts reach every node with their hop counts, a note is sealed to one node two hops away, and a status travels in the advert")
    func lineOfThree() async throws {
        let directory = TemporaryDirectory("meshboard-test")
        let b = try await Self.start("bob", in: directory, [])
        defer { b.process.kill9() }
        let a = try await Self.start("alice", in: directory, ["--connect", "127.0.0.1:\(b.port)", "--status", "at the gate"])
        defer { a.process.kill9() }
        let c = try await Self.start("carol", in: directory, ["--connect", "127.0.0.1:\(b.port)"])
        defer { c.process.kill9() }
        try await c.process.waitForEvent("\"event\":\"reachable\"", "\"peer\":\"\(a.id)\"", "\"hops\":2")

        // The status is alice's channel attachment, read by carol from alice's signed advert.
        let deadline = ContinuousClock.now + .seconds(20)
        var seen = false
        while !seen, ContinuousClock.now < deadline {
            let from = c.process.output.count
            c.process.send("peers")
            let peers = try await c.process.waitForLine(from: from) { $0.contains("\"event\":\"peers\"") }
            seen = peers.contains("\"status\":\"at the gate\"") && peers.contains(a.id)
            if !seen { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(seen, "carol never saw alice's status")

        a.process.send("post hello, board")
        try await b.process.waitForEvent("\"event\":\"post\"", "\"from\":\"\(a.id)\"", "\"hops\":1", "\"text\":\"hello, board\"")
        try await c.process.waitForEvent("\"event\":\"post\"", "\"from\":\"\(a.id)\"", "\"hops\":2", "\"text\":\"hello, board\"")

        c.process.send("tell \(a.id.prefix(8)) only for alice")
        try await c.process.waitForEvent("\"event\":\"sent\"", "\"kind\":\"note\"", "\"to\":\"\(a.id)\"")
        try await a.process.waitForEvent("\"event\":\"note\"", "\"from\":\"\(c.id)\"", "\"hops\":2", "\"text\":\"only for alice\"")
        #expect(!b.process.output.contains { $0.contains("\"event\":\"note\"") }, "the relay must not see the sealed note")

        for board in [a, b, c] { board.process.closeInput() }
        for board in [a, b, c] { #expect(try await board.process.waitForExit() == 0) }
    }
}
