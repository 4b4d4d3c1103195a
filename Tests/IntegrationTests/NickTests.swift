import Foundation
import MeshTestSupport
import Testing

/// `/nick` between real `meshchat` processes: across a relay (link-state adverts) and on the
/// local network (the mDNS announcement is published again).
@Suite("/nick", .serialized)
struct NickTests {
    @Test("/nick renames me at once for every node, two hops away too; lines and /msg use the new name; a bad name changes nothing")
    func acrossTheMesh() async throws {
        let directory = TemporaryDirectory()
        let chats = try await ChatLine.start(directory)
        let (alice, bob, carol) = (chats.alice, chats.bob, chats.carol)
        let aliceID = try #require(JSONLine(alice.output[0])?.string("id"))

        alice.send("/nick")
        let missing = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"error\"", "/nick"))?.string("message"))
        #expect(missing == "/nick: a new name is required; usage: /nick NAME")
        alice.send("/nick " + String(repeating: "n", count: 64))
        try await alice.waitForEvent("\"event\":\"error\"", "64 bytes")

        alice.send("/nick alicia")
        let mine = try #require(JSONLine(try await alice.waitForEvent("\"event\":\"nick\"")))
        #expect(mine.object["me"] as? Bool == true)
        #expect(mine.string("previous") == "alice")
        #expect((mine.object["peer"] as? [String: Any])?["name"] as? String == "alicia")
        for peer in [bob, carol] {
            let seen = try #require(JSONLine(try await peer.waitForEvent("\"event\":\"nick\"", "\"previous\":\"alice\"")))
            #expect(seen.object["me"] as? Bool == false)
            let who = try #require(seen.object["peer"] as? [String: Any])
            #expect(who["name"] as? String == "alicia" && who["id"] as? String == aliceID)
        }
        // The renamed node's lines carry the new name; others address it by the new name.
        alice.send("hello as alicia")
        let line = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"message\"", "hello as alicia")))
        #expect((line.object["from"] as? [String: Any])?["name"] as? String == "alicia")
        carol.send("/msg @alicia got your new name")
        try await alice.waitForEvent("\"event\":\"message\"", "got your new name")
        bob.send("/peers")
        try await bob.waitForEvent("\"event\":\"peers\"", "\"name\":\"alicia\"")
        carol.send("/route @alicia")
        try await carol.waitForEvent("\"event\":\"route\"", "\"name\":\"alicia\"")
        for chat in [alice, bob, carol] { chat.closeInput() }
        for chat in [alice, bob, carol] { #expect(try await chat.waitForExit() == 0) }
    }

    @Test("/nick publishes the mDNS announcement again: a browsing peer finds the new name with the same id")
    func onTheLocalNetwork() async throws {
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        let alice = try DiscoveryTests.peer("alice", service: service, directory)
        let bob = try DiscoveryTests.peer("bob", service: service, directory)
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        let aliceID = try #require(JSONLine(alice.output[0])?.string("id"))
        alice.send("/nick alicia")
        try await alice.waitForEvent("\"event\":\"advertising\"", "\"name\":\"alicia\"")
        let found = try #require(JSONLine(try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alicia\"")))
        #expect((found.object["peer"] as? [String: Any])?["id"] as? String == aliceID)
        try await bob.waitForEvent("\"event\":\"nick\"", "\"previous\":\"alice\"")
        for chat in [alice, bob] { chat.closeInput() }
        for chat in [alice, bob] { #expect(try await chat.waitForExit() == 0) }
    }
}
