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

    /// Where a process's stdin stands in its file (`pos` in /proc/PID/fdinfo/0).
    static func stdinPosition(_ process: ChatProcess) -> Int? {
        guard let info = try? String(contentsOfFile: "/proc/\(process.pid)/fdinfo/0", encoding: .utf8) else { return nil }
        return info.split(separator: "\n").first { $0.hasPrefix("pos:") }.flatMap { Int($0.dropFirst(4).trimmingCharacters(in: .whitespaces)) }
    }

    @Test("a reader that does not read: the sender stops reading its input and its memory stays bounded; once read, 64 MiB arrive whole")
    func sleepingReader() async throws {
        let directory = TemporaryDirectory("meshcat-test")
        let input = directory.appending("in.bin"), fifo = directory.appending("out.fifo")
        var generator = SplitMix64(seed: 15)
        let size = 64 << 20
        let content = (0..<size / 8).map { _ in generator.next() }.withUnsafeBytes { Data($0) }
        try content.write(to: URL(fileURLWithPath: input))
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened for reading (so that the listener's open for writing succeeds) and not read yet.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }

        let listen = try Self.meshcat(["listen", "--no-discovery", "--data-dir", directory.appending("c"), "--count", "1"],
                                      label: "listen", stdout: fifo)
        defer { listen.kill9() }
        let c = try await Self.ready(listen)
        let send = try Self.meshcat(["send", "--no-discovery", "--data-dir", directory.appending("a"),
                                     "--connect", "127.0.0.1:\(c.port)", "--to", c.id], label: "send", stdin: input)
        defer { send.kill9() }
        _ = try await Self.ready(send)
        try await send.waitForStderr("\"event\":\"opened\"")

        // The listener's stdout pipe fills (64 KiB), then both 4 MiB windows (the reader's, and
        // what the sender holds unacknowledged), the element of up to 1 MiB the listener took and
        // cannot write, and meshcat's two 1 MiB reads (the one being written and the one read
        // ahead): the sender stops reading its input far short of the file, and its memory stays
        // put, for 3 s of watching.
        let watchUntil = ContinuousClock.now + .seconds(3)
        var maxPosition = 0, maxResident = 0
        while ContinuousClock.now < watchUntil {
            maxPosition = max(maxPosition, Self.stdinPosition(send) ?? 0)
            maxResident = max(maxResident, send.residentBytes ?? 0)
            try await Task.sleep(for: .milliseconds(50))  // sampling, not synchronising
        }
        let windows = 2 * (4 << 20)  // StreamLimits.window, default 4 MiB (PROTOCOL.md §18.7), on each side
        #expect(maxPosition <= windows + 3 * (1 << 20) + (64 << 10), "the sender read \(maxPosition) bytes of its input with nobody reading")
        #expect(maxResident < 96 << 20, "the sender's resident memory reached \(maxResident) bytes")
        #expect(Self.stdinPosition(send) ?? 0 > 0, "the sender read its input at all")

        // Now read: everything arrives, with the same SHA-256, and the sender exits 0.
        let flags = fcntl(reader, F_GETFL)
        _ = fcntl(reader, F_SETFL, flags & ~O_NONBLOCK)
        let drained = Task.detached { () -> (Int, SHA256.Digest) in
            var hasher = SHA256(), total = 0
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                hasher.update(data: buffer[0..<count])
                total += count
            }
            return (total, hasher.finalize())
        }
        #expect(try await send.waitForExit(timeout: .seconds(240)) == 0, "send: \(send.errors)")
        #expect(try await listen.waitForExit(timeout: .seconds(30)) == 0, "listen: \(listen.errors)")
        let (total, digest) = await drained.value
        #expect(total == size)
        #expect(digest == SHA256.hash(data: content))
    }

    /// meshcat on a namespace host (scripts/netns-hosts), stdin or stdout redirected to a file.
    static func meshcat(on host: String, prefix: String, _ arguments: [String], label: String,
                        stdin: String? = nil, stdout: String? = nil) throws -> ChatProcess {
        let hosts = ChatProcess.packageRoot.appendingPathComponent("scripts/netns-hosts").path
        var redirect = "exec '\(hosts)' exec \(host) \"$@\""
        if let stdin { redirect += " < '\(stdin)'" }
        if let stdout { redirect += " > '\(stdout)'" }
        return try ChatProcess(arguments, executable: "meshcat", label: label,
                               environment: ["MESHCHAT_NETNS_PREFIX": prefix], launcher: ["/bin/sh", "-c", redirect, "sh"])
    }

    @Test("200 MiB across a relay on three namespace hosts (A—B—C, found by discovery alone): same SHA-256, send exits 0")
    func acrossHosts() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let prefix = "mcs\(getpid() % 100000)-"
        try MultiHostTests.hosts(["up", "A-B B-C"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory("meshcat-test")
        let input = directory.appending("in.bin"), output = directory.appending("out.bin")
        let made = try Command.run(["/bin/sh", "-c", "head -c \(200 << 20) /dev/urandom > '\(input)'"])
        #expect(made.status == 0, "\(made.output)")

        let listen = try Self.meshcat(on: "C", prefix: prefix, ["listen", "--data-dir", directory.appending("c"), "--count", "1"],
                                      label: "listen", stdout: output)
        defer { listen.kill9() }
        let c = try await Self.ready(listen)
        let relay = try Self.meshcat(on: "B", prefix: prefix, ["listen", "--data-dir", directory.appending("b")],
                                     label: "relay", stdout: "/dev/null")
        defer { relay.kill9() }
        _ = try await Self.ready(relay)
        let send = try Self.meshcat(on: "A", prefix: prefix, ["send", "--data-dir", directory.appending("a"), "--to", c.id, "--wait", "60"],
                                    label: "send", stdin: input)
        defer { send.kill9() }
        #expect(try await send.waitForExit(timeout: .seconds(600)) == 0, "send: \(send.errors)")
        #expect(try await listen.waitForExit(timeout: .seconds(30)) == 0, "listen: \(listen.errors)")
        let sums = try Command.run(["/bin/sh", "-c", "sha256sum '\(input)' '\(output)'"])
        let digests = sums.output.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(digests.count == 2 && digests[0] == digests[1], "\(sums.output)")
    }
}
