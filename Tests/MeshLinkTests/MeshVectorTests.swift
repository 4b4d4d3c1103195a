import Crypto
import Foundation
@testable import MeshLink
import MeshTestSupport
import MeshWire
import Testing

/// `Protocol/vectors/mesh.json` (PROTOCOL.md §13): a signed link-state advert, a signed broadcast and
/// three sealed private messages (a Double Ratchet session's first three, §19.6: see
/// `SealedVectorTests`) between the fixed parties alice and bob of `handshake.json`, each as the
/// serialized `Envelope` that carries it. `Protocol/reference/ratchet.py --check` rebuilds the sealed
/// ones from the spec alone.
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
    var bobPrekeyID: UInt32
    var bobPrekeyPrivateKey: String
    var aliceEphemeralPrivateKey: String
    var aliceRatchetPrivateKey: String
    var bobRatchetPrivateKey: String
    var aliceNextRatchetPrivateKey: String
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
        var broadcastData = Meshchat_V1_Data()
        broadcastData.payload = Data("hello, mesh".utf8)
        broadcastBody.data = broadcastData
        let signedBroadcast = MeshSigning.signBroadcast(broadcastBody, identity: alice)
        var broadcast = routed(origin: alice.nodeID, destination: nil, hopLimit: 6, hops: 1)
        broadcast.broadcast = signedBroadcast

        let sealed = try sealedCases()

        return MeshVector(
            description: "PROTOCOL.md §13 between the fixed parties of handshake.json (alice: identity 0x00…, static 0x20…; "
                + "bob: identity 0x60…, static 0x80…), packet id c0c1…cf. linkState and broadcast are Ed25519-signed "
                + "(§13.4; deterministic, RFC 8032). sealed, sealedReply and sealedNext are a Double Ratchet session "
                + "(§19.6): sealed is alice's first message, a prekey message on bob's signed prekey 1 (private key "
                + "a0a1…bf, signed by bob's identity key), with EK_I f0f1…ff and alice's first ratchet key d0d1…ef; "
                + "sealedReply is bob's answer, a session message under his next ratchet key b0b1…cf; sealedNext is "
                + "alice's next message after reading it, a session message with a Diffie-Hellman step (her next "
                + "ratchet key c0c1…df). body: the signed body, or the sealed plaintext (Sealed). envelope: the "
                + "serialized Envelope carrying the Routed packet.",
            aliceNodeID: alice.nodeID.hex, bobNodeID: bob.nodeID.hex,
            bobPrekeyID: SealedVectors.bobPrekeyID,
            bobPrekeyPrivateKey: SealedVectors.bobPrekeyPrivateKey.hexString,
            aliceEphemeralPrivateKey: SealedVectors.aliceEphemeralPrivateKey.hexString,
            aliceRatchetPrivateKey: SealedVectors.aliceRatchetPrivateKey.hexString,
            bobRatchetPrivateKey: SealedVectors.bobRatchetPrivateKey.hexString,
            aliceNextRatchetPrivateKey: SealedVectors.aliceNextRatchetPrivateKey.hexString,
            cases: [
                Case(name: "linkState", description: "alice's advert: sequence 1790000000000, neighbour bob at 250 µs; hop limit 32",
                     body: signedAdvert.body.hexString, envelope: Envelope.routed(linkState).encoded.hexString),
                Case(name: "broadcast", description: "alice's data \"hello, mesh\" to every node, after one relay (hop limit 6, hops 1)",
                     body: signedBroadcast.body.hexString, envelope: Envelope.routed(broadcast).encoded.hexString),
            ] + sealed)
    }

    var json: OrderedJSON {
        .object([.init("description", .string(description)), .init("aliceNodeID", .string(aliceNodeID)),
                 .init("bobNodeID", .string(bobNodeID))]
            + SealedVectors.jsonMembers
            + [.init("bobRatchetPrivateKey", .string(bobRatchetPrivateKey)),
               .init("aliceNextRatchetPrivateKey", .string(aliceNextRatchetPrivateKey)),
               .init("cases", .array(cases.map {
                   .keyed(["name": .string($0.name), "description": .string($0.description),
                           "body": .string($0.body), "envelope": .string($0.envelope)])
               }))])
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
        #expect(broadcast.data.payload == Data("hello, mesh".utf8))

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
}
