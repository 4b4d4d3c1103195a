import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Connection codes (PROTOCOL.md §4.10) between two network-namespace hosts with discovery off:
/// the code must carry the host's real address, not only loopback. Needs root (CI runs as root).
@Suite("connection codes across two hosts (network namespaces)", .serialized)
struct NearbyHostsTests {
    @Test("alice's /code on host A lists its veth address before loopback; bob on host B connects with --connect CODE over that address, and /disconnect CODE ends it")
    func codeAcrossHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "mcn\(getpid() % 100000)-"
        try MultiHostTests.hosts(["up", "A-B"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let environment = ["MESHCHAT_NETNS_PREFIX": prefix]
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice")],
                                    label: "alice", environment: environment, launcher: ["scripts/netns-hosts", "exec", "A"])
        let port = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"ready\""))?.int("port"))
        alice.send("/code")
        let code = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"code\""))?.string("code"))
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--data-dir", directory.appending("bob"), "--connect", code],
                                  label: "bob", environment: environment, launcher: ["scripts/netns-hosts", "exec", "B"])
        let connected = try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        // Reached over the veth link: the code's first address is A's 10.99.1.1, loopback comes last.
        #expect(connected.contains("10.99.1.1:\(port)"), "\(connected)")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        // /disconnect CODE stops keeping the code's first address and closes the link there.
        bob.send("/disconnect \(code)")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"notConnected\"", timeout: .seconds(5))
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        alice.send("/quit")
        #expect(try await alice.waitForExit() == 0)
    }
}
