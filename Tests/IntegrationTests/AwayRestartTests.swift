import Foundation
import MeshTestSupport
import Testing

/// `/away` across restarts: the text is kept in the data directory and set again at the next
/// start; `/away` alone clears it for good. Real `meshchat` processes: bob (`--json`) listens,
/// alice (text) connects to him and is restarted on the same data directory.
@Suite("away text across restarts", .serialized)
struct AwayRestartTests {
    /// Asks bob's `/whois @alice` until its `away` is `expected` (`nil`: none), against a deadline.
    static func waitForAway(_ bob: ChatProcess, _ expected: String?) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let from = bob.output.count
            bob.send("/whois @alice")
            let line = try await bob.waitForLine(from: from) { $0.contains("\"event\":\"whois\"") || $0.contains("\"event\":\"error\"") }
            let away = JSONLine(line)?.object["away"]
            if let expected, away as? String == expected { return }
            if expected == nil, away is NSNull { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("bob's /whois @alice never showed away \(expected ?? "null"): \(line)")
                return
            }
        }
    }

    static func alice(_ directory: TemporaryDirectory, bobPort: Int) throws -> ChatProcess {
        try ChatProcess(["--name", "alice", "--no-discovery", "--data-dir", directory.appending("alice"), "--connect", "127.0.0.1:\(bobPort)"],
                        label: "alice")
    }

    @Test("an away text comes back after a restart, in alice's advert and said to her; /away alone clears it for the next start too")
    func awayKept() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--keep-running", "--data-dir", directory.appending("bob")], label: "bob")
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        var alice = try Self.alice(directory, bobPort: port)
        _ = try await alice.waitForLine { $0.contains("bob (") && $0.contains("connected") }
        alice.send("/away at lunch")
        _ = try await alice.waitForLine { $0.contains("you are away: at lunch") }
        try await Self.waitForAway(bob, "at lunch")
        alice.closeInput()
        #expect(try await alice.waitForExit() == 0)

        alice = try Self.alice(directory, bobPort: port)
        _ = try await alice.waitForLine { $0 == "* you are away: at lunch, as before the restart (/away alone clears it)" }
        _ = try await alice.waitForLine { $0.contains("bob (") && $0.contains("connected") }
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await Self.waitForAway(bob, "at lunch")
        alice.send("/away")
        _ = try await alice.waitForLine { $0.contains("you are back") }
        try await Self.waitForAway(bob, nil)
        alice.closeInput()
        #expect(try await alice.waitForExit() == 0)

        alice = try Self.alice(directory, bobPort: port)
        _ = try await alice.waitForLine { $0.contains("bob (") && $0.contains("connected") }
        try await Self.waitForAway(bob, nil)
        #expect(!alice.output.contains { $0.contains("you are away") }, "\(alice.output)")
        alice.closeInput()
        bob.closeInput()
    }
}
