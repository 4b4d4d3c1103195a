import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A 200 MiB `/send` (a resource, PROTOCOL.md §16) across relay B on three namespace hosts
/// (scripts/netns-hosts "A-B B-C"), through a dropped link and a killed receiver. Needs root;
/// where it cannot run it fails rather than skips (CI runs as root).
@Suite("a 200 MiB file across hosts", .serialized)
struct LargeFileHostsTests {
    static let size = 200 << 20

    /// Bytes an interface of a namespace host has transmitted (its kernel counter, which survives
    /// the link going down and up).
    static func transmitted(_ host: String, _ interface: String, prefix: String) throws -> UInt64 {
        let result = try Command.run(["/usr/sbin/ip", "netns", "exec", prefix + host, "cat", "/sys/class/net/\(interface)/statistics/tx_bytes"])
        guard result.status == 0, let bytes = UInt64(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HostsFailure(description: "no tx_bytes for \(host)/\(interface): \(result.output)")
        }
        return bytes
    }

    /// The bytes of a `fileProgress` line of transfer `id`, or `nil` for any other line.
    static func progress(_ line: String, _ id: String) -> Int? {
        guard line.contains("\"event\":\"fileProgress\""), line.contains(id) else { return nil }
        return JSONLine(line)?.int("bytes")
    }

    @Test("200 MiB from A to C through relay B: the B—C link dropped past 50% and restored (both ends say paused, then resumed), then C killed with SIGKILL and restarted on its data directory (it resumes from what it held); the file arrives with the same SHA-256, and neither A nor B put more than 1.1 × the file on the wire (interface counters)")
    func throughDropAndKill() async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let started = ContinuousClock.now
        let prefix = "mcr\(getpid() % 100000)-"
        try MultiHostTests.hosts(["up", "A-B B-C"], prefix: prefix)
        defer { _ = try? MultiHostTests.hosts(["down"], prefix: prefix) }
        let directory = TemporaryDirectory()
        let source = directory.appending("video.bin"), downloads = directory.appending("carol-downloads")
        let made = try Command.run(["/bin/sh", "-c", "head -c \(Self.size) /dev/urandom > '\(source)' && sha256sum '\(source)'"])
        #expect(made.status == 0, "\(made.output)")
        let sha = try #require(made.output.split(separator: " ").first.map(String.init))

        let service = DiscoveryTests.uniqueService()
        func start(_ name: String, on host: String, extra: [String] = []) throws -> ChatProcess {
            try MultiHostTests.peer(name, on: host, prefix: prefix, service: service, directory, extra: extra)
        }
        let alice = try start("alice", on: "A")
        let bob = try start("bob", on: "B")
        var carol = try start("carol", on: "C", extra: ["--downloads", downloads])
        defer { carol.kill9() }  // the others die with their ChatProcess; carol's variable is replaced below
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"carol\"", "\"hops\":2", timeout: .seconds(30))
        let sentAB = try Self.transmitted("A", "to-B", prefix: prefix), sentBC = try Self.transmitted("B", "to-C", prefix: prefix)

        alice.send("/send @carol \(source)")
        let id = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\"", timeout: .seconds(60)))?.string("id"))
        let half = Self.size / 2
        try await carol.waitForLine(timeout: .seconds(300)) { (Self.progress($0, id) ?? 0) >= half }
        let halfway = ContinuousClock.now

        // The B—C link dies for real (both veth ends down): the TCP link is not closed by anyone,
        // the mesh notices it is silent. The transfer pauses on both ends.
        var (markA, markC) = (alice.output.count, carol.output.count)
        let droppedAt = carol.output.compactMap { Self.progress($0, id) }.last ?? 0
        try MultiHostTests.hosts(["link-down", "B", "C"], prefix: prefix)
        try await alice.waitForLine(timeout: .seconds(60), from: markA) { $0.contains("\"event\":\"filePaused\"") && $0.contains(id) }
        try await carol.waitForLine(timeout: .seconds(60), from: markC) { $0.contains("\"event\":\"filePaused\"") && $0.contains(id) }
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileReceived\"") }, "the transfer ended before the link went down")
        try MultiHostTests.hosts(["link-up", "B", "C"], prefix: prefix)
        try await alice.waitForLine(timeout: .seconds(90), from: markA) { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) }
        try await carol.waitForLine(timeout: .seconds(90), from: markC) { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) }

        // Later the receiver is killed outright, past three quarters, and started again.
        try await carol.waitForLine(timeout: .seconds(300), from: markC) { (Self.progress($0, id) ?? 0) >= Self.size * 3 / 4 }
        markA = alice.output.count
        carol.kill9()
        _ = try await carol.waitForExit()
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileReceived\"") }, "the transfer ended before carol was killed")
        let killedAt = carol.output.compactMap { Self.progress($0, id) }.last ?? 0
        try await alice.waitForLine(timeout: .seconds(60), from: markA) { $0.contains("\"event\":\"filePaused\"") && $0.contains(id) }
        carol = try start("carol", on: "C", extra: ["--downloads", downloads])
        try await carol.waitForEvent("\"event\":\"fileOffered\"", id, "\"direction\":\"incoming\"", timeout: .seconds(30))
        try await carol.waitForEvent("\"event\":\"filePaused\"", id)
        try await carol.waitForEvent("\"event\":\"fileResumed\"", id, timeout: .seconds(90))
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", id, timeout: .seconds(300))))
        try await alice.waitForEvent("\"event\":\"fileSent\"", id, timeout: .seconds(60))
        let finished = ContinuousClock.now

        // The same bytes.
        #expect(received.string("sha256") == sha)
        let path = try #require(received.string("path"))
        #expect(path == downloads + "/video.bin")
        let stored = try Command.run(["/usr/bin/sha256sum", path])
        #expect(stored.output.split(separator: " ").first.map(String.init) == sha, "\(stored.output)")
        // Without starting over: the restarted receiver's first progress is past the half it held...
        let restartedAt = try #require(carol.output.compactMap { Self.progress($0, id) }.first)
        #expect(restartedAt >= half, "carol resumed at \(restartedAt) of \(Self.size) bytes")
        // ... and what went on the wire, counted by the kernel (frames, headers, retransmissions
        // and the mesh's own traffic included), is within 1.1 × the file on both hops.
        let wireAB = try Self.transmitted("A", "to-B", prefix: prefix) - sentAB
        let wireBC = try Self.transmitted("B", "to-C", prefix: prefix) - sentBC
        let (ratioAB, ratioBC) = (Double(wireAB) / Double(Self.size), Double(wireBC) / Double(Self.size))
        print("large file across hosts: \(Self.size) bytes; A→B \(wireAB) bytes (\(ratioAB)×), B→C \(wireBC) bytes (\(ratioBC)×); "
              + "halfway after \(halfway - started), link dropped at \(droppedAt), killed at \(killedAt), restarted at \(restartedAt), "
              + "done after \(finished - started)")
        #expect(ratioAB <= 1.1, "A sent \(wireAB) bytes towards B for a \(Self.size)-byte file")
        #expect(ratioBC <= 1.1, "B sent \(wireBC) bytes towards C for a \(Self.size)-byte file")
        #expect(!alice.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("carol") + "/resources/incoming").isEmpty)
        for process in [alice, bob, carol] { process.closeInput() }
        for process in [alice, bob, carol] { _ = try await process.waitForExit() }
    }
}
