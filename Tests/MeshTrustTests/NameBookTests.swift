import Foundation
import MeshCore
@testable import MeshTrust
import Testing

@Suite("name book (trust on first use)")
struct NameBookTests {
    let bob = NodeID.random(), impostor = NodeID.random(), carol = NodeID.random()

    @Test("the first key seen under a name holds it; another key claiming it is a new key, never the holder")
    func firstUse() {
        var book = NameBook()
        #expect(book.observe(name: "bob", node: bob, atMilliseconds: 1) == .holder)
        #expect(book.observe(name: "Bob", node: impostor, atMilliseconds: 2) == .newKey(holder: bob))
        #expect(book.holder(of: "BOB") == bob)
        #expect(book.standing(of: impostor, name: "bob") == .newKey(holder: bob))
        #expect(book.standing(of: carol, name: "carol") == nil)
        // The real bob is still the holder when it comes back, whatever the impostor does.
        for time in 3..<50 { book.observe(name: "bob", node: impostor, atMilliseconds: UInt64(time)) }
        #expect(book.observe(name: "bob", node: bob, atMilliseconds: 60) == .holder)
    }

    @Test("names compare after canonical composition and case folding")
    func normalisation() {
        var book = NameBook()
        book.observe(name: "Jos\u{E9}", node: bob, atMilliseconds: 1)
        #expect(book.holder(of: "jose\u{301}") == bob)
        #expect(book.observe(name: "JOSÉ", node: impostor, atMilliseconds: 2) == .newKey(holder: bob))
    }

    @Test("verification marks the holder; a renamed node keeps its old name too")
    func verification() {
        var book = NameBook()
        book.observe(name: "bob", node: bob, atMilliseconds: 1)
        book.setVerified(bob, true, atMilliseconds: 2)
        #expect(book.observe(name: "bob", node: bob, atMilliseconds: 3) == .verified)
        #expect(book.observe(name: "robert", node: bob, atMilliseconds: 4) == .verified)
        #expect(book.observe(name: "bob", node: impostor, atMilliseconds: 5) == .newKey(holder: bob))
        book.setVerified(bob, false, atMilliseconds: 6)
        #expect(book.standing(of: bob, name: "bob") == .holder)
    }

    @Test("a rotation hands names, verification and age to the new key; forgetting frees a name")
    func rotation() {
        var book = NameBook()
        book.observe(name: "bob", node: bob, atMilliseconds: 1)
        book.setVerified(bob, true, atMilliseconds: 2)
        let rotated = NodeID.random()
        book.rotate(from: bob, to: rotated)
        #expect(book.holder(of: "bob") == rotated)
        #expect(book.isVerified(rotated))
        #expect(!book.isVerified(bob))
        #expect(book.records[rotated]?.firstSeen == 1)
        book.forget(name: "bob")
        #expect(book.observe(name: "bob", node: impostor, atMilliseconds: 9) == .holder)
    }

    @Test("a flood of fresh identities evicts only itself: long-known and verified holders stay")
    func flood() {
        var book = NameBook(maxNodes: 50)
        book.observe(name: "bob", node: bob, atMilliseconds: 0)
        book.observe(name: "bob", node: bob, atMilliseconds: 86_400_000)
        book.observe(name: "carol", node: carol, atMilliseconds: 10)
        book.setVerified(carol, true, atMilliseconds: 10)
        for i in 0..<1_000 {
            book.observe(name: "flood\(i)", node: NodeID.random(), atMilliseconds: 90_000_000 + UInt64(i))
            book.observe(name: "bob", node: NodeID.random(), atMilliseconds: 90_000_000 + UInt64(i))
        }
        #expect(book.records.count <= 50)
        #expect(book.holder(of: "bob") == bob)
        #expect(book.holder(of: "carol") == carol)
    }

    @Test("a node that renames itself again and again holds at most maxNamesPerNode names; the rest stay free")
    func manyNames() throws {
        var book = NameBook()
        for i in 0..<100 { book.observe(name: "bob\(i)", node: bob, atMilliseconds: UInt64(i)) }
        #expect(book.records[bob]?.names.count == NameBook.maxNamesPerNode)
        #expect(book.holder(of: "bob0") == bob)
        #expect(book.holder(of: "bob99") == nil)
        #expect(book.observe(name: "bob99", node: carol, atMilliseconds: 200) == .holder)
        // A rotation onto a key with names of its own stays within the limit.
        book.rotate(from: carol, to: bob)
        #expect(book.records[bob]?.names.count == NameBook.maxNamesPerNode)
        #expect(book.holder(of: "bob99") == nil)
        let restored = try NameBook(decoding: book.encoded)
        #expect(restored == book)
        let many = (0...NameBook.maxNamesPerNode).map { "\"n\($0)\"" }.joined(separator: ",")
        let tooMany = """
        {"version":1,"nodes":{"\(bob.hex)":{"names":[\(many)],"verified":false,"firstSeen":1,"lastSeen":1}}}
        """
        #expect(throws: TrustError(.malformed, "")) { try NameBook(decoding: Data(tooMany.utf8)) }
    }

    @Test("stored and restored exactly; damaged, inconsistent or oversized books are refused")
    func storage() throws {
        var book = NameBook()
        book.observe(name: "bob", node: bob, atMilliseconds: 1)
        book.observe(name: "carol", node: carol, atMilliseconds: 2)
        book.setVerified(carol, true, atMilliseconds: 3)
        let restored = try NameBook(decoding: book.encoded)
        #expect(restored == book)
        #expect(throws: TrustError(.malformed, "")) { try NameBook(decoding: Data("{}".utf8)) }
        #expect(throws: TrustError(.malformed, "")) { try NameBook(decoding: book.encoded, maxNodes: 1) }
        let twice = """
        {"version":1,"nodes":{"\(bob.hex)":{"names":["x"],"verified":false,"firstSeen":1,"lastSeen":1},\
        "\(carol.hex)":{"names":["x"],"verified":false,"firstSeen":1,"lastSeen":1}}}
        """
        #expect(throws: TrustError(.malformed, "")) { try NameBook(decoding: Data(twice.utf8)) }
        let backwards = """
        {"version":1,"nodes":{"\(bob.hex)":{"names":["x"],"verified":false,"firstSeen":9,"lastSeen":1}}}
        """
        var odd = try NameBook(decoding: Data(backwards.utf8), maxNodes: 1)
        odd.observe(name: "y", node: carol, atMilliseconds: 5)  // evicts without trapping
        #expect(odd.records.count == 1)
    }

    @Test("evictions are listed for a caller that stores the book per node, and restore refuses a name held twice")
    func evictedAndRestore() throws {
        var book = NameBook(maxNodes: 2)
        let nodes = (1...3).map { try! NodeID(hex: String(format: "%032x", $0)) }
        book.observe(name: "a", node: nodes[0], atMilliseconds: 1)
        book.observe(name: "b", node: nodes[1], atMilliseconds: 2)
        book.observe(name: "c", node: nodes[2], atMilliseconds: 3)
        #expect(book.takeEvicted().count == 1)
        #expect(book.takeEvicted().isEmpty)
        var restored = NameBook()
        let record = try #require(book.records[nodes[2]])
        try restored.restore(nodes[2], record)
        #expect(restored.holder(of: "C") == nodes[2])
        #expect(throws: TrustError(.malformed, "")) { try restored.restore(nodes[0], record) }
        #expect(restored.records.count == 1)
    }
}
