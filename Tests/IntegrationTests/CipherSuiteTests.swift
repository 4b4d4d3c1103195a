import Foundation
import MeshTestSupport
import Testing

/// Cipher suites between real `meshchat` processes (PROTOCOL.md §4.11): each process's offer is
/// forced with `MESHCHAT_SUITES`; the suite of the link shows in the debug log line
/// "link established" (`link.suite=…`), and chat lines go both ways over it.
@Suite("cipher suites between meshchat processes", .serialized)
struct CipherSuiteTests {
    @Test("the link between two processes runs the suite both offers select, and lines go both ways", arguments: [
        ("aesgcm,chachapoly", "aesgcm,chachapoly", "AESGCM"),
        ("chachapoly", "aesgcm,chachapoly", "ChaChaPoly"),
        ("aesgcm,chachapoly", "chachapoly", "ChaChaPoly"),  // bob dials alice: bob's AESGCM guess gets a RETRY
    ])
    func suite(alice aliceSuites: String, bob bobSuites: String, expected: String) async throws {
        let directory = TemporaryDirectory()
        let other = expected == "AESGCM" ? "ChaChaPoly" : "AESGCM"
        let alice = try ChatProcess(["--name", "alice", "--json", "--no-discovery", "--log-level", "debug",
                                     "--data-dir", directory.appending("alice")],
                                    label: "alice", environment: ["MESHCHAT_SUITES": aliceSuites])
        let port = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"ready\""))?.int("port"))
        let bob = try ChatProcess(["--name", "bob", "--json", "--no-discovery", "--log-level", "debug",
                                   "--data-dir", directory.appending("bob"), "--connect", "127.0.0.1:\(port)"],
                                  label: "bob", environment: ["MESHCHAT_SUITES": bobSuites])
        try await alice.waitForEvent("\"event\":\"peer\"", "\"name\":\"bob\"", "\"state\":\"connected\"")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await alice.waitForStderr("link.suite=\(expected)")
        try await bob.waitForStderr("link.suite=\(expected)")
        #expect(!alice.errors.contains("link.suite=\(other)") && !bob.errors.contains("link.suite=\(other)"))

        // /whois names the link's suite (Session.cipherSuite(of:)).
        alice.send("/whois bob")
        let whois = try await alice.waitForEvent("\"event\":\"whois\"")
        #expect(JSONLine(whois)?.string("suite") == expected)

        bob.send("over \(expected), bob to alice")
        let message = try await alice.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(message)?.string("text") == "over \(expected), bob to alice")
        alice.send("over \(expected), alice to bob")
        let reply = try await bob.waitForEvent("\"event\":\"message\"")
        #expect(JSONLine(reply)?.string("text") == "over \(expected), alice to bob")

        alice.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        bob.send("/quit")
        #expect(try await bob.waitForExit() == 0)
    }

    @Test("a browser writes message 1 with the suite the peer's TXT offer (_s) selects: an AES node inviting a ChaChaPoly-only one needs no RETRY")
    func advertisedOffer() async throws {
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        // Both --manual, so that bob (AES) is the one who dials: without the hint his first guess is AESGCM.
        let alice = try DiscoveryTests.peer("alice", service: service, directory, extra: ["--manual", "--log-level", "debug"],
                                            environment: ["MESHCHAT_SUITES": "chachapoly"])
        let bob = try DiscoveryTests.peer("bob", service: service, directory, extra: ["--manual", "--log-level", "debug"],
                                          environment: ["MESHCHAT_SUITES": "aesgcm,chachapoly"])
        try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"")
        bob.send("/invite alice")
        try await alice.waitForEvent("\"event\":\"invitation\"", "\"direction\":\"received\"", "\"name\":\"bob\"")
        alice.send("/accept bob")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await alice.waitForStderr("link.suite=ChaChaPoly")
        try await bob.waitForStderr("link.suite=ChaChaPoly")
        #expect(!bob.errors.contains("cipher suite RETRY received"), "bob guessed AESGCM although alice's TXT said ChaChaPoly only")
        for process in [alice, bob] { process.closeInput() }
        for process in [alice, bob] { #expect(try await process.waitForExit() == 0) }
    }
}
