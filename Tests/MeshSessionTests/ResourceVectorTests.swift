import Crypto
import Foundation
@testable import MeshLink
import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// `Protocol/vectors/resources.json` (PROTOCOL.md §16): every resource message as the payload of a
/// channel-17 message, byte for byte, and one full sealed envelope carrying the offer from alice to
/// bob (the fixed parties of `handshake.json`: identity and static keys from the byte patterns
/// 0x00…/0x20… and 0x60…/0x80…; the first message of a new session with the keys of
/// ``SealedVectors``; packet id 0xc0…; sealed at 1,790,000,000,000 ms).
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter ResourceVectorTests`.
struct ResourceVectors: Codable, Equatable {
    struct Case: Codable, Equatable {
        var name: String
        var description: String
        /// The serialized `ResourceMessage`: the `ChannelMessage.payload` on channel 17.
        var payload: String
    }

    var description: String
    var transferID: String
    var content: String
    var cases: [Case]
    /// The offer sealed from alice to bob on channel 17, as the serialized `Envelope`.
    var sealedOfferEnvelope: String

    static let transferID = Data((0..<16).map { 0x70 + UInt8($0) })
    static let content = Data("hello, file".utf8)

    static func pattern(_ first: UInt8) -> [UInt8] { SealedVectors.pattern(first) }
    static var alice: LocalIdentity {
        try! LocalIdentity(signingKey: .init(rawRepresentation: pattern(0x00)), staticKey: .init(rawRepresentation: pattern(0x20)))
    }
    static var bob: LocalIdentity {
        try! LocalIdentity(signingKey: .init(rawRepresentation: pattern(0x60)), staticKey: .init(rawRepresentation: pattern(0x80)))
    }
    static let packetID = Data((0..<16).map { 0xc0 + UInt8($0) })

    static func message(_ body: ResourceMessagePayload.OneOf_Body) -> ResourceMessagePayload {
        var message = ResourceMessagePayload()
        message.transferID = transferID
        message.body = body
        return message
    }

    static var messages: [(String, String, ResourceMessagePayload)] {
        let offer = ResourceOffer(name: "notes.txt", size: UInt64(content.count), sha256: Data(SHA256.hash(data: content)), chunkSize: 1_024)
        let empty = ResourceOffer(name: "empty.txt", size: 0, sha256: Data(SHA256.hash(data: Data())), chunkSize: 60_000)
        var chunk = ResourceChunkPayload()
        chunk.data = content
        var ack = ResourceAckPayload()
        ack.next = 1
        ack.incarnation = 0x0123_4567_89ab_cdef
        var selective = ResourceAckPayload()
        selective.next = 2
        selective.received = [4, 5]
        selective.incarnation = 0x0123_4567_89ab_cdef
        var restarted = selective
        restarted.next = 1
        restarted.received = []
        restarted.incarnation = 0xfedc_ba98_7654_3210
        var done = ResourceDonePayload()
        done.sha256 = offer.sha256
        var cancel = ResourceCancelPayload()
        cancel.code = ResourceCancelCode.cancelled.rawValue
        cancel.reason = "cancelled by the user"
        return [
            ("offer", "§16.2 offer of \"notes.txt\", 11 bytes (\"hello, file\"), chunks of 1,024", message(.offer(offer.payload))),
            ("offerEmpty", "§16.2 offer of a 0-byte resource: no chunks; accepted with ResourceAck { next: 0 } and confirmed at once", message(.offer(empty.payload))),
            ("chunk", "§16.3 its only chunk, index 0", message(.chunk(chunk))),
            ("ack", "§16.4 every chunk below 1 stored; incarnation 0123456789abcdef", message(.ack(ack))),
            ("ackSelective", "§16.4 chunks below 2, and 4 and 5, stored", message(.ack(selective))),
            ("ackAfterRestart", "§16.4.2 the receiver restarted holding chunks below 1 only: a new incarnation, the sender rewinds", message(.ack(restarted))),
            ("done", "§16.5 the receiver's confirmation with the hash it computed", message(.done(done))),
            ("cancel", "§16.5 a cancel, code 1 (cancelled)", message(.cancel(cancel))),
        ]
    }

    static func compute() throws -> ResourceVectors {
        let cases = messages.map { Case(name: $0.0, description: $0.1, payload: $0.2.serialized.hexString) }
        var channel = ChannelMessagePayload()
        channel.channel = ChannelID.resources.rawValue
        channel.payload = messages[0].2.serialized
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: packetID)
        let sealed = try SealedVectors.sealFirst(.channel(channel), sentAt: 1_790_000_000_000, header: header, alice: alice, bob: bob)
        var routed = RoutedPayload()
        routed.origin = Data(alice.nodeID.bytes)
        routed.destination = Data(bob.nodeID.bytes)
        routed.packetID = packetID
        routed.hopLimit = 7
        routed.sealed = sealed
        return ResourceVectors(
            description: "PROTOCOL.md §16: resource messages on channel 17, and the offer sealed from alice to bob (hop limit 7) "
                + "as the first message of a new session (§19.6, the keys of mesh.json: bob's prekey 1 a0a1…bf, EK_I f0f1…ff, "
                + "alice's ratchet key d0d1…ef)",
            transferID: transferID.hexString, content: content.hexString, cases: cases,
            sealedOfferEnvelope: Envelope.routed(routed).encoded.hexString)
    }
}

@Suite("Resource vectors (resources.json)", .serialized)
struct ResourceVectorTests {
    static func load() throws -> ResourceVectors {
        if ProcessInfo.processInfo.environment["MESHCHAT_WRITE_VECTORS"] == "1" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try (encoder.encode(try ResourceVectors.compute()) + Data("\n".utf8)).write(to: try VectorFiles.url("resources"))
        }
        return try VectorFiles.load("resources")
    }

    @Test("resources.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try ResourceVectors.compute()))
    }

    @Test("every payload decodes to its message and re-encodes byte for byte; the offer validates")
    func payloads() throws {
        let vectors = try Self.load()
        for (name, _, expected) in ResourceVectors.messages {
            let hex = try #require(vectors.cases.first { $0.name == name }?.payload)
            let decoded = try ResourceMessagePayload(decoding: try Data(hex: hex), what: name)
            #expect(decoded == expected, "\(name)")
            #expect(decoded.serialized.hexString == hex, "\(name) re-encodes")
            #expect(ResourceID(bytes: decoded.transferID) != nil)
        }
        guard case .offer(let offer)? = ResourceVectors.messages[0].2.body else { Issue.record("no offer"); return }
        let valid = try ResourceOffer(validating: offer)
        #expect(valid.chunkCount == 1 && valid.length(ofChunk: 0) == 11)
    }

    @Test("the sealed envelope opens for bob only, as a channel-17 message carrying the offer")
    func sealedEnvelope() throws {
        let vectors = try Self.load()
        let bytes = try Data(hex: vectors.sealedOfferEnvelope)
        guard case .routed(let routed)? = try Envelope(decoding: bytes).body else { Issue.record("not routed"); return }
        let alice = ResourceVectors.alice, bob = ResourceVectors.bob
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: routed.packetID)
        let (plaintext, aliceFailed) = try SealedVectors.openAsBobOnly(routed.sealed, header: header, bob: bob, other: alice)
        #expect(aliceFailed)
        guard case .channel(let channel)? = plaintext.content else { Issue.record("no channel message"); return }
        #expect(channel.channel == 17)
        #expect(channel.payload.hexString == vectors.cases.first { $0.name == "offer" }?.payload)
    }
}
