import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `meshchat` command line as a user or a script meets it: real processes, exit codes, stdout
/// (`--json` events or text) and stderr. Every run uses `--no-discovery` and a fresh `--data-dir`.
@Suite("meshchat command line", .serialized)
struct CommandLineTests {
    /// Starts `meshchat` with `--no-discovery` and a data directory of its own inside `directory`.
    static func launch(_ arguments: [String], label: String, in directory: TemporaryDirectory) throws -> ChatProcess {
        try ChatProcess(["--no-discovery", "--data-dir", directory.appending(label)] + arguments, label: label)
    }

    /// Waits (bounded polling: stderr has no line events) until stderr contains `text`.
    @discardableResult
    static func waitForErrors(_ process: ChatProcess, containing text: String,
                              timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while !process.errors.contains(text) {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(process.label): stderr never contained \(text.debugDescription); stderr:\n\(process.errors)")
                return process.errors
            }
            try await Task.sleep(for: .milliseconds(20))  // bounded polling, as ChatProcess.waitForExit does
        }
        return process.errors
    }

    /// The port of a `ready` event.
    static func readyPort(_ process: ChatProcess) async throws -> Int {
        let ready = try await process.waitForEvent("\"event\":\"ready\"")
        return try #require(JSONLine(ready)?.int("port"))
    }

    /// A loopback TCP port that nothing listens on: bound by the kernel's choice, then closed.
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: Bad command lines

    @Test("a bad command line exits 64 with a message naming the bad option, and never starts", arguments: [
        (["--port", "70000"], "--port 70000"),
        (["--port", "-1"], "Missing value for '--port <port>'"),
        (["--port=-1"], "--port -1"),
        (["--name", ""], "--name must be 1 to 63 bytes"),
        (["--name", String(repeating: "n", count: 64)], "--name must be 1 to 63 bytes"),
        (["--connect", "nohost"], "--connect \"nohost\""),
        (["--connect", "[::1"], "--connect \"[::1\""),
        (["--connect", "127.0.0.1:7000", "--connect", "::1:7000"], "--connect \"::1:7000\""),
        (["--service", "Bad_Type"], "--service \"Bad_Type\""),
        (["--service", "-x"], "Missing value for '--service <service>'"),
        (["--service=-x"], "--service \"-x\""),
        (["--service", "a--b"], "--service \"a--b\""),
        (["--service", "1234"], "--service \"1234\""),
        (["--service", "abcdefghijklmnop"], "--service \"abcdefghijklmnop\""),
        (["--info", "novalue"], "--info \"novalue\" is not KEY=VALUE"),
        (["--info", "_id=x"], "reserved"),
        (["--info", "a=1", "--info", "a=2"], "given twice"),
        (["--no-discovery", "--manual"], "--manual needs discovery"),
        (["--log-level", "loud"], "'loud' is invalid for '--log-level"),
        (["--frobnicate"], "Unknown option '--frobnicate'"),
    ])
    func badCommandLine(arguments: [String], named: String) async throws {
        let directory = TemporaryDirectory()
        let chat = try Self.launch(["--json"] + arguments, label: "bad", in: directory)
        #expect(try await chat.waitForExit() == 64)
        try await Self.waitForErrors(chat, containing: named)
        #expect(!chat.output.contains { $0.contains("\"event\":\"ready\"") }, "started anyway: \(chat.output)")
    }

    @Test("a 64-byte name is refused with its length; 63 bytes (multi-byte UTF-8) start")
    func nameLength() async throws {
        let directory = TemporaryDirectory()
        let long = try Self.launch(["--name", String(repeating: "é", count: 32)], label: "long", in: directory)
        #expect(try await long.waitForExit() == 64)
        try await Self.waitForErrors(long, containing: "is 64 bytes")

        let name = String(repeating: "é", count: 31) + "x"
        let fits = try Self.launch(["--json", "--name", name], label: "fits", in: directory)
        let ready = try await fits.waitForEvent("\"event\":\"ready\"")
        #expect(JSONLine(ready)?.string("name") == name)
        fits.closeInput()
        #expect(try await fits.waitForExit() == 0)
    }

    @Test("--help exits 0 and lists every option")
    func help() async throws {
        let directory = TemporaryDirectory()
        let chat = try Self.launch(["--help"], label: "help", in: directory)
        #expect(try await chat.waitForExit() == 0)
        for option in ["--config", "--name", "--port", "--connect", "--data-dir", "--service", "--no-discovery", "--manual", "--info", "--json",
                       "--keep-running", "--log-level", "--help"] {
            // Each option's own help line starts with it (after "-h, " for --help, "--discovery/" for --no-discovery).
            let line = try await chat.waitForLine { $0.trimmingCharacters(in: .whitespaces).hasPrefix(option)
                || $0.contains("-h, \(option)") || $0.trimmingCharacters(in: .whitespaces).hasPrefix("--discovery/\(option)") }
            #expect(line.contains(option))
        }
        try await chat.waitForLine { $0.hasPrefix("USAGE: meshchat") }
    }

    // MARK: JSON mode

    @Test("--json: every line is an event; errors keep the chat running; end of input exits 0; logs stay off stdout")
    func jsonSession() async throws {
        let directory = TemporaryDirectory()
        let chat = try Self.launch(["--json", "--name", "alice", "--log-level", "trace"], label: "alice", in: directory)
        let readyLine = try await chat.waitForEvent("\"event\":\"ready\"")
        #expect(chat.output.first == readyLine, "ready is not the first line: \(chat.output)")
        let ready = try #require(JSONLine(readyLine))
        let id = try #require(ready.string("id"))
        #expect(id.count == 32 && id.allSatisfy { "0123456789abcdef".contains($0) }, "id \(id)")
        #expect(ready.string("name") == "alice")
        #expect((ready.int("port") ?? 0) > 0)

        chat.send("/frobnicate")
        let unknown = try await chat.waitForEvent("\"event\":\"error\"")
        #expect(JSONLine(unknown)?.string("message")?.contains("unknown command /frobnicate") == true)
        #expect(unknown.contains("/help"))

        chat.send("/help")
        let help = try await chat.waitForEvent("\"event\":\"help\"")
        #expect(JSONLine(help)?.string("text")?.contains("/connect HOST:PORT") == true)

        chat.send("/connect nohost")
        let badConnect = try await chat.waitForEvent("\"event\":\"error\"", "usage: /connect HOST:PORT")
        #expect(badConnect.contains("nohost"))

        // With nobody connected a line is stored and waits for a peer (PROTOCOL.md §13.9).
        chat.send("hello, is anyone there?")
        let queued = try await chat.waitForEvent("\"event\":\"sent\"", "\"status\":\"queued\"")
        #expect(queued.contains("\"to\":[]"))
        chat.send("/msg @nobody hi")
        let unknownPeer = try await chat.waitForEvent("\"event\":\"error\"", "nothing was sent")
        #expect(unknownPeer.contains("no peer is called \\\"nobody\\\""))

        chat.send("/peers")
        let peers = try await chat.waitForEvent("\"event\":\"peers\"")
        #expect(peers == #"{"event":"peers","peers":[]}"#)

        chat.closeInput()
        #expect(try await chat.waitForExit() == 0)
        #expect(chat.output.filter { $0.contains("\"event\":\"sent\"") }.count == 1)
        for line in chat.output {
            #expect(line.hasPrefix("{\"event\":\""), "not an event: \(line)")
            #expect(JSONLine(line) != nil, "not a JSON object: \(line)")
        }
        #expect(chat.output.count == 7, "\(chat.output)")
        // Logs were written, to stderr only.
        try await Self.waitForErrors(chat, containing: "session listening")
        #expect(!chat.output.contains { $0.contains("session listening") })
    }

    @Test("a port already in use: exit 1, stderr names the port, --json prints an error event")
    func portInUse() async throws {
        let directory = TemporaryDirectory()
        let first = try Self.launch(["--json", "--name", "first"], label: "first", in: directory)
        let port = try await Self.readyPort(first)

        let second = try Self.launch(["--json", "--name", "second", "--port", "\(port)"], label: "second", in: directory)
        #expect(try await second.waitForExit() == 1)
        try await Self.waitForErrors(second, containing: "port \(port)")
        let line = try await second.waitForEvent("\"event\":\"error\"")
        #expect(second.output.first == line, "\(second.output)")
        #expect(JSONLine(line)?.string("message")?.contains("port \(port)") == true)
        #expect(!second.output.contains { $0.contains("\"event\":\"ready\"") })

        let text = try Self.launch(["--name", "third", "--port", "\(port)"], label: "third", in: directory)
        #expect(try await text.waitForExit() == 1)
        try await Self.waitForErrors(text, containing: "port \(port)")

        first.closeInput()
        #expect(try await first.waitForExit() == 0)
    }

    @Test("--connect and /connect to a closed port give connectFailed naming the address; the chat carries on")
    func connectFailed() async throws {
        let directory = TemporaryDirectory()
        let port = try Self.closedPort()
        let chat = try Self.launch(["--json", "--connect", "127.0.0.1:\(port)"], label: "dialer", in: directory)
        let failed = try await chat.waitForEvent("\"event\":\"connectFailed\"")
        let event = try #require(JSONLine(failed))
        #expect(event.string("address") == "127.0.0.1:\(port)")
        #expect(!(event.string("reason") ?? "").isEmpty)

        let other = try Self.closedPort()
        chat.send("/connect 127.0.0.1:\(other)")
        let again = try await chat.waitForEvent("\"event\":\"connectFailed\"", "\"address\":\"127.0.0.1:\(other)\"")
        #expect(again.hasPrefix(#"{"event":"connectFailed","address":"#))

        chat.send("/peers")
        try await chat.waitForEvent(#"{"event":"peers","peers":[]}"#)
        chat.closeInput()
        #expect(try await chat.waitForExit() == 0)
    }

    // MARK: Text mode

    @Test("text mode: the first line names the port; a received message shows as <bob> text")
    func textMode() async throws {
        let directory = TemporaryDirectory()
        let alice = try Self.launch(["--name", "alice"], label: "alice", in: directory)
        let first = try await alice.waitForLine { _ in true }
        #expect(first == alice.output.first)
        let match = try #require(first.firstMatch(of: /listening on port (\d+)/), "first line: \(first)")
        let port = try #require(Int(match.1))
        #expect(port > 0)
        #expect(!first.hasPrefix("{"))

        let bob = try Self.launch(["--json", "--name", "bob", "--connect", "127.0.0.1:\(port)"], label: "bob", in: directory)
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await alice.waitForLine { $0.contains("bob") && $0.contains("connected") }
        bob.send("hello from bob")
        let shown = try await alice.waitForLine { $0.contains("hello from bob") }
        #expect(shown == "<bob> hello from bob")

        alice.send("hi bob")
        let reply = try await bob.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(reply)?.string("text") == "hi bob")

        alice.send("/frobnicate")
        let error = try await alice.waitForLine { $0.contains("frobnicate") }
        #expect(error.hasPrefix("! "))

        bob.closeInput()
        alice.closeInput()
        #expect(try await bob.waitForExit() == 0)
        #expect(try await alice.waitForExit() == 0)
    }
}
