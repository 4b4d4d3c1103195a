import Foundation
import MeshTestSupport
import Testing

/// `meshchat send` as a script uses it: real processes, exit statuses, one JSON object on stdout.
/// Every node runs with `--no-discovery` and a data directory of its own.
@Suite("meshchat send", .serialized)
struct SendCommandTests {
    /// `meshchat send --no-discovery --name alice --data-dir DIR/alice --json` plus `arguments`.
    static func send(_ arguments: [String], in directory: TemporaryDirectory, label: String = "send") throws -> ChatProcess {
        try ChatProcess(["send", "--no-discovery", "--name", "alice", "--data-dir", directory.appending("alice"), "--json"] + arguments,
                        label: label)
    }

    /// The one JSON object `send --json` prints.
    static func result(_ process: ChatProcess) throws -> JSONLine {
        let line = try #require(process.output.last, "\(process.label) printed nothing; stderr: \(process.errors)")
        return try #require(JSONLine(line), "not JSON: \(line)")
    }

    @Test("to a running peer by name: exit 0 once the receipt is back, and the peer shows the private line")
    func delivered() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        let port = try await CommandLineTests.readyPort(bob)
        let send = try Self.send(["--connect", "127.0.0.1:\(port)", "--to", "@bob", "--timeout", "20", "hello bob, from a script"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(send.errors)")
        let result = try Self.result(send)
        #expect(result.string("status") == "delivered")
        #expect(result.int("exit") == 0)
        let id = try #require(result.string("id"))
        let message = try await bob.waitForEvent("\"event\":\"message\"", "hello bob, from a script")
        #expect(message.contains("\"private\":true"))
        #expect(message.contains(id))
        #expect(message.contains("\"name\":\"alice\""))
        bob.closeInput()
    }

    @Test("to everyone: exit 0 once the line went to a connected peer, without a receipt")
    func broadcast() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        let port = try await CommandLineTests.readyPort(bob)
        let send = try Self.send(["--connect", "127.0.0.1:\(port)", "--timeout", "20", "hello everyone"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(send.errors)")
        let result = try Self.result(send)
        #expect(result.string("status") == "sent")
        #expect(result.object["private"] as? Bool == false)
        let message = try await bob.waitForEvent("\"event\":\"message\"", "hello everyone")
        #expect(message.contains("\"private\":false"))
        bob.closeInput()
    }

    @Test("to a name nobody has: exit 67 after the timeout, and nothing is stored")
    func unknownPeer() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        let port = try await CommandLineTests.readyPort(bob)
        let send = try Self.send(["--connect", "127.0.0.1:\(port)", "--to", "@nobody", "--timeout", "1", "anyone there?"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(20)) == 67, "stderr: \(send.errors)")
        let result = try Self.result(send)
        #expect(result.string("status") == "unknownPeer")
        #expect(result.string("message")?.contains("no peer called \"nobody\" was reachable, and none is in the history") == true)
        #expect(result.string("id") == nil)
        bob.closeInput()

        // Nothing waits in alice's outbox: her history is empty.
        let alice = try ChatProcess.local("alice", directory)
        alice.send("/history")
        let history = try await alice.waitForEvent("\"event\":\"history\"")
        #expect(history.contains("\"messages\":[]"), "\(history)")
        alice.closeInput()
    }

    @Test("--timeout 1 to a peer that never acknowledges: exit 75 within the deadline; the line stays in the outbox")
    func timesOut() async throws {
        let directory = TemporaryDirectory()
        // A meshchat session without a messenger: it takes the sealed line and never sends a receipt.
        let sink = try ChatProcess(["sink"], executable: "meshbench", label: "sink")
        let portLine = try await sink.waitForLine { $0.contains("\"port\"") }
        let port = try #require(JSONLine(portLine)?.int("port"))
        let started = ContinuousClock.now
        let send = try Self.send(["--connect", "127.0.0.1:\(port)", "--to", "@sink", "--timeout", "1", "are you there?"], in: directory)
        #expect(try await send.waitForExit(timeout: .seconds(20)) == 75, "stderr: \(send.errors)")
        // Start-up plus the one-second timeout plus the goodbyes: well within 10 s.
        #expect(ContinuousClock.now - started < .seconds(10))
        let result = try Self.result(send)
        #expect(result.string("status") == "queued")
        #expect(result.string("message")?.contains("no delivery receipt from sink") == true)
        #expect(result.string("message")?.contains(directory.appending("alice")) == true)
        sink.kill9()

        // The line is on disk, sent and waiting for its receipt.
        let alice = try ChatProcess.local("alice", directory)
        alice.send("/history")
        let history = try await alice.waitForEvent("\"event\":\"history\"")
        #expect(history.contains("are you there?"))
        #expect(history.contains("\"status\":\"sent\""))
        alice.closeInput()
    }

    @Test("the data directory's lock refuses a second chat, naming the directory and --data-dir; send goes through the chat")
    func lockRefusesSecondProcess() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        _ = try await CommandLineTests.readyPort(bob)
        let bobDirectory = directory.appending("bob")

        let send = try ChatProcess(["send", "--no-discovery", "--data-dir", bobDirectory, "--to", "@carol", "--timeout", "1", "hi"], label: "send")
        // `send` starts no second node there: it asks the running chat (ControlSocketTests), which knows no carol.
        #expect(try await send.waitForExit() == 67)
        #expect(send.errors.contains("the chat running with \(bobDirectory) refused the line: no peer is called \"carol\""), "\(send.errors)")

        let second = try ChatProcess.local("bob", directory, ["--name", "bob2"])
        #expect(try await second.waitForExit() == 1)
        let error = try await second.waitForEvent("\"event\":\"error\"")
        #expect(error.contains(bobDirectory))
        #expect(error.contains("--data-dir"))

        // The first process is unharmed, and once it ends the directory is free again.
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
        let third = try ChatProcess.local("bob", directory)
        _ = try await CommandLineTests.readyPort(third)
        third.closeInput()
        #expect(try await third.waitForExit() == 0)
    }

    @Test("bad send command lines exit 64 with a message naming the option", arguments: [
        (["--timeout", "0", "x"], "--timeout 0.0 is out of range"),
        (["--timeout", "100000", "x"], "is out of range"),
        (["--to", "@", "x"], "--to \"@\" is not a peer"),
        (["--to", "@bob"], "Missing expected argument '<TEXT>'"),
        (["--to", "@bob", ""], "the line is 0 bytes"),
    ])
    func badCommandLine(_ arguments: [String], _ message: String) async throws {
        let directory = TemporaryDirectory()
        let send = try ChatProcess(["send", "--no-discovery", "--data-dir", directory.appending("x")] + arguments, label: "send")
        #expect(try await send.waitForExit() == 64)
        #expect(send.errors.contains(message), "\(send.errors)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("x")))
    }
}

extension SendCommandTests {
    @Test("to a peer known only from your own sent lines: queued (75), not unknown (67)")
    func peerKnownFromSentLines() async throws {
        let directory = TemporaryDirectory()
        let bob = try ChatProcess.local("bob", directory, ["--keep-running"])
        let port = try await CommandLineTests.readyPort(bob)
        let first = try Self.send(["--connect", "127.0.0.1:\(port)", "--to", "@bob", "--timeout", "20", "first line"], in: directory)
        #expect(try await first.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(first.errors)")
        bob.kill9()
        _ = try await bob.waitForExit()

        // bob never wrote to alice: her history has only her own line to him.
        let second = try Self.send(["--to", "@bob", "--timeout", "1", "second line"], in: directory)
        #expect(try await second.waitForExit(timeout: .seconds(20)) == 75, "stderr: \(second.errors)")
        let result = try Self.result(second)
        #expect(result.string("status") == "queued", "\(result)")
        #expect(result.string("id") != nil)
    }
}
