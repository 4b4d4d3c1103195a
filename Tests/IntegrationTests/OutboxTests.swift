import Foundation
import MeshTestSupport
import Testing

/// The outbox and history on disk (PROTOCOL.md §13.9), with real `meshchat` processes killed with
/// SIGKILL and restarted on the same data directory.
@Suite("outbox and history across crashes", .serialized)
struct OutboxTests {
    @Test("lines to a peer that is away wait on disk: the sender killed with -9 and restarted delivers them once, in order, when the peer is back")
    func senderCrashesWhileQueued() async throws {
        let directory = TemporaryDirectory()
        var bob = try ChatProcess.local("bob", directory)
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        var alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"")
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        try await alice.waitForEvent("\"event\":\"unreachable\"", "\"name\":\"bob\"")

        let texts = ["first while away", "second while away", "third while away"]
        var ids: [String] = []
        for text in texts {
            alice.send("/msg @bob \(text)")
            let sent = try await alice.waitForEvent("\"event\":\"sent\"", text)
            #expect(sent.contains("\"status\":\"queued\""))
            ids.append(try #require(JSONLine(sent)?.string("id")))
        }
        alice.kill9()
        _ = try await alice.waitForExit()

        bob = try ChatProcess.local("bob", directory, ["--port", "\(port)"])
        try await bob.waitForEvent("\"event\":\"ready\"")
        alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        for id in ids {
            try await alice.waitForEvent("\"event\":\"receipt\"", id, "\"status\":\"delivered\"")
        }
        // A receipt means "on bob's disk"; bob shows the line just after it sends the receipt.
        try await bob.waitForEvent("\"event\":\"message\"", texts[2])
        let received = bob.output.filter { $0.contains("\"event\":\"message\"") }.compactMap { JSONLine($0)?.string("text") }
        #expect(received == texts)
        alice.send("/history 10")
        let history = try await alice.waitForEvent("\"event\":\"history\"")
        for id in ids { #expect(history.contains(id)) }
        #expect(history.components(separatedBy: "\"status\":\"delivered\"").count - 1 == 3)
        bob.closeInput()
        alice.closeInput()
        _ = try await bob.waitForExit()
        _ = try await alice.waitForExit()
    }

    @Test("a crash at any moment loses no accepted line: every line reported sent before SIGKILL is in the history after a restart")
    func crashLosesNothingAccepted() async throws {
        let directory = TemporaryDirectory()
        var alice = try ChatProcess.local("alice", directory)
        try await alice.waitForEvent("\"event\":\"ready\"")
        alice.send(lines: (1...300).map { "line \($0) to the mesh" })
        // Kill it mid-stream: after the 40th acceptance, while the rest are still being written.
        _ = try await alice.waitForLine { $0.contains("\"event\":\"sent\"") && $0.contains("\"line 40 to the mesh\"") }
        alice.kill9()
        _ = try await alice.waitForExit()
        let accepted = alice.output.filter { $0.contains("\"event\":\"sent\"") }.compactMap { JSONLine($0)?.string("id") }
        #expect(accepted.count >= 40)

        alice = try ChatProcess.local("alice", directory)
        try await alice.waitForEvent("\"event\":\"ready\"")
        alice.send("/history 1000")
        let history = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"history\"")))
        let stored = Set((history.object["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        for id in accepted { #expect(stored.contains(id), "line \(id) was reported sent but is not on disk") }
        alice.closeInput()
        _ = try await alice.waitForExit()
    }
}
