import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hosts that change under a running chat or lack an address family (network namespaces, so
/// that no other test's daemon is touched): avahi-daemon restarts; an IPv4-only host (IPv6
/// switched off in its kernel) and an IPv6-only host (no IPv4 address, not even 127.0.0.1).
/// Needs root; where it cannot run, it fails rather than skips.
@Suite("restarted daemons and single-family hosts (network namespaces)", .serialized)
struct HostChangeTests {
    @Test("after B's avahi-daemon restarts, bob announces again (alice finds him anew) and browses again (he finds carol, started after), and never says the daemon is not running")
    func announceAndBrowseAgain() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "hdr\(getpid() % 10000)-"
        try MultiHostTests.hosts(["up", "A-B"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        func start(_ name: String, on host: String) throws -> ChatProcess {
            try DiscoveryTests.peer(name, service: service, directory, launcher: ["scripts/netns-hosts", "exec", host],
                                    environment: ["MESHCHAT_NETNS_PREFIX": prefix])
        }
        let alice = try start("alice", on: "A")
        let bob = try start("bob", on: "B")
        try await alice.waitForEvent("\"event\":\"found\"", "\"name\":\"bob\"", timeout: .seconds(30))
        try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"", timeout: .seconds(30))

        let mark = alice.output.count
        try MultiHostTests.hosts(["avahi-stop", "B"], prefix: prefix)
        // The stopped daemon said goodbye for bob's service.
        try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"lost\"") && $0.contains("\"name\":\"bob\"") }
        try MultiHostTests.hosts(["avahi-start", "B"], prefix: prefix)
        let back = ContinuousClock.now
        try await alice.waitForLine(timeout: .seconds(10), from: mark) { $0.contains("\"event\":\"found\"") && $0.contains("\"name\":\"bob\"") }
        #expect(ContinuousClock.now - back < .seconds(5), "bob was announced again \(ContinuousClock.now - back) after the daemon's return")
        let carol = try start("carol", on: "A")
        try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"carol\"", timeout: .seconds(10))

        #expect(!bob.errors.contains("not running") && !bob.output.joined().contains("not running"), "\(bob.errors)")
        for process in [alice, bob, carol] { process.closeInput() }
        for process in [alice, bob, carol] { _ = try await process.waitForExit() }
    }

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
