import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Two hosts as network namespaces joined by a veth link, each with its own D-Bus and
/// avahi-daemon (scripts/netns-hosts). Needs root; where it cannot run, it fails rather than
/// skips (CI runs as root).
@Suite("two hosts (network namespaces)", .serialized)
struct MultiHostTests {
    /// Runs scripts/netns-hosts with a prefix of its own; returns its output, throws on failure.
    @discardableResult
    static func hosts(_ arguments: [String], prefix: String) throws -> String {
        let script = ChatProcess.packageRoot.appendingPathComponent("scripts/netns-hosts").path
        let result = try Command.run([script] + arguments, environment: ["MESHCHAT_NETNS_PREFIX": prefix])
        guard result.status == 0 else {
            throw HostsFailure(description: "scripts/netns-hosts \(arguments.joined(separator: " ")) failed:\n\(result.output)")
        }
        return result.output
    }

    /// meshchat `name` on namespace host `host` (of the hosts `prefix` made), with `--json`, its
    /// own data directory in `directory`, and discovery of `service` only.
    static func peer(_ name: String, on host: String, prefix: String, service: String, _ directory: TemporaryDirectory,
                     extra: [String] = []) throws -> ChatProcess {
        try DiscoveryTests.peer(name, service: service, directory, extra: extra,
                                launcher: ["scripts/netns-hosts", "exec", host], environment: ["MESHCHAT_NETNS_PREFIX": prefix])
    }

    @Test("on two hosts joined by a veth link, meshchat peers find each other, chat, and see each other leave")
    func twoHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "mct\(getpid() % 100000)-"
        try Self.hosts(["up", "A-B"], prefix: prefix)
        defer { _ = try? Self.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        let launcherA = ["scripts/netns-hosts", "exec", "A"]
        let launcherB = ["scripts/netns-hosts", "exec", "B"]
        let environment = ["MESHCHAT_NETNS_PREFIX": prefix]
        let alice = try DiscoveryTests.peer("alice", service: service, directory, launcher: launcherA, environment: environment)
        let bob = try DiscoveryTests.peer("bob", service: service, directory, launcher: launcherB, environment: environment)
        let found = try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"")
        // Alice is reached over the veth link (10.99.1.1), not loopback.
        #expect(found.contains("10.99.1.1:"), "found event: \(found)")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        alice.send("hello from host A")
        let message = try await bob.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(message)?.string("text") == "hello from host A")

        // Bob can connect (through its own find of alice) before its announcement is established;
        // "lost" needs alice to have found bob's announcement first.
        try await alice.waitForEvent("\"event\":\"found\"", "\"name\":\"bob\"")
        let started = ContinuousClock.now
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        try await alice.waitForEvent("\"event\":\"lost\"", "\"name\":\"bob\"", timeout: .seconds(5))
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"notConnected\"", timeout: .seconds(5))
        #expect(ContinuousClock.now - started < .seconds(5))
        alice.closeInput()
        #expect(try await alice.waitForExit() == 0)
    }
}

/// scripts/netns-hosts failed; the description has its output.
struct HostsFailure: Error, CustomStringConvertible { let description: String }
