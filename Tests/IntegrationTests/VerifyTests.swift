import Foundation
import MeshTestSupport
import Testing

/// `/verify` between two real `meshchat` processes (PROTOCOL.md §20.1).
@Suite("safety numbers in the chat", .serialized)
struct VerifyTests {
    @Test("/verify shows both users the same safety number, and each side's fingerprint is the other's 'theirs'")
    func sameNumber() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try await TwoPeerTests.connectedPair(directory)
        alice.send("/verify @bob")
        let fromAlice = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"verify\"")))
        bob.send("/verify @alice")
        let fromBob = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"verify\"")))
        let number = try #require(fromAlice.string("safetyNumber"))
        #expect(number.count == 60 && number.allSatisfy(\.isNumber))
        #expect(fromBob.string("safetyNumber") == number)
        let aliceKeys = try #require(fromAlice.object("fingerprints"))
        let bobKeys = try #require(fromBob.object("fingerprints"))
        #expect(aliceKeys["mine"] as? String == bobKeys["theirs"] as? String)
        #expect(aliceKeys["theirs"] as? String == bobKeys["mine"] as? String)
        #expect(fromAlice.object("peer")?["name"] as? String == "bob")
        alice.send("/verify @nobody")
        try await alice.waitForEvent("\"event\":\"error\"", "/verify")
        alice.send("/quit")
        bob.send("/quit")
        #expect(try await alice.waitForExit() == 0)
        #expect(try await bob.waitForExit() == 0)
    }
}
