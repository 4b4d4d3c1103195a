import Foundation
import MeshTestSupport
import Testing

/// Connection codes (PROTOCOL.md §4.10) between real `meshchat` processes: `/code`, `--connect CODE`
/// and `/connect CODE`.
@Suite("connection codes between meshchat processes", .serialized)
struct ConnectionCodeTests {
    /// The `meshchat:…` code in a line, if any.
    static func code(in line: String) -> String? {
        guard let start = line.range(of: "meshchat:") else { return nil }
        let code = line[start.lowerBound...].prefix { $0 == ":" || ("a"..."z").contains($0) || ("2"..."7").contains($0) }
        return code.count > "meshchat:".count ? String(code) : nil
    }

    @Test("/code prints a code; --connect CODE reaches that node, both report connected; a damaged code is an error with the usage")
    func connectByCode() async throws {
        let directory = TemporaryDirectory()
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice")], label: "alice")
        _ = try await alice.waitForEvent("\"event\":\"ready\"")
        alice.send("/code")
        let code = try #require(Self.code(in: try await alice.waitForEvent("\"event\":\"code\"", "meshchat:")))
        #expect(code.count <= 300)
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"),
                                   "--connect", code], label: "bob")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")

        bob.send("/connect meshchat:notbase32!")
        #expect(try await bob.waitForEvent("\"event\":\"error\"", "not a valid connection code").contains("usage: /connect"))
        alice.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
    }
}
