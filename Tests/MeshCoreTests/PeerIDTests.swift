import MeshCore
import Testing

/// Peer ids and the display-name rule (PROTOCOL.md §2.3).
@Suite("PeerID")
struct PeerIDTests {
    static let alice = try! NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c")
    static let bob = try! NodeID(hex: "620da8ed2398ab78558d6094fbe211c8")

    @Test("display names of 0 or 64+ bytes have a problem that names the limit", arguments: [
        "", String(repeating: "a", count: 64), String(repeating: "é", count: 32), String(repeating: "x", count: 500),
    ])
    func displayNameProblems(name: String) throws {
        let problem = try #require(PeerID.displayNameProblem(name))
        #expect(problem.contains("63"))
        if name.isEmpty {
            #expect(problem.contains("empty"))
        } else {
            #expect(problem.contains("\(name.utf8.count) bytes"))
        }
        let error = #expect(throws: CoreError.self) { try PeerID(id: Self.alice, displayName: name) }
        #expect(error?.code == .invalidDisplayName)
        #expect(error?.message == problem)
    }

    @Test("display names of 1 to 63 bytes, multi-byte characters included, are fine", arguments: [
        "a", "alice", String(repeating: "a", count: 63), String(repeating: "é", count: 31) + "a", "日本語の名前", "🙂",
        String(repeating: "🙂", count: 15) + "abc",  // 60 + 3 bytes
        " ", "b\u{1B}[2Job",  // any UTF-8 is a name; rendering escapes it
    ])
    func displayNamesFine(name: String) throws {
        #expect(PeerID.displayNameBytes.contains(name.utf8.count))
        #expect(PeerID.displayNameProblem(name) == nil)
        let peer = try PeerID(id: Self.alice, displayName: name)
        #expect(peer.displayName == name)
        #expect(peer.id == Self.alice)
    }

    @Test("the limit counts UTF-8 bytes, not characters")
    func bytesNotCharacters() {
        let accents = String(repeating: "é", count: 32)  // 32 characters, 64 bytes
        #expect(accents.count == 32)
        #expect(PeerID.displayNameProblem(accents) != nil)
        #expect(PeerID.displayNameBytes == 1...63)
    }

    @Test("equal and hashed by the node id only: the name is informational")
    func equality() throws {
        let alice = try PeerID(id: Self.alice, displayName: "alice")
        let renamed = try PeerID(id: Self.alice, displayName: "Alice B.")
        let bob = try PeerID(id: Self.bob, displayName: "alice")
        #expect(alice == renamed)
        #expect(alice.hashValue == renamed.hashValue)
        #expect(alice != bob, "same name, another node")
        #expect(Set([alice, renamed, bob]).count == 2)
        var names: [PeerID: String] = [alice: "first"]
        names[renamed] = "second"
        #expect(names.count == 1 && names[alice] == "second")
    }

    @Test("the description is the name and the short id")
    func description() throws {
        let alice = try PeerID(id: Self.alice, displayName: "alice")
        #expect(alice.description == "alice (4fc54bc2)")
    }
}
