@testable import MeshChatKit
import MeshSession
import Testing

@Suite("peer lookup for /msg and /route")
struct PeerLookupTests {
    static let bob1 = try! PeerID(id: NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c"), displayName: "bob")
    static let bob2 = try! PeerID(id: NodeID(hex: "620da8ed2398ab78558d6094fbe211c8"), displayName: "bob")
    static let carol = try! PeerID(id: NodeID(hex: "b9e645a5d0498fa866d678b2067c73b2"), displayName: "Carol")
    static let peers = [bob1, bob2, carol]

    @Test("an exact name, a name in another case, and an id prefix each find one peer")
    func finds() {
        #expect(PeerLookup.match("Carol", in: Self.peers, noun: "peer") == .success(Self.carol))
        #expect(PeerLookup.match("carol", in: Self.peers, noun: "peer") == .success(Self.carol))
        #expect(PeerLookup.match("620d", in: Self.peers, noun: "peer") == .success(Self.bob2))
    }

    @Test("an ambiguous name is an error that lists every candidate with its id prefix")
    func ambiguous() {
        guard case .failure(let message) = PeerLookup.match("bob", in: Self.peers, noun: "peer") else {
            Issue.record("two bobs must not resolve")
            return
        }
        #expect(message.contains("matches 2 peers"))
        #expect(message.contains("bob 4fc54bc2") && message.contains("bob 620da8ed"))
    }

    @Test("an unknown name names what was looked for")
    func unknown() {
        #expect(PeerLookup.match("dave", in: Self.peers, noun: "reachable peer")
            == .failure("no reachable peer is called \"dave\" (see /peers)"))
        // A one-character prefix is too short to be an id.
        #expect(PeerLookup.match("4", in: Self.peers, noun: "peer") == .failure("no peer is called \"4\" (see /peers)"))
    }
}
