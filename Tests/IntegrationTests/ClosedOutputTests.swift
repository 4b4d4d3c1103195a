import Foundation
import MeshTestSupport
import Testing

/// Standard output that goes away under a running `meshchat`: the reader of `--json` exits
/// (`meshchat --json | head -n 1`), or the answer goes to a full device. Before, the next line's
/// `FileHandle.write` stopped the process with a fatal error (SwiftNIO ignores SIGPIPE, so the
/// write fails with EPIPE instead of killing the process quietly).
@Suite("meshchat with its standard output closed", .serialized)
struct ClosedOutputTests {
    @Test("the reader of --json goes away: the chat stops as /quit does and exits 74, without a crash")
    func readerGoesAway() async throws {
        let directory = TemporaryDirectory("closed-output")
        // bash runs `meshchat … | { head -n 1; … }`: head passes the first line (`ready`) on and
        // exits, the group closes its end of the pipe and says so on stderr, and bash reports
        // meshchat's own exit status on stderr.
        let script = """
            "$0" "$@" | { head -n 1; exec 0<&-; echo 'reader gone' >&2; }
            echo "meshchat exit status ${PIPESTATUS[0]}" >&2
            """
        let chat = try ChatProcess(["--json", "--no-discovery", "--data-dir", directory.appending("alice"), "--name", "alice"],
                                   label: "alice", launcher: ["/bin/bash", "-c", script])
        defer { chat.kill9() }
        try await chat.waitForEvent("\"event\":\"ready\"")
        try await chat.waitForStderr("reader gone")
        chat.send("/peers")  // its answer meets the closed pipe
        try await chat.waitForStderr("meshchat exit status")
        #expect(chat.errors.contains("meshchat exit status 74"), "stderr:\n\(chat.errors)")
        #expect(chat.errors.contains("standard output closed"), "stderr:\n\(chat.errors)")
        #expect(!chat.errors.contains("Fatal error"), "stderr:\n\(chat.errors)")
        #expect(try await chat.waitForExit() == 0)  // bash's own status (its last echo)
    }

    @Test("meshchat places with its answer sent to a full device exits 74 and says why")
    func placesToFullDevice() throws {
        let directory = TemporaryDirectory("closed-output-places")
        let data = directory.appending("places.csv")
        try "name,lat,lon\nClapham,51.4613,-0.1383\n".write(toFile: data, atomically: true, encoding: .utf8)
        let err = directory.appending("stderr")
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = ChatProcess.binDirectory.appendingPathComponent("meshchat")
        process.arguments = ["places", "query", "--data", data, "--near", "51.46,-0.14", "--radius", "5km"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        process.waitUntilExit()
        let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 74, "stderr:\n\(errors)")
        #expect(errors.contains("cannot write the answer to standard output"), "stderr:\n\(errors)")
    }
}
