import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real `meshchat` processes on loopback, driven through stdin and checked through `--json`.
@Suite("two meshchat processes", .serialized)
struct TwoPeerTests {
    /// Starts a listening peer and a peer that connects to it; waits until both are connected.
    static func connectedPair(_ directory: TemporaryDirectory, extra: [String] = []) async throws -> (ChatProcess, ChatProcess, port: Int) {
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice")] + extra,
                                    label: "alice")
        let ready = try await alice.waitForEvent("\"event\":\"ready\"")
        let port = try #require(JSONLine(ready)?.int("port"))
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                   "--connect", "127.0.0.1:\(port)"] + extra, label: "bob")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        return (alice, bob, port)
    }

    @Test("two peers connect by address, prove who they are and chat both ways")
    func chat() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try await Self.connectedPair(directory)
        let aliceID = try #require(JSONLine(alice.output[0])?.string("id"))
        bob.send("hello alice, ünïcode ✓")
        let message = try await alice.waitForEvent("\"event\":\"message\"")
        let json = try #require(JSONLine(message))
        #expect(json.string("text") == "hello alice, ünïcode ✓")
        #expect(json.object("from")?["name"] as? String == "bob")
        #expect((json.string("id") ?? "").count == 32)
        alice.send("hi bob")
        let reply = try await bob.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(reply)?.string("text") == "hi bob")
        #expect(JSONLine(reply)?.object("from")?["id"] as? String == aliceID)

        bob.send("/peers")
        let peers = try await bob.waitForEvent("\"event\":\"peers\"")
        #expect(peers.contains("\"name\":\"alice\"") && peers.contains("127.0.0.1:"))

        alice.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        let gone = try await bob.waitForEvent("\"state\":\"notConnected\"")
        #expect(gone.contains("\"remote\":true"))
        bob.closeInput()
        #expect(try await bob.waitForExit() == 0)
    }

    @Test("--keep-running serves peers after standard input ends")
    func keepRunning() async throws {
        let directory = TemporaryDirectory()
        let server = try ChatProcess(["--name", "server", "--json", "--no-discovery", "--keep-running",
                                      "--data-dir", directory.appending("server")], label: "server")
        let port = try #require(JSONLine(try await server.waitForEvent("\"event\":\"ready\""))?.int("port"))
        server.closeInput()
        let client = try ChatProcess(["--name", "client", "--json", "--no-discovery", "--data-dir", directory.appending("client"),
                                      "--connect", "127.0.0.1:\(port)"], label: "client")
        try await server.waitForEvent("\"event\":\"peer\"", "\"name\":\"client\"", "\"state\":\"connected\"")
        client.send("still there?")
        #expect(JSONLine(try await server.waitForEvent("\"event\":\"message\""))?.string("text") == "still there?")
        client.closeInput()
        #expect(try await client.waitForExit() == 0)
        server.signal(SIGKILL)
    }

    @Test("the node id survives a restart and a rename; the key file is private")
    func identityPersists() async throws {
        let directory = TemporaryDirectory()
        let first = try ChatProcess(["--name", "carol", "--json", "--no-discovery", "--data-dir", directory.appending("c")], label: "carol")
        let id1 = try #require(JSONLine(await first.waitForEvent("\"event\":\"ready\""))?.string("id"))
        first.closeInput()
        try await first.waitForExit()
        let second = try ChatProcess(["--name", "caroline", "--json", "--no-discovery", "--data-dir", directory.appending("c")], label: "caroline")
        let ready = try #require(JSONLine(await second.waitForEvent("\"event\":\"ready\"")))
        #expect(ready.string("id") == id1)
        #expect(ready.string("name") == "caroline")
        second.closeInput()
        try await second.waitForExit()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appending("c/identity.json"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("10,000 reliable messages arrive complete and in order")
    func tenThousandInOrder() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try await Self.connectedPair(directory)
        let count = 10_000
        let lines = (0..<count).map { String(format: "line %05d", $0) }
        bob.send(lines: lines)
        try await alice.waitForEvent("\"text\":\"line 09999\"", timeout: .seconds(120))
        let received = alice.output.compactMap { line -> String? in
            guard line.contains("\"event\":\"message\"") else { return nil }
            return JSONLine(line)?.string("text")
        }
        #expect(received.count == count)
        #expect(received == lines)
        bob.closeInput()
        alice.closeInput()
    }

    @Test("256 MiB of bulk data between two processes arrives with a matching SHA-256")
    func bulkChecksum() async throws {
        let sink = try ChatProcess(["sink", "--verify"], executable: "meshbench", label: "sink")
        defer { sink.kill9() }
        let port = try #require(JSONLine(await sink.waitForLine { $0.contains("\"port\"") })?.int("port"))
        let source = try ChatProcess(["source", "--port", "\(port)", "--workload", "bulk",
                                      "--count", "256", "--size", "\(1 << 20)", "--verify"], executable: "meshbench", label: "source")
        let line = try await source.waitForLine(timeout: .seconds(300)) { $0.contains("sha256Sent") }
        let result = try #require(JSONLine(line))
        #expect(result.int("messages") == 256)
        let sent = try #require(result.string("sha256Sent"))
        #expect(sent.count == 64)
        #expect(sent == result.string("sha256Received"))
        #expect(try await source.waitForExit() == 0)
    }

    @Test("a peer killed with SIGKILL is reported notConnected within 5 s, as lost (connectionLost, this side's finding), never as its normal goodbye")
    func killNine() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try await Self.connectedPair(directory)
        let start = ContinuousClock.now
        bob.signal(SIGKILL)
        let event = try #require(JSONLine(try await alice.waitForEvent("\"name\":\"bob\"", "\"state\":\"notConnected\"", timeout: .seconds(5))))
        #expect(ContinuousClock.now - start < .seconds(5))
        let reason = try #require(event.object["reason"] as? [String: Any])
        #expect(reason["remote"] as? Bool == false)
        #expect(reason["code"] as? String == "connectionLost" || reason["code"] as? String == "keepaliveTimeout", "\(reason)")
        #expect(reason["code"] as? String != "normal")
        alice.closeInput()
    }

    @Test("a peer that freezes (SIGSTOP: socket open, no answers) is reported dead by keepalive within 5 s")
    func frozenPeer() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try await Self.connectedPair(directory)
        let start = ContinuousClock.now
        bob.signal(SIGSTOP)
        defer { bob.signal(SIGKILL) }
        let event = try await alice.waitForEvent("\"name\":\"bob\"", "\"state\":\"notConnected\"", timeout: .seconds(6))
        let elapsed = ContinuousClock.now - start
        #expect(event.contains("\"code\":\"keepaliveTimeout\""))
        #expect(elapsed < .seconds(5), "keepalive took \(elapsed)")
        #expect(elapsed > .seconds(2), "dead after \(elapsed), before the 3 s silence bound")
        alice.closeInput()
    }
}

/// A parsed JSON event line.
struct JSONLine {
    let object: [String: Any]

    init?(_ line: String) {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        self.object = object
    }

    func string(_ key: String) -> String? { object[key] as? String }
    func int(_ key: String) -> Int? { object[key] as? Int }
    func object(_ key: String) -> [String: Any]? { object[key] as? [String: Any] }
}
