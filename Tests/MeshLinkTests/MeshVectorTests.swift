import Crypto
import Foundation
@testable import MeshLink
import MeshNoise
import MeshTestSupport
import MeshWire
import Testing

/// `Protocol/vectors/mesh.json` (PROTOCOL.md §13): a signed link-state advert, a signed broadcast and
/// a sealed private message between the fixed parties alice and bob of `handshake.json`, each as the
/// serialized `Envelope` that carries it.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.MeshVectorTests`.
struct MeshVector: Codable, Equatable {
    struct Case: Codable, Equatable {
        var name: String
        var description: String
        /// The signed body, or the sealed plaintext (serialized protobuf).
        var body: String
        /// The whole serialized Envelope { routed }.
        var envelope: String
    }

    var description: String
    var aliceNodeID: String
    var bobNodeID: String
    var sealEphemeralPrivateKey: String
    var cases: [Case]

    static let packetID = Data(pattern(from: 0xc0, count: 16))
    static let sentAt: Int64 = 1_790_000_000_000

    static func routed(origin: NodeID, destination: NodeID?, hopLimit: UInt32, hops: UInt32) -> RoutedPayload {
        var routed = RoutedPayload()
        routed.origin = Data(origin.bytes)
        routed.destination = destination.map { Data($0.bytes) } ?? Data()
        routed.packetID = packetID
        routed.hopLimit = hopLimit
        routed.hops = hops
        return routed
    }

    static func compute() throws -> MeshVector {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        // Link state: alice has one neighbour, bob, at 250 µs.
        var advert = LinkStatePayload()
        advert.displayName = "alice"
        advert.sequence = 1_790_000_000_000
        var neighbor = LinkStateNeighborPayload()
        neighbor.nodeID = Data(bob.nodeID.bytes)
        neighbor.latencyUs = 250
        advert.neighbors = [neighbor]
        let signedAdvert = MeshSigning.signLinkState(advert, identity: alice)
        var linkState = routed(origin: alice.nodeID, destination: nil, hopLimit: 32, hops: 0)
        linkState.linkState = signedAdvert

        var broadcastBody = BroadcastPayload()
        broadcastBody.packetID = packetID
        broadcastBody.displayName = "alice"
        broadcastBody.sentAtMs = sentAt
        var chat = Meshchat_V1_Chat()
        chat.messageID = Data(pattern(from: 0xd0, count: 16))
        chat.text = "hello, mesh"
        chat.sentAtMs = sentAt
        broadcastBody.chat = chat
        let signedBroadcast = MeshSigning.signBroadcast(broadcastBody, identity: alice)
        var broadcast = routed(origin: alice.nodeID, destination: nil, hopLimit: 6, hops: 1)
        broadcast.broadcast = signedBroadcast

        var privateChat = PrivateChatPayload()
        privateChat.messageID = Data(pattern(from: 0xe0, count: 16))
        privateChat.text = "only for bob"
        privateChat.sentAtMs = sentAt
        privateChat.sequence = 1
        privateChat.floor = 1
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: packetID)
        let ephemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: pattern(from: 0xf0))
        let sealedBytes = try Sealing.seal(.chat(privateChat), displayName: "alice", sealedAtMilliseconds: sentAt,
                                           header: header, recipientStaticKey: bob.staticKey.publicKey,
                                           identity: alice, ephemeralKey: ephemeral)
        var sealed = routed(origin: alice.nodeID, destination: bob.nodeID, hopLimit: 7, hops: 0)
        sealed.sealed = sealedBytes
        let plaintext = try Sealing.open(sealedBytes, header: header, identity: bob)

        return MeshVector(
            description: "PROTOCOL.md §13 between the fixed parties of handshake.json (alice: identity 0x00…, static 0x20…; "
                + "bob: identity 0x60…, static 0x80…), packet id c0c1…cf. linkState and broadcast are Ed25519-signed "
                + "(§13.4; deterministic, RFC 8032); sealed is Noise_X_25519_ChaChaPoly_SHA256 from alice to bob with the "
                + "ephemeral key f0f1…ff and the prologue of §13.6. body: the signed body, or the sealed plaintext. "
                + "envelope: the serialized Envelope carrying the Routed packet.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex,
            sealEphemeralPrivateKey: pattern(from: 0xf0).hexString,
            cases: [
                Case(name: "linkState", description: "alice's advert: sequence 1790000000000, neighbour bob at 250 µs; hop limit 32",
                     body: signedAdvert.body.hexString, envelope: Envelope.routed(linkState).encoded.hexString),
                Case(name: "broadcast", description: "alice's chat \"hello, mesh\" after one relay (hop limit 6, hops 1)",
                     body: signedBroadcast.body.hexString, envelope: Envelope.routed(broadcast).encoded.hexString),
                Case(name: "sealed", description: "alice's private chat \"only for bob\", sequence 1, floor 1",
                     body: plaintext.serialized.hexString, envelope: Envelope.routed(sealed).encoded.hexString),
            ])
    }

    var json: OrderedJSON {
        .keyed([
            "description": .string(description),
            "aliceNodeID": .string(aliceNodeID), "bobNodeID": .string(bobNodeID),
            "sealEphemeralPrivateKey": .string(sealEphemeralPrivateKey),
            "cases": .array(cases.map {
                .keyed(["name": .string($0.name), "description": .string($0.description),
                        "body": .string($0.body), "envelope": .string($0.envelope)])
            }),
        ])
    }
}

@Suite("Mesh vectors and end-to-end checks", .serialized)
struct MeshVectorTests {
    static func load() throws -> MeshVector {
        if writeVectors {
            try MeshVector.compute().json.rendered.write(to: try VectorFiles.url("mesh"), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load("mesh")
    }

    static func routed(_ name: String) throws -> RoutedPayload {
        let file = try load()
        guard let found = file.cases.first(where: { $0.name == name }) else { throw VectorError("no case \(name)") }
        let envelope = try Envelope(decoding: try Data(hex: found.envelope))
        guard case .routed(let routed)? = envelope.body else { throw VectorError("\(name) is not routed") }
        #expect(Envelope.routed(routed).encoded == (try Data(hex: found.envelope)), "\(name) re-encodes")
        return routed
    }

    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    @Test("mesh.json is what the fixed keys produce, byte for byte")
    func fileMatches() throws {
        #expect(try Self.load() == (try MeshVector.compute()))
    }

    @Test("the recorded link state verifies and names alice's keys and neighbour")
    func linkStateVerifies() throws {
        let routed = try Self.routed("linkState")
        let origin = try NodeID(bytes: routed.origin)
        let advert = try MeshSigning.verifiedLinkState(routed.linkState, origin: origin)
        #expect(origin == alice.nodeID)
        #expect(advert.displayName == "alice")
        #expect(advert.staticKey == alice.staticKey.publicKey.rawRepresentation)
        #expect(advert.neighbors.map(\.nodeID) == [Data(bob.nodeID.bytes)])
        #expect(routed.hopLimit == 32 && routed.destination.isEmpty)
    }

    @Test("a relay may change the hop fields of a broadcast but nothing signed")
    func broadcastSignature() throws {
        var routed = try Self.routed("broadcast")
        let origin = try NodeID(bytes: routed.origin)
        routed.hopLimit = 2
        routed.hops = 5
        let broadcast = try MeshSigning.verifiedBroadcast(routed.broadcast, origin: origin, packetID: routed.packetID)
        #expect(broadcast.chat.text == "hello, mesh")

        var altered = routed.broadcast
        altered.body[altered.body.count - 1] ^= 0x01
        #expect(throws: EndToEndError(.badSignature, "")) {
            try MeshSigning.verifiedBroadcast(altered, origin: origin, packetID: routed.packetID)
        }
        #expect(throws: EndToEndError(.malformed, "")) {
            try MeshSigning.verifiedBroadcast(routed.broadcast, origin: origin, packetID: Data(repeating: 9, count: 16))
        }
        #expect(throws: EndToEndError(.wrongOrigin, "")) {
            try MeshSigning.verifiedBroadcast(routed.broadcast, origin: bob.nodeID, packetID: routed.packetID)
        }
    }

    @Test("a link state signed by someone else for alice's id is refused")
    func forgedLinkState() throws {
        var advert = LinkStatePayload()
        advert.displayName = "alice"
        advert.sequence = 99
        let forged = MeshSigning.signLinkState(advert, identity: bob)
        #expect(throws: EndToEndError(.wrongOrigin, "")) {
            try MeshSigning.verifiedLinkState(forged, origin: alice.nodeID)
        }
        // Bob's body with alice's key substituted: the signature no longer verifies.
        var body = try LinkStatePayload(decoding: forged.body, what: "link state")
        body.identityKey = alice.signingKey.publicKey.rawRepresentation
        var swapped = forged
        swapped.body = body.serialized
        #expect(throws: EndToEndError(.badSignature, "")) {
            try MeshSigning.verifiedLinkState(swapped, origin: alice.nodeID)
        }
    }

    @Test("the sealed message opens for bob only, and only under its own header")
    func sealedOpens() throws {
        let routed = try Self.routed("sealed")
        let header = SealHeader(origin: try NodeID(bytes: routed.origin), destination: try NodeID(bytes: routed.destination),
                                packetID: routed.packetID)
        let plaintext = try Sealing.open(routed.sealed, header: header, identity: bob)
        #expect(plaintext.chat.text == "only for bob")
        #expect(plaintext.chat.sequence == 1)
        #expect(plaintext.displayName == "alice")
        // The text is not visible to relays.
        #expect(routed.sealed.range(of: Data("only for bob".utf8)) == nil)

        let carol = try LocalIdentity.generate()
        #expect(throws: EndToEndError(.cannotOpen, "")) {
            try Sealing.open(routed.sealed, header: SealHeader(origin: header.origin, destination: carol.nodeID, packetID: header.packetID), identity: carol)
        }
        var other = header
        other.packetID = Data(repeating: 1, count: 16)
        #expect(throws: EndToEndError(.cannotOpen, "")) { try Sealing.open(routed.sealed, header: other, identity: bob) }
        other = header
        other.origin = carol.nodeID
        #expect(throws: EndToEndError(.cannotOpen, "")) { try Sealing.open(routed.sealed, header: other, identity: bob) }
        var tampered = routed.sealed
        tampered[tampered.count / 2] ^= 0x80
        #expect(throws: EndToEndError(.cannotOpen, "")) { try Sealing.open(tampered, header: header, identity: bob) }
    }

    @Test("a sealed message claiming another origin is refused even when the prologue matches")
    func sealedWrongOrigin() throws {
        // carol seals to bob under a header that claims alice as origin.
        let carol = try LocalIdentity.generate()
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        let sealed = try Sealing.seal(.receipt(ReceiptPayload()), displayName: "carol", sealedAtMilliseconds: 1,
                                      header: header, recipientStaticKey: bob.staticKey.publicKey, identity: carol)
        #expect(throws: EndToEndError(.wrongOrigin, "")) { try Sealing.open(sealed, header: header, identity: bob) }
    }

    @Test("a plaintext over one Noise message is refused with the limit")
    func sealTooLarge() throws {
        var data = Meshchat_V1_Data()
        data.payload = Data(count: WireLimits.maxSealedPlaintext)
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        #expect(throws: EndToEndError(.tooLarge, "")) {
            try Sealing.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: header,
                             recipientStaticKey: bob.staticKey.publicKey, identity: alice)
        }
        data.payload = Data(count: WireLimits.maxRelayedPayload)
        let sealed = try Sealing.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: header,
                                      recipientStaticKey: bob.staticKey.publicKey, identity: alice)
        #expect(sealed.count <= WireLimits.maxSealedSize)
    }

    @Test("a known static key skips only the binding's signature check: an unknown or different key is checked")
    func knownStaticKey() throws {
        let carol = try LocalIdentity.generate()
        let header = SealHeader(origin: carol.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        var plaintext = SealedPayload()
        plaintext.identityKey = carol.signingKey.publicKey.rawRepresentation
        plaintext.staticSignature = Data(repeating: 0, count: 64)
        plaintext.displayName = "carol"
        plaintext.sealedAtMs = 1
        plaintext.receipt = ReceiptPayload()
        var handshake = try NoiseHandshake(protocolName: Sealing.protocolName, initiator: true, prologue: header.prologue,
                                           staticKey: carol.staticKey, remoteStaticKey: bob.staticKey.publicKey)
        let sealed = try handshake.writeMessage(payload: plaintext.serialized)
        #expect(throws: EndToEndError(.badSignature, "")) { try Sealing.open(sealed, header: header, identity: bob) }
        #expect(throws: EndToEndError(.badSignature, "")) {
            try Sealing.open(sealed, header: header, identity: bob, knownStaticKey: alice.staticKey.publicKey)
        }
        // The same static key was verified before (advert or handshake): the binding holds.
        #expect(try Sealing.open(sealed, header: header, identity: bob, knownStaticKey: carol.staticKey.publicKey).displayName == "carol")
    }
}
