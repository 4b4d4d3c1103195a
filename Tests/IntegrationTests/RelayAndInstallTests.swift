import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `meshchat relay` (a headless node) and `scripts/install`, with real processes.
@Suite("relay and install", .serialized)
struct RelayAndInstallTests {
    /// The `node.port=N` of the relay's "relay ready" log line on stderr.
    static func relayPort(_ relay: ChatProcess) async throws -> Int {
        try await relay.waitForStderr("relay ready")
        let line = try #require(relay.errors.split(separator: "\n").first { $0.contains("relay ready") })
        let field = try #require(line.split(separator: " ").first { $0.hasPrefix("node.port=") })
        return try #require(Int(field.dropFirst("node.port=".count)))
    }

    @Test("relay: no input, relays a private line between two peers that reach each other only through it, exits 0 on SIGTERM")
    func relay() async throws {
        let directory = TemporaryDirectory()
        let relay = try ChatProcess(["relay", "--no-discovery", "--name", "hub", "--data-dir", directory.appending("hub")], label: "relay")
        defer { relay.kill9() }
        relay.closeInput()  // it reads nothing: the end of its input changes nothing
        let port = try await Self.relayPort(relay)
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        defer { alice.closeInput() }
        let bob = try ChatProcess.local("bob", directory, ["--connect", "127.0.0.1:\(port)"])
        defer { bob.closeInput() }
        let aliceID = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"ready\""))?.string("id"))
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"", "\"hops\":2")
        alice.send("/msg @bob through the hub")
        let message = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"message\"", "through the hub")))
        #expect(message.object("from")?["id"] as? String == aliceID)
        #expect(message.int("hops") == 2)
        try await alice.waitForEvent("\"event\":\"receipt\"", "\"status\":\"delivered\"")

        relay.signal(SIGTERM)
        #expect(try await relay.waitForExit() == 0, "stderr: \(relay.errors)")
        #expect(relay.errors.contains("stopping"))
    }

    @Test("scripts/install into a prefix: the binary runs, with man page, completions and the relay's user unit")
    func install() async throws {
        let prefix = TemporaryDirectory()
        let bin = ChatProcess.binDirectory.appendingPathComponent("meshchat").path
        let script = ChatProcess.packageRoot.appendingPathComponent("scripts/install").path
        let install = try Command.run([script, "--prefix", prefix.path, "--bin", bin])
        #expect(install.status == 0, "\(install.output)")

        let installed = prefix.appending("bin/meshchat")
        let version = try Command.run([installed, "--version"])
        #expect(version.status == 0)
        let expected = try Command.run([bin, "--version"]).output
        #expect(!expected.isEmpty && version.output == expected)
        #expect(expected.contains("protocol"))
        let help = try Command.run([installed, "--help"]).output
        #expect(help.contains(expected.trimmingCharacters(in: .whitespacesAndNewlines)), "--help shows the version")

        let files = [
            "share/man/man1/meshchat.1": ".TH MESHCHAT 1",
            "share/bash-completion/completions/meshchat": "--data-dir",
            "share/zsh/site-functions/_meshchat": "#compdef meshchat",
            "share/fish/vendor_completions.d/meshchat.fish": "meshchat",
            "share/systemd/user/meshchat-relay.service": "ExecStart=\(installed) relay",
        ]
        for (path, fragment) in files {
            let text = try String(contentsOfFile: prefix.appending(path), encoding: .utf8)
            #expect(text.contains(fragment), "\(path) lacks \(fragment)")
        }
        let manual = try String(contentsOfFile: prefix.appending("share/man/man1/meshchat.1"), encoding: .utf8)
        #expect(manual.contains("SEND") && manual.contains("RELAY"), "the man page covers send and relay")
    }
}
