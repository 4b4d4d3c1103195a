import Foundation
import MeshCore
import MeshTrust

extension MeshFuzz {
    /// A stored name book (§20.3) as the node reads it from its data directory: refused or restored,
    /// never a trap; a restored book stores and restores to itself and keeps one holder per name
    /// through observations, then its bound.
    @Sendable static func fuzzTrust(_ bytes: [UInt8]) {
        guard var book = try? NameBook(decoding: Data(bytes), maxNodes: 8) else { return }
        precondition((try? NameBook(decoding: book.encoded, maxNodes: 8)) == book, "a name book does not survive storage")
        let nodes = book.records.keys.sorted()
        let fresh = (try? NodeID(bytes: [UInt8](repeating: 0xAB, count: NodeID.byteCount))) ?? nodes.first
        for (index, node) in (nodes + [fresh].compactMap { $0 }).enumerated() {
            book.observe(name: "n\(index % 3)", node: node, atMilliseconds: UInt64(index))
        }
        precondition(book.records.count <= 8, "a name book grew past its bound")
        for name in ["n0", "n1", "n2"] {
            if let holder = book.holder(of: name) { precondition(book.standing(of: holder, name: name) != nil, "a holder without standing") }
        }
    }
}
