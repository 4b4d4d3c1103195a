import Crypto
import Foundation
@testable import MeshSession
import Testing

/// The receiver's in-order SHA-256 taken off the event loop (ResourceDigest, PROTOCOL.md §16.5):
/// the chunks are hashed in the order they were queued, whatever the pool's threads do, and a
/// queue past its bound says so.
@Suite("Resource digest off the event loop")
struct ResourceDigestTests {
    /// `count` chunks of `size` bytes, each different.
    static func chunks(_ count: Int, size: Int) -> [Data] {
        (0..<count).map { index in Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 13) }) }
    }

    @Test("chunks queued in many small batches hash to the SHA-256 of their concatenation, in order")
    func inOrder() async {
        let chunks = Self.chunks(200, size: 4_099)
        let digest = ResourceDigest()
        var start = 0
        // Batches of 1, 2, 3, … chunks: the worker starts and stops between them.
        while start < chunks.count {
            let end = min(chunks.count, start + start % 7 + 1)
            #expect(digest.submit(Array(chunks[start..<end])))
            start = end
        }
        var expected = SHA256()
        for chunk in chunks { expected.update(data: chunk) }
        #expect(await digest.finalize() == Array(expected.finalize()))
    }

    @Test("chunks queued in another order hash to something else (the order counts)")
    func orderMatters() async {
        let chunks = Self.chunks(4, size: 1_000)
        let digest = ResourceDigest()
        #expect(digest.submit([chunks[1], chunks[0], chunks[2], chunks[3]]))
        var expected = SHA256()
        for chunk in chunks { expected.update(data: chunk) }
        #expect(await digest.finalize() != Array(expected.finalize()))
    }

    @Test("a queue past its bound says so; once drained, every chunk is hashed; nothing queued is the empty hash")
    func bound() async {
        let empty = ResourceDigest()
        #expect(await empty.finalize() == Array(SHA256.hash(data: Data())))
        let digest = ResourceDigest()
        let big = Data(count: ResourceDigest.maxQueuedBytes + 1)
        #expect(digest.submit([big]) == false)
        await digest.drained()
        #expect(await digest.finalize() == Array(SHA256.hash(data: big)))
    }
}
