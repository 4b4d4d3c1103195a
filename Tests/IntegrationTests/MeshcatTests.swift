import Crypto
import Foundation
import MeshTestSupport
import Testing

/// `Examples/meshcat` as a user runs it: real processes on loopback, linked in a line by
/// `--connect`, bytes through stdin and stdout.
@Suite("meshcat", .serialized)
struct MeshcatTests {
    /// The id and port of a meshcat's ready line (its first line on stderr).
    static func ready(_ process: ChatProcess) async throws -> (id: String, port: Int) {
        try await process.waitForStderr("\"event\":\"ready\"")
        let first = try #require(process.errors.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "ready", "the ready line comes first: \(first)")
        return (try #require(object["id"] as? String), try #require(object["port"] as? Int))
    }

    /// meshcat with stdin or stdout redirected to a file through `sh`.
    static func meshcat(_ arguments: [String], label: String, stdin: String? = nil, stdout: String? = nil) throws -> ChatProcess {
        var redirect = "exec \"$@\""
        if let stdin { redirect += " < '\(stdin)'" }
        if let stdout { redirect += " > '\(stdout)'" }
        return try ChatProcess(arguments, executable: "meshcat", label: label, launcher: ["/bin/sh", "-c", redirect, "sh"])
    }

    @Test("listen ← relay ← send on loopback: 4 MB of random data arrive with the same SHA-256, and send exits 0")
    func throughARelay() async throws {
        let directory = TemporaryDirectory("meshcat-test")
        let input = directory.appending("in.bin"), output = directory.appending("out.bin")
        var generator = SplitMix64(seed: 14)
        let content = (0..<(4 << 20) / 8).map { _ in generator.next() }.withUnsafeBytes { Data($0) }
        try content.write(to: URL(fileURLWithPath: input))

        let listen = try Self.meshcat(["listen", "--no-discovery", "--data-dir", directory.appending("c"), "--count", "1"],
                                      label: "listen", stdout: output)
        defer { listen.kill9() }
        let c = try await Self.ready(listen)
        let relay = try Self.meshcat(["listen", "--no-discovery", "--data-dir", directory.appending("b"),
                                      "--connect", "127.0.0.1:\(c.port)"], label: "relay", stdout: "/dev/null")
        defer { relay.kill9() }
        let b = try await Self.ready(relay)
        let send = try Self.meshcat(["send", "--no-discovery", "--data-dir", directory.appending("a"),
                                     "--connect", "127.0.0.1:\(b.port)", "--to", c.id, "--name", "payload"],
                                    label: "send", stdin: input)
        defer { send.kill9() }
        _ = try await Self.ready(send)

        #expect(try await send.waitForExit(timeout: .seconds(120)) == 0, "send: \(send.errors)")
        #expect(send.errors.contains("\"event\":\"finished\""))
        #expect(try await listen.waitForExit(timeout: .seconds(30)) == 0, "listen: \(listen.errors)")
        #expect(listen.errors.contains("\"name\":\"payload\""))
        let received = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(received.count == content.count)
        #expect(SHA256.hash(data: received) == SHA256.hash(data: content))
    }

    @Test("send to a node that is not there fails with status 1 and says why")
    func noRoute() async throws {
        let directory = TemporaryDirectory("meshcat-test")
        let send = try Self.meshcat(["send", "--no-discovery", "--data-dir", directory.appending("a"),
                                     "--to", String(repeating: "ab", count: 16), "--wait", "1"],
                                    label: "send", stdin: "/dev/null")
        defer { send.kill9() }
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 1)
        #expect(send.errors.contains("\"event\":\"error\"") && send.errors.contains("no route"))
    }
}
