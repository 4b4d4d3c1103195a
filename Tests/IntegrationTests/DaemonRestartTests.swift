import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// avahi-daemon restarts under a running chat (on a namespace host, so that no other test's
/// daemon is touched). Needs root; where it cannot run, it fails rather than skips.
@Suite("avahi-daemon restarts (network namespaces)", .serialized)
struct DaemonRestartTests {
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
}
