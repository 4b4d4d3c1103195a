import Foundation
import MeshTestSupport
import Testing

extension ChatProcess {
    /// A `meshchat --json --no-discovery` named `name` with its own data directory in `directory`
    /// (the same one again after a restart), plus `extra` arguments.
    static func local(_ name: String, _ directory: TemporaryDirectory, _ extra: [String] = []) throws -> ChatProcess {
        try ChatProcess(["--name", name, "--json", "--no-discovery", "--data-dir", directory.appending(name)] + extra, label: name)
    }
}

/// Three local chats in a line on loopback, alice — bob — carol: alice and carol have no link, so
/// everything between them is relayed by bob.
struct ChatLine {
    let alice: ChatProcess
    let bob: ChatProcess
    let carol: ChatProcess
    /// bob's listening port (to restart him on it, or to connect to him again).
    let bobPort: Int

    /// Starts bob, then carol and alice connected to him (each with its `extra` arguments);
    /// returns once alice and carol reach each other in two hops.
    static func start(_ directory: TemporaryDirectory, carol carolExtra: [String] = [], alice aliceExtra: [String] = []) async throws -> ChatLine {
        let bob = try ChatProcess.local("bob", directory)
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let carol = try ChatProcess.local("carol", directory, ["--connect", "127.0.0.1:\(port)"] + carolExtra)
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"] + aliceExtra)
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"carol\"", "\"hops\":2")
        try await carol.waitForEvent("\"event\":\"reachable\"", "\"name\":\"alice\"", "\"hops\":2")
        return ChatLine(alice: alice, bob: bob, carol: carol, bobPort: port)
    }
}
