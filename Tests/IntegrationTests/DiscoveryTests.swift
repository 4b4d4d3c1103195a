import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `meshchat` processes that find each other through the real avahi-daemon (scripts/test starts
/// one, restricted to `lo`, when none runs). Each test uses its own service type so that tests
/// never see each other's peers.
@Suite("discovery through avahi-daemon", .serialized)
struct DiscoveryTests {
    /// A service type no other test uses: `t` and 10 random lowercase letters.
    static func uniqueService() -> String {
        "t" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    }

    static func peer(_ name: String, service: String, _ directory: TemporaryDirectory, extra: [String] = [],
                     launcher: [String] = [], environment: [String: String] = [:]) throws -> ChatProcess {
        try ChatProcess(["--name", name, "--json", "--service", service, "--data-dir", directory.appending(name)] + extra,
                        label: name, environment: environment, launcher: launcher)
    }

    @Test("two peers on one host find each other, connect with no address given, chat, and see the other leave")
    func twoPeers() async throws {
        let directory = TemporaryDirectory()
        let service = Self.uniqueService()
        let alice = try Self.peer("alice", service: service, directory, extra: ["--info", "room=blue", "--info", "note=hi there"])
        let bob = try Self.peer("bob", service: service, directory)
        let found = try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"")
        // discoveryInfo round trip, through avahi's TXT record.
        #expect(JSONLine(found)?.object("info") as? [String: String] == ["note": "hi there", "room": "blue"])
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        let connected = try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        let address = try #require(JSONLine(connected)?.string("address"))
        bob.send("found you without an address")
        let message = try await alice.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(message)?.string("text") == "found you without an address")
        bob.send("/peers")
        let peers = try await bob.waitForEvent("\"event\":\"peers\"")
        // The link's address: 127.0.0.1 with the test daemon on lo, a LAN address with a desktop's daemon.
        #expect(peers.contains("\"name\":\"alice\"") && peers.contains("\"state\":\"connected\"")
                && peers.contains("\"address\":\"\(address)\""))

        // Leaving: the other side reports the peer lost (avahi withdraws the service) within 5 s.
        let started = ContinuousClock.now
        alice.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        try await bob.waitForEvent("\"event\":\"lost\"", "\"name\":\"alice\"", timeout: .seconds(5))
        #expect(ContinuousClock.now - started < .seconds(5))

        // A peer that restarts (same key, new port) is found and connected again by itself.
        let aliceID = try #require(JSONLine(alice.output[0])?.string("id"))
        let connectedBefore = bob.output.count
        let again = try Self.peer("alice", service: service, directory)
        try await bob.waitForLine(from: connectedBefore) { line in
            line.contains("\"event\":\"peer\"") && line.contains(aliceID) && line.contains("\"state\":\"connected\"")
        }
        try await again.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        for process in [again, bob] { process.closeInput() }
        for process in [again, bob] { #expect(try await process.waitForExit() == 0) }
    }

    @Test("eight peers started at once form exactly one connection per pair")
    func eightPeers() async throws {
        let directory = TemporaryDirectory()
        let service = Self.uniqueService()
        let names = (1...8).map { "p\($0)" }
        let peers = try names.map { try Self.peer($0, service: service, directory) }
        for (index, process) in peers.enumerated() {
            for other in names where other != names[index] {
                try await process.waitForEvent("\"event\":\"peer\"", "\"name\":\"\(other)\"", "\"state\":\"connected\"",
                                               timeout: .seconds(30))
            }
        }
        // Exactly one established TCP connection per pair: 7 per process once duplicates (if
        // any were made) have been retired. Bounded polling of the kernel's socket table.
        let pids = peers.map(\.pid)
        let deadline = ContinuousClock.now + .seconds(20)
        var counts: [Int32: Int] = [:]
        repeat {
            counts = try Self.establishedConnections(pids)
            if counts.values.allSatisfy({ $0 == 7 }) { break }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        #expect(counts.values.allSatisfy { $0 == 7 }, "established TCP connections per process: \(counts)")
        // And no peer ever flapped: one connected event per other peer, no disconnect.
        for process in peers {
            let connected = process.output.filter { $0.contains("\"event\":\"peer\"") && $0.contains("\"state\":\"connected\"") }
            #expect(connected.count == 7, "\(process.label): \(connected.count) connected events")
            let disconnects = process.output.filter { $0.contains("\"state\":\"notConnected\"") }
            #expect(disconnects.isEmpty, "\(process.label) saw a disconnect: \(disconnects.prefix(3))")
        }
        for process in peers { process.closeInput() }
        for process in peers { #expect(try await process.waitForExit() == 0) }
    }

    /// Established TCP connections per process, from `ss` (the kernel's socket table).
    static func establishedConnections(_ pids: [Int32]) throws -> [Int32: Int] {
        let ss = Process()
        ss.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ss.arguments = ["ss", "-Htnp", "state", "established"]
        let pipe = Pipe()
        ss.standardOutput = pipe
        try ss.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ss.waitUntilExit()
        var counts = Dictionary(uniqueKeysWithValues: pids.map { ($0, 0) })
        for line in text.split(separator: "\n") {
            for pid in pids where line.contains("pid=\(pid),") { counts[pid, default: 0] += 1 }
        }
        return counts
    }

    @Test("hostile TXT records are ignored with a log line; a valid advertisement beside them is found")
    func hostileTXT() async throws {
        let directory = TemporaryDirectory()
        let service = Self.uniqueService()
        let type = "_\(service)._tcp"
        let id = "_id=00112233445566778899aabbccddeeff"
        let big = String(repeating: "x", count: 240)
        // avahi-publish through sh so that the TXT strings may hold any bytes (printf octal escapes).
        let records: [(String, String)] = [
            ("no-id", "'_v=5' '_n=no-id'"),
            ("oversized", "'\(id)' '_v=5' '_n=oversized' " + (1...6).map { "'k\($0)=\(big)'" }.joined(separator: " ")),
            ("not-utf8", "'\(id)' '_v=5' '_n=not-utf8' \"$(printf 'note=\\377\\376')\""),
            ("duplicate", "'\(id)' '_v=5' '_n=duplicate' 'room=a' 'Room=b'"),
        ]
        var publishers: [Process] = []
        defer {
            // SIGKILL: avahi-publish does not always exit on SIGTERM.
            for publisher in publishers where publisher.isRunning { kill(publisher.processIdentifier, SIGKILL) }
            for publisher in publishers { publisher.waitUntilExit() }
        }
        for (name, txt) in records {
            let publisher = Process()
            publisher.executableURL = URL(fileURLWithPath: "/bin/sh")
            publisher.arguments = ["-c", "exec avahi-publish -s \(name) \(type) 9 \(txt) </dev/null >/dev/null 2>&1"]
            try publisher.run()
            publishers.append(publisher)
        }
        let carol = try Self.peer("carol", service: service, directory)
        let dave = try Self.peer("dave", service: service, directory)
        try await dave.waitForEvent("\"event\":\"found\"", "\"name\":\"carol\"")
        for (name, reason) in [("no-id", "no _id"), ("oversized", "exceeds the maximum 1300"),
                               ("not-utf8", "not UTF-8"), ("duplicate", "appears more than once")] {
            try await dave.waitForStderr("ignoring advertisement '\(name)'")
            #expect(dave.errors.split(separator: "\n").contains { $0.contains("'\(name)'") && $0.contains(reason) },
                    "log line for \(name) names the reason \"\(reason)\"")
            #expect(!dave.output.contains { $0.contains("\"event\":\"found\"") && $0.contains("\"name\":\"\(name)\"") })
        }
        // Still serving: the valid peers connected.
        try await dave.waitForEvent("\"event\":\"peer\"", "\"name\":\"carol\"", "\"state\":\"connected\"")
        for process in [carol, dave] { process.closeInput() }
        for process in [carol, dave] { #expect(try await process.waitForExit() == 0) }
    }

    @Test("without avahi-daemon the chat still starts and says what to do")
    func noDaemon() async throws {
        let directory = TemporaryDirectory()
        let erin = try Self.peer("erin", service: Self.uniqueService(), directory,
                                 environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        let error = try await erin.waitForEvent("\"event\":\"error\"")
        #expect(error.contains("avahi-daemon is not running") && error.contains("--connect"))
        try await erin.waitForEvent("\"event\":\"ready\"")
        erin.closeInput()
        #expect(try await erin.waitForExit() == 0)
    }

    @Test("--manual: found peers wait for /invite; the invited side answers with /accept")
    func manual() async throws {
        let directory = TemporaryDirectory()
        let service = Self.uniqueService()
        let frank = try Self.peer("frank", service: service, directory, extra: ["--manual"])
        let grace = try Self.peer("grace", service: service, directory, extra: ["--manual"])
        try await frank.waitForEvent("\"event\":\"found\"", "\"name\":\"grace\"")
        try await grace.waitForEvent("\"event\":\"found\"", "\"name\":\"frank\"")
        frank.send("/invite grace")
        try await grace.waitForEvent("\"event\":\"invitation\"", "\"direction\":\"received\"", "\"name\":\"frank\"")
        grace.send("/decline")
        let failed = try await frank.waitForEvent("\"event\":\"invitationFailed\"")
        #expect(failed.contains("\"kind\":\"declined\""))
        let seen = grace.output.count
        frank.send("/invite grace")
        try await grace.waitForLine(from: seen) { line in
            line.contains("\"event\":\"invitation\"") && line.contains("\"direction\":\"received\"")
        }
        grace.send("/peers")
        let peers = try await grace.waitForEvent("\"event\":\"peers\"")
        #expect(peers.contains("\"name\":\"frank\"") && peers.contains("\"state\":\"invitedYou\""))
        grace.send("/accept frank")
        try await frank.waitForEvent("\"event\":\"peer\"", "\"name\":\"grace\"", "\"state\":\"connected\"")
        try await grace.waitForEvent("\"event\":\"peer\"", "\"name\":\"frank\"", "\"state\":\"connected\"")
        for process in [frank, grace] { process.closeInput() }
        for process in [frank, grace] { #expect(try await process.waitForExit() == 0) }
    }
}
