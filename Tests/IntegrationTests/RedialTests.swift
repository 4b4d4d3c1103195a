import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Links made by address are kept: real `meshchat` processes on loopback, one killed with
/// SIGKILL and started again on the same port.
@Suite("links kept by address (redial)", .serialized)
struct RedialTests {
    @Test("kill -9 the peer and start it again on its port: the link comes back with nothing typed, failures are reported once, /disconnect stops it")
    func redialAfterRestart() async throws {
        let directory = TemporaryDirectory()
        func startBob(port: Int) throws -> ChatProcess {
            try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--port", "\(port)", "--data-dir", directory.appending("bob")],
                            label: "bob")
        }
        var bob = try startBob(port: 0)
        let port = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--data-dir", directory.appending("alice"),
                                     "--connect", "127.0.0.1:\(port)"], label: "alice")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")

        for round in 1...2 {
            let mark = alice.output.count
            bob.kill9()
            _ = try await bob.waitForExit()
            try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"peer\"") && $0.contains("\"state\":\"notConnected\"") }
            // While bob is down, alice dials again and again; she says so once.
            try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"connectFailed\"") }
            bob = try startBob(port: port)
            try await bob.waitForEvent("\"event\":\"ready\"")
            try await alice.waitForLine(timeout: .seconds(40), from: mark) {
                $0.contains("\"event\":\"peer\"") && $0.contains("\"name\":\"bob\"") && $0.contains("\"state\":\"connected\"")
            }
            let failures = alice.output[mark...].filter { $0.contains("\"event\":\"connectFailed\"") }
            #expect(failures.count == 1, "round \(round): \(failures)")
            #expect(failures.first?.contains("/disconnect 127.0.0.1:\(port)") == true, "\(failures)")
        }
        // The link works both ways after the heal.
        alice.send("back again")
        try await bob.waitForEvent("\"event\":\"message\"", "back again")

        // The user stops it: the link closes, and the address is no longer kept.
        let mark = alice.output.count
        alice.send("/disconnect 127.0.0.1:\(port)")
        try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"peer\"") && $0.contains("\"state\":\"notConnected\"") }
        alice.send("/disconnect 127.0.0.1:\(port)")
        let error = try await alice.waitForLine(from: mark) { $0.contains("\"event\":\"error\"") }
        #expect(error.contains("127.0.0.1:\(port) is not kept; kept: none"), "\(error)")
        for process in [alice, bob] { process.closeInput() }
        for process in [alice, bob] { _ = try await process.waitForExit() }
    }

    @Test("/disconnect closes the first link to a kept address (the peer met there is known from the handshake)")
    func disconnectFirstLink() async throws {
        let directory = TemporaryDirectory()
        // alice listens; bob dialled her with --connect.
        let (alice, bob, port) = try await TwoPeerTests.connectedPair(directory)
        bob.send("/disconnect 127.0.0.1:\(port)")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"notConnected\"")
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"notConnected\"")
        for process in [alice, bob] { process.closeInput() }
        for process in [alice, bob] { _ = try await process.waitForExit() }
    }
}
