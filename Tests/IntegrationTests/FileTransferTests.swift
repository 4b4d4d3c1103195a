import Crypto
import Foundation
import MeshTestSupport
import Testing

/// `/send @name FILE` (PROTOCOL.md §16) with real `meshchat` processes on loopback.
@Suite("file transfer", .serialized)
struct FileTransferTests {
    /// Random bytes written to `path`.
    static func randomFile(_ path: String, bytes: Int) throws -> Data {
        var generator = SystemRandomNumberGenerator()
        var bytesOut = [UInt8](repeating: 0, count: bytes)
        for index in bytesOut.indices { bytesOut[index] = UInt8(truncatingIfNeeded: generator.next()) }
        let data = Data(bytesOut)
        try data.write(to: URL(fileURLWithPath: path))
        return data
    }

    static func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test("a 3 MiB file goes from alice to carol across relay bob byte-identical, with offered/progress/received/sent events on both ends; a second copy gets a new name")
    func acrossRelay() async throws {
        let directory = TemporaryDirectory()
        let downloads = directory.appending("carol-downloads")
        let line = try await ChatLine.start(directory, carol: ["--downloads", downloads])
        let (alice, bob, carol) = (line.alice, line.bob, line.carol)

        let source = directory.appending("holiday photos.bin")
        let content = try Self.randomFile(source, bytes: 3 * 1024 * 1024 + 12_345)
        let sha = Self.hex(content)
        alice.send("/send @carol \(source)")

        let offered = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\"")))
        #expect(offered.string("direction") == "outgoing")
        #expect(offered.string("name") == "holiday photos.bin")
        #expect(offered.int("size") == content.count)
        #expect(offered.string("sha256") == sha)
        let incoming = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileOffered\"")))
        #expect(incoming.string("direction") == "incoming")
        #expect(incoming.object("peer")?["name"] as? String == "alice")
        #expect(incoming.string("id") == offered.string("id"))

        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", timeout: .seconds(60))))
        let sent = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileSent\"", timeout: .seconds(60))))
        #expect(received.string("sha256") == sha)
        #expect(sent.string("sha256") == sha)
        #expect(received.int("size") == content.count)
        #expect(sent.object("to")?["name"] as? String == "carol")
        let path = try #require(received.string("path"))
        #expect(path == downloads + "/holiday photos.bin")
        let stored = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Self.hex(stored) == sha)
        #expect(stored == content)
        // Progress was reported on both ends, below the whole size.
        let progress = alice.output.compactMap(JSONLine.init).filter { $0.string("event") == "fileProgress" }
        #expect(!progress.isEmpty)
        #expect(progress.allSatisfy { ($0.int("bytes") ?? 0) > 0 && ($0.int("bytes") ?? 0) < content.count })
        #expect(carol.output.contains { $0.contains("\"event\":\"fileProgress\"") })
        // The downloads directory is private and holds no .part file.
        let attributes = try FileManager.default.attributesOfItem(atPath: downloads)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["holiday photos.bin"])

        // The same file again never overwrites the first copy.
        let mark = carol.output.count
        alice.send("/send @carol \(source)")
        let second = try await carol.waitForLine(timeout: .seconds(60), from: mark) { $0.contains("\"event\":\"fileReceived\"") }
        #expect(JSONLine(second)?.string("path") == downloads + "/holiday photos (1).bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: downloads + "/holiday photos (1).bin")) == content)
        // Finished transfers are no longer listed.
        try await alice.waitForEvent("\"event\":\"fileSent\"", "\"id\":\"\(try #require(JSONLine(second)?.string("id")))\"")
        let files = try await PlacesMeshTests.ask(alice, "/files", "\"event\":\"files\"")
        #expect((files.object["transfers"] as? [Any])?.isEmpty == true)
        try await PlacesMeshTests.stop(alice, bob, carol)
    }

    @Test("a transfer survives its relay going away: killed mid-transfer and restarted, the file arrives whole under the same transfer id")
    func survivesRelayRestart() async throws {
        let directory = TemporaryDirectory()
        let (line, downloads) = try await Self.line(directory)
        let (alice, carol) = (line.alice, line.carol)
        var bob = line.bob
        let port = line.bobPort

        let source = directory.appending("big.bin")
        // The relay is killed as soon as carol's partial file has its first bytes on disk: read from
        // the file system, not from carol's events, which a loaded machine may deliver late.
        let content = try Self.randomFile(source, bytes: 32 * 1024 * 1024)
        alice.send("/send @carol \(source)")
        let id = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\""))?.string("id"))
        // Partial files live in the session's resource directory (PROTOCOL.md §16.4.2), not in downloads.
        try await Self.waitForPartialFile(in: directory.appending("carol") + "/resources/incoming")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).isEmpty, "no partial file in downloads")
        bob.kill9()
        _ = try await bob.waitForExit()
        try await alice.waitForEvent("\"event\":\"unreachable\"", "\"name\":\"carol\"")
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileReceived\"") }, "the transfer ended before the relay died: \(carol.output.suffix(6))")
        // Both sides say the transfer waits.
        try await alice.waitForEvent("\"event\":\"filePaused\"", id)
        try await carol.waitForEvent("\"event\":\"filePaused\"", id)

        bob = try await Self.restartRelay(directory, port: port, alice, carol)
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", id, timeout: .seconds(90))))
        try await alice.waitForEvent("\"event\":\"fileSent\"", id, timeout: .seconds(30))
        #expect(received.string("sha256") == Self.hex(content))
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(received.string("path")))) == content)
        #expect(!alice.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        // ... and that it went on.
        #expect(alice.output.contains { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) })
        #expect(carol.output.contains { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) })
        try await PlacesMeshTests.stop(alice, bob, carol)
    }

    @Test("a transfer survives its receiver killed with SIGKILL and started again on the same data directory: both say paused, carol reports the transfer again, and it resumes and arrives whole under the same id")
    func survivesReceiverRestart() async throws {
        let directory = TemporaryDirectory()
        let (line, downloads) = try await Self.line(directory)
        var carol = line.carol
        let (alice, bob) = (line.alice, line.bob)
        let source = directory.appending("big.bin")
        let content = try Self.randomFile(source, bytes: 32 * 1024 * 1024)
        alice.send("/send @carol \(source)")
        let id = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\""))?.string("id"))
        try await Self.waitForPartialFile(in: directory.appending("carol") + "/resources/incoming")
        carol.kill9()
        _ = try await carol.waitForExit()
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileReceived\"") }, "the transfer ended before carol died")
        try await alice.waitForEvent("\"event\":\"filePaused\"", id)

        carol = try ChatProcess.local("carol", directory, ["--connect", "127.0.0.1:\(line.bobPort)", "--downloads", downloads])
        try await carol.waitForEvent("\"event\":\"fileOffered\"", id, "\"direction\":\"incoming\"")
        try await carol.waitForEvent("\"event\":\"filePaused\"", id)
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", id, timeout: .seconds(120))))
        try await alice.waitForEvent("\"event\":\"fileSent\"", id, timeout: .seconds(30))
        #expect(received.string("sha256") == Self.hex(content))
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(received.string("path")))) == content)
        #expect(carol.output.contains { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) })
        #expect(alice.output.contains { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) })
        #expect(!alice.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("carol") + "/resources/incoming").isEmpty)
        try await PlacesMeshTests.stop(alice, bob, carol)
    }

    @Test("a transfer survives its sender killed with SIGKILL and started again on the same data directory: carol says paused and resumed, alice reports the transfer again and finishes it from what carol holds")
    func survivesSenderRestart() async throws {
        let directory = TemporaryDirectory()
        let (line, downloads) = try await Self.line(directory)
        var alice = line.alice
        let (bob, carol) = (line.bob, line.carol)
        let source = directory.appending("big.bin")
        let content = try Self.randomFile(source, bytes: 32 * 1024 * 1024)
        alice.send("/send @carol \(source)")
        let id = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\""))?.string("id"))
        try await Self.waitForPartialFile(in: directory.appending("carol") + "/resources/incoming")
        alice.kill9()
        _ = try await alice.waitForExit()
        try await carol.waitForEvent("\"event\":\"filePaused\"", id)

        alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(line.bobPort)"])
        try await alice.waitForEvent("\"event\":\"fileOffered\"", id, "\"direction\":\"outgoing\"")
        try await alice.waitForEvent("\"event\":\"fileSent\"", id, timeout: .seconds(120))
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", id, timeout: .seconds(30))))
        #expect(received.string("path") == downloads + "/big.bin")
        #expect(try Data(contentsOf: URL(fileURLWithPath: downloads + "/big.bin")) == content)
        #expect(carol.output.contains { $0.contains("\"event\":\"fileResumed\"") && $0.contains(id) })
        #expect(!carol.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appending("alice") + "/resources/outgoing").isEmpty)
        try await PlacesMeshTests.stop(alice, bob, carol)
    }

    @Test("an offer made while the relay is down waits paused: no failure for 70 s (8 unanswered tries used to fail it within about a minute), then the relay comes back and the file arrives; the sender says paused and resumed")
    func offerWaitsForRoute() async throws {
        let directory = TemporaryDirectory()
        let (line, downloads) = try await Self.line(directory)
        let (alice, carol) = (line.alice, line.carol)
        var bob = line.bob
        let port = line.bobPort
        let source = directory.appending("waiting.bin")
        let content = try Self.randomFile(source, bytes: 300_000)

        bob.kill9()
        _ = try await bob.waitForExit()
        try await alice.waitForEvent("\"event\":\"unreachable\"", "\"name\":\"carol\"")
        alice.send("/send @carol \(source)")
        let id = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileOffered\""))?.string("id"))
        try await alice.waitForEvent("\"event\":\"filePaused\"", id)
        // The real limits, the real path: the offer must outlive the old retry budget. Waiting for
        // a failure that must not come is the assertion (it has no event of its own).
        await #expect(throws: (any Error).self, "the paused offer failed") {
            try await alice.waitForEvent("\"event\":\"fileFailed\"", timeout: .seconds(70))
        }

        bob = try await Self.restartRelay(directory, port: port, alice, carol)
        try await alice.waitForEvent("\"event\":\"fileResumed\"", id, timeout: .seconds(30))
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", id, timeout: .seconds(60))))
        try await alice.waitForEvent("\"event\":\"fileSent\"", id, timeout: .seconds(30))
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(received.string("path")))) == content)
        #expect(!alice.output.contains { $0.contains("\"event\":\"fileFailed\"") })
        try await PlacesMeshTests.stop(alice, bob, carol)
    }

    @Test("a missing file, a file over 16 GiB, an unknown peer and a missing argument are one-line errors with the usage, nothing sent; a blocked sender is refused; /files and /cancel")
    func errorsAndBlocked() async throws {
        let directory = TemporaryDirectory()
        let downloads = directory.appending("bob-downloads")
        let bob = try ChatProcess.local("bob", directory, ["--downloads", downloads])
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"")
        try await bob.waitForEvent("\"event\":\"reachable\"", "\"name\":\"alice\"")

        let big = directory.appending("big.iso")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.truncate(atOffset: (16 << 30) + 1)   // sparse
        try handle.close()
        let small = directory.appending("note.txt")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: small))

        for (line, fragment) in [("/send @bob \(directory.appending("missing.txt"))", "missing.txt"),
                                 ("/send @bob \(big)", "over the limit of 17179869184 bytes (16 GiB)"),
                                 ("/send @nobody \(small)", "nobody"),
                                 ("/send @bob", "the file is missing")] {
            let error = try await PlacesMeshTests.ask(alice, line, "\"event\":\"error\"")
            let message = try #require(error.string("message"))
            #expect(message.hasPrefix("/send: "), "\(line)")
            #expect(message.contains(fragment), "\(line): \(message)")
            #expect(message.contains("usage: /send @NAME FILE"), "\(line)")
        }
        #expect(!alice.output.contains { $0.contains("\"event\":\"fileOffered\"") })

        try await PlacesMeshTests.ask(bob, "/block @alice", "\"event\":\"blocked\"")
        alice.send("/send @bob \(small)")
        let failed = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileFailed\"")))
        #expect(failed.string("code") == "refused")
        #expect(failed.object["by_peer"] as? Bool == true)
        #expect(failed.string("name") == "note.txt")
        #expect(!bob.output.contains { $0.contains("\"event\":\"fileOffered\"") || $0.contains("\"event\":\"fileReceived\"") })
        #expect(!FileManager.default.fileExists(atPath: downloads + "/note.txt"))

        try await PlacesMeshTests.ask(bob, "/unblock @alice", "\"event\":\"blocked\"")
        alice.send("/send @bob \(small)")
        let received = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"fileReceived\"")))
        #expect(received.string("path") == downloads + "/note.txt")
        #expect(try String(contentsOfFile: downloads + "/note.txt", encoding: .utf8) == "hello")

        // /files lists a running transfer; /cancel stops it on both sides and leaves no .part file.
        let large = directory.appending("large.bin")
        _ = try Self.randomFile(large, bytes: 16 * 1024 * 1024)
        alice.send("/send @bob \(large)")
        try await bob.waitForEvent("\"event\":\"fileProgress\"", "large.bin")
        let files = try await PlacesMeshTests.ask(alice, "/files", "\"event\":\"files\"")
        let rows = try #require(files.object["transfers"] as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["name"] as? String == "large.bin")
        #expect(rows.first?["direction"] as? String == "outgoing")
        let id = try #require(rows.first?["id"] as? String)
        try await PlacesMeshTests.ask(alice, "/cancel ffffffffffffffff", "\"event\":\"error\"", "no file transfer")
        alice.send("/cancel \(id.prefix(8))")
        let mine = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileFailed\"", id)))
        #expect(mine.string("code") == "cancelled")
        #expect(mine.object["by_peer"] as? Bool == false)
        let theirs = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"fileFailed\"", id)))
        #expect(theirs.string("code") == "cancelled")
        #expect(theirs.object["by_peer"] as? Bool == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["note.txt"])
        try await PlacesMeshTests.stop(alice, bob)
    }

    @Test("the receiver's --max-file-size binds: a file one byte over it is refused (the sender sees tooLarge from the peer, nothing is stored), one of exactly its size arrives; over the old 64 MiB cap is no error for the sender")
    func receiverSizeLimit() async throws {
        let directory = TemporaryDirectory()
        let downloads = directory.appending("bob-downloads")
        let bob = try ChatProcess.local("bob", directory, ["--downloads", downloads, "--max-file-size", "1MiB"])
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let alice = try ChatProcess.local("alice", directory, ["--connect", "127.0.0.1:\(port)"])
        try await alice.waitForEvent("\"event\":\"reachable\"", "\"name\":\"bob\"")

        let over = directory.appending("over.bin"), exact = directory.appending("exact.bin")
        _ = try Self.randomFile(over, bytes: (1 << 20) + 1)
        let content = try Self.randomFile(exact, bytes: 1 << 20)
        alice.send("/send @bob \(over)")
        let failed = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"fileFailed\"")))
        #expect(failed.string("code") == "tooLarge")
        #expect(failed.object["by_peer"] as? Bool == true)
        #expect(!bob.output.contains { $0.contains("\"event\":\"fileReceived\"") })
        alice.send("/send @bob \(exact)")
        let received = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"fileReceived\"")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(received.string("path")))) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["exact.bin"])

        // The sender's side has no 64 MiB cap any more: a 65 MiB file is offered (bob refuses it).
        let large = directory.appending("large.bin")
        #expect(FileManager.default.createFile(atPath: large, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: large))
        try handle.truncate(atOffset: 65 << 20)   // sparse
        try handle.close()
        let mark = alice.output.count
        alice.send("/send @bob \(large)")
        let refused = try await alice.waitForLine(timeout: .seconds(60), from: mark) { $0.contains("\"event\":\"fileFailed\"") || $0.contains("\"event\":\"error\"") }
        #expect(JSONLine(refused)?.string("code") == "tooLarge", "\(refused)")
        try await PlacesMeshTests.stop(alice, bob)
    }

    /// alice — bob — carol on loopback, carol storing files in `carol-downloads` in `directory`.
    static func line(_ directory: TemporaryDirectory) async throws -> (line: ChatLine, downloads: String) {
        let downloads = directory.appending("carol-downloads")
        return (try await ChatLine.start(directory, carol: ["--downloads", downloads]), downloads)
    }

    /// Starts relay bob again on his old port, and has alice and carol connect to him.
    static func restartRelay(_ directory: TemporaryDirectory, port: Int, _ alice: ChatProcess, _ carol: ChatProcess) async throws -> ChatProcess {
        let bob = try ChatProcess.local("bob", directory, ["--port", "\(port)"])
        try await bob.waitForEvent("\"event\":\"ready\"")
        alice.send("/connect 127.0.0.1:\(port)")
        carol.send("/connect 127.0.0.1:\(port)")
        return bob
    }

    /// Waits until a `.part` file in `directory` holds some bytes (bounded polling: the file
    /// system has no change event here).
    static func waitForPartialFile(in directory: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names where name.hasSuffix(".part") {
                let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0
                if size > 0 { return }
            }
            guard ContinuousClock.now < deadline else {
                throw TmuxSession.Failure(description: "no partial file with data in \(directory) within \(timeout): \(names)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
