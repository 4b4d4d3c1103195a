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

    @Test("§13.8 and §13.10: the receipt, ping and pong open for bob with their fields")
    func receiptAndPing() throws {
        guard case .receipt(let receipt)? = try opened("receipt").content else { Issue.record("no receipt"); return }
        #expect(receipt.messageIds == [Data(pattern(from: 0xe0, count: 16)), Data(pattern(from: 0xe1, count: 16))])
        guard case .ping(let ping)? = try opened("meshPing").content, case .pong(let pong)? = try opened("meshPong").content else {
            Issue.record("no ping or pong")
            return
        }
        #expect(ping.nonce == 0x0102_0304_0506_0708 && pong.nonce == ping.nonce)
    }

    @Test("§14: the answer, the refusal, the pin catch-up and the withdrawal carry their fields; the withdrawal is signed")
    func places() throws {
        guard case .places(let message)? = try opened("placeAnswer").content, case .answer(let answer)? = message.body else {
            Issue.record("no answer")
            return
        }
        #expect(answer.hits.map(\.name) == ["Pizza Union", "Pizza Pilgrims"] && answer.total == 7 && answer.refused.isEmpty)
        guard case .places(let refusal)? = try opened("placeAnswerRefused").content, case .answer(let refused)? = refusal.body else {
            Issue.record("no refusal")
            return
        }
        #expect(refused.hits.isEmpty && !refused.refused.isEmpty)
        guard case .places(let catchUp)? = try opened("pinSet").content, case .pins(let set)? = catchUp.body else {
            Issue.record("no pin set")
            return
        }
        #expect(set.pins == [AppVector.pin()])

        let routed = try Self.routed("pinWithdrawal")
        let broadcast = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: alice.nodeID, packetID: routed.packetID)
        guard case .places(let places)? = broadcast.content, case .unpin(let withdrawal)? = places.body else {
            Issue.record("no withdrawal")
            return
        }
        #expect(withdrawal.pinID == AppVector.pin().pinID)
        #expect(throws: (any Error).self) {
            try MeshSigning.verifiedBroadcast(routed.broadcast, origin: bob.nodeID, packetID: routed.packetID)
        }
    }

    @Test("§15.1: room keys come from the lower-cased name with its # (and the password); a public and a password room of one name differ")
    func roomKeys() throws {
        let file = try Self.load()
        #expect(file.rooms.map(\.name) == ["#lunch", "#dev", "#dev"])
        let publicLunch = Data(SHA256.hash(data: Data("meshchat public room v1#lunch".utf8)))
        #expect(file.rooms[0].key == publicLunch.hexString)
        #expect(file.rooms[0].id == Data(SHA256.hash(data: Data("meshchat room id v1".utf8) + publicLunch).prefix(16)).hexString)
        #expect(file.rooms[1].password == "s3cret" && file.rooms[2].password == nil)
        #expect(file.rooms[1].id != file.rooms[2].id, "#dev with a password is another room than the public #dev")
        #expect(try RoomKey(name: "#DEV", password: "s3cret").key.hexString == file.rooms[1].key, "names are lower-cased first")
    }

    @Test("§15.2: each room line opens with its own room's key only, and names its room")
    func roomLines() throws {
        let keys = try AppVector.roomKeys().map(\.key)
        for (index, key) in keys.enumerated() {
            let routed = try Self.routed("room\(index + 1)")
            let broadcast = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: alice.nodeID, packetID: routed.packetID)
            guard case .room(let chat)? = broadcast.content else { Issue.record("room\(index + 1) carries no room line"); continue }
            #expect(chat.nonce.hexString == (try Self.load()).roomNonce)
            let text = try key.open(chat, origin: alice.nodeID)
            #expect(text.room == key.name && text.text == "lunch at one?")
            for other in keys where other.id != key.id {
                #expect(throws: (any Error).self) { try other.open(chat, origin: alice.nodeID) }
            }
            #expect(throws: (any Error).self, "bound to its origin") { try key.open(chat, origin: bob.nodeID) }
        }
    }
}
