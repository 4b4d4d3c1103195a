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

    /// Opens a sealed case as bob (fresh sessions and his prekey), checking that alice (the wrong
    /// recipient) cannot.
    func opened(_ name: String) throws -> SealedPayload {
        let routed = try Self.routed(name)
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: routed.packetID)
        let (plaintext, aliceFailed) = try SealedVectors.openAsBobOnly(routed.sealed, header: header, bob: bob, other: alice)
        #expect(aliceFailed)
        let file = try Self.load()
        #expect(plaintext.serialized.hexString == file.cases.first { $0.name == name }?.body)
        return plaintext
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
}
