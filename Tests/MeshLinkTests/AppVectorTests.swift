import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import Testing

@Suite("Application vectors (apps.json)", .serialized)
struct AppVectorTests {
    static func load() throws -> AppVector {
        if writeVectors {
            try AppVector.compute().json.rendered.write(to: try VectorFiles.url("apps"), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load("apps")
    }

    static func routed(_ name: String) throws -> RoutedPayload {
        let file = try load()
        guard let found = file.cases.first(where: { $0.name == name }) else { throw VectorError("no case \(name)") }
        let bytes = try Data(hex: found.envelope)
        let envelope = try Envelope(decoding: bytes)
        guard case .routed(let routed)? = envelope.body else { throw VectorError("\(name) is not routed") }
        #expect(Envelope.routed(routed).encoded == bytes, "\(name) re-encodes byte for byte")
        return routed
    }

    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    /// Opens a sealed case as bob, checking that alice (the wrong recipient) cannot.
    func opened(_ name: String) throws -> SealedPayload {
        let routed = try Self.routed(name)
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: routed.packetID)
        #expect(throws: (any Error).self) { try Sealing.open(routed.sealed, header: header, identity: alice) }
        let plaintext = try Sealing.open(routed.sealed, header: header, identity: bob)
        let file = try Self.load()
        #expect(plaintext.serialized.hexString == file.cases.first { $0.name == name }?.body)
        return plaintext
    }

    func fileMessage(_ name: String) throws -> FileTransferPayload.OneOf_Body? {
        guard case .file(let file)? = try opened(name).content else { return nil }
        #expect(file.transferID == AppVector.transferID)
        return file.body
    }

    @Test("apps.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try AppVector.compute()))
    }

    @Test("§13.12: the channel message opens for bob and verifies as a broadcast; the advert carries its attachments")
    func channels() throws {
        guard case .channel(let sealed)? = try opened("channelSealed").content else { Issue.record("no channel message"); return }
        #expect(sealed.channel == 0x5EED_0001 && sealed.payload == Data("hello, channel".utf8))
        let broadcastPacket = try Self.routed("channelBroadcast")
        let broadcast = try MeshSigning.verifiedBroadcast(broadcastPacket.broadcast, origin: alice.nodeID, packetID: broadcastPacket.packetID)
        guard case .channel(let signed)? = broadcast.content else { Issue.record("no channel broadcast"); return }
        #expect(signed == sealed)
        var tampered = broadcastPacket.broadcast
        tampered.body[tampered.body.count - 1] ^= 1
        #expect(throws: (any Error).self) { try MeshSigning.verifiedBroadcast(tampered, origin: alice.nodeID, packetID: broadcastPacket.packetID) }
        let advertPacket = try Self.routed("linkStateAttachments")
        let advert = try MeshSigning.verifiedLinkState(advertPacket.linkState, origin: alice.nodeID)
        #expect(advert.attachments.map(\.channel) == [3, 0x5EED_0001])
        #expect(advert.attachments.map(\.data) == [Data([1, 2, 3]), Data("v=1".utf8)])
    }

    @Test("§13.10: the ping and pong open for bob with their fields")
    func ping() throws {
        guard case .ping(let ping)? = try opened("meshPing").content, case .pong(let pong)? = try opened("meshPong").content else {
            Issue.record("no ping or pong")
            return
        }
        #expect(ping.nonce == 0x0102_0304_0506_0708 && pong.nonce == ping.nonce)
    }

    @Test("§16: every file message opens with its fields; the 0-byte offer has no chunks and the empty content's hash")
    func fileMessages() throws {
        guard case .offer(let offer)? = try fileMessage("fileOffer") else { Issue.record("no offer"); return }
        #expect(offer.name == "notes.txt" && offer.size == 11 && offer.chunkSize == 1_024)
        #expect(offer.sha256 == Data(SHA256.hash(data: AppVector.fileContent)))
        guard case .chunk(let chunk)? = try fileMessage("fileChunk") else { Issue.record("no chunk"); return }
        #expect(chunk.index == 0 && chunk.data == AppVector.fileContent)
        guard case .ack(let ack)? = try fileMessage("fileAck"), case .ack(let selective)? = try fileMessage("fileAckSelective") else {
            Issue.record("no acknowledgements")
            return
        }
        #expect(ack.next == 1 && ack.received.isEmpty && selective.next == 2 && selective.received == [4, 5])
        guard case .done(let done)? = try fileMessage("fileDone") else { Issue.record("no done"); return }
        #expect(done.sha256 == offer.sha256)
        guard case .cancel(let cancel)? = try fileMessage("fileCancel") else { Issue.record("no cancel"); return }
        #expect(cancel.code == 1 && cancel.reason == "cancelled by the user")
        guard case .offer(let empty)? = try fileMessage("fileOfferEmpty") else { Issue.record("no empty offer"); return }
        #expect(empty.size == 0 && empty.sha256 == Data(SHA256.hash(data: Data())))
    }
}
