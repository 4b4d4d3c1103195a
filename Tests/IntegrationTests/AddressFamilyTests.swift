import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An IPv4-only host (IPv6 switched off in its kernel), a dual-stack host and an IPv6-only host
/// (no IPv4 address, not even 127.0.0.1) in a line: meshchat starts, listens and links on each,
/// by discovery and by address. Needs root; where it cannot run, it fails rather than skips.
@Suite("IPv4-only and IPv6-only hosts (network namespaces)", .serialized)
struct AddressFamilyTests {
    @Test("A (IPv4 only)—B (both)—C (IPv6 only): all start, link, and A's private line reaches C through B with its receipt")
    func singleFamilyHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "hfa\(getpid() % 10000)-"
        let script = ChatProcess.packageRoot.appendingPathComponent("scripts/netns-hosts").path
        let environment = ["MESHCHAT_NETNS_PREFIX": prefix, "MESHCHAT_NETNS_IPV6": "1",
                           "MESHCHAT_NETNS_IPV4_ONLY": "A", "MESHCHAT_NETNS_IPV6_ONLY": "C"]
        let up = try Command.run([script, "up", "A-B B-C"], environment: environment)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        try #require(up.status == 0, "\(up.output)")
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        func start(_ name: String, on host: String, extra: [String] = []) throws -> ChatProcess {
            try DiscoveryTests.peer(name, service: service, directory, extra: ["--port", "7000"] + extra,
                                    launcher: ["scripts/netns-hosts", "exec", host], environment: ["MESHCHAT_NETNS_PREFIX": prefix])
        }
        let alice = try start("alice", on: "A")
        let bob = try start("bob", on: "B")
        // Carol also dials bob by address, over IPv6 (link 2 is fd99:2::/64).
        let carol = try start("carol", on: "C", extra: ["--connect", "[fd99:2::1]:7000"])
        for process in [alice, bob, carol] {
            #expect(JSONLine(try await process.waitForEvent("\"event\":\"ready\""))?.int("port") == 7000)
        }
        let aliceSeesBob = try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"", timeout: .seconds(30))
        #expect(aliceSeesBob.contains("\"address\":\"10.99.1.2:"), "\(aliceSeesBob)")
        let carolSeesBob = try await carol.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"", timeout: .seconds(30))
        #expect(!carolSeesBob.contains("10.99."), "carol has no IPv4: \(carolSeesBob)")
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"carol\"", "\"hops\":2", timeout: .seconds(30))

        alice.send("/msg @carol over both families")
        let sent = try await alice.waitForEvent("\"event\":\"sent\"", "over both families")
        let id = try #require(JSONLine(sent)?.string("id"))
        try await carol.waitForEvent("\"event\":\"message\"", "over both families")
        try await alice.waitForEvent("\"event\":\"receipt\"", id, "\"status\":\"delivered\"")
        for process in [alice, bob, carol] { process.closeInput() }
        for process in [alice, bob, carol] { _ = try await process.waitForExit() }
    }
}
