import Foundation
import MeshFuzz
import MeshSession
import MeshWire
import Testing

/// The sealed fuzz targets reach what they are meant to (§19.6): a node's sessions, in prekey and
/// session messages, and the corpus seeds are the genuine packets of the fixture.
@Suite("sealed fuzz targets")
struct SealedFuzzTests {
    @Test("the sealed target's neighbour learns the node's prekey from its advert and reads its sealed pong")
    func sealedReachesSessions() throws {
        var sender = SealedSender()
        #expect(sender.prekey != nil)
        var data = Meshchat_V1_Data()
        data.payload = Data("hello".utf8)
        let sent = sender.send(.data(data), at: Int64(Date().timeIntervalSince1970 * 1000), packet: 8)
        let step = try #require(sent)
        #expect(step.violation == nil)
        #expect(sender.ping(packet: 9) == 1, "the pong opens on the session the first message began")
    }

    @Test("Tests/FuzzCorpus/ratchetpacket seeds are the fixture's first and next messages (MESHCHAT_WRITE_VECTORS=1 writes them)")
    func ratchetPacketSeeds() throws {
        let fixture = try #require(MeshFuzz.packetFixture)
        let directory = FuzzCorpusTests.corpus.appendingPathComponent("ratchetpacket")
        for (name, bytes) in [("seed-prekey", fixture.first), ("seed-session", fixture.next)] {
            let url = directory.appendingPathComponent(name)
            if ProcessInfo.processInfo.environment["MESHCHAT_WRITE_VECTORS"] == "1" {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try bytes.write(to: url)
            }
            #expect(try Data(contentsOf: url) == bytes, "\(name)")
        }
        #expect(fixture.first.first == 1 && fixture.next.first == 2)
    }
}
