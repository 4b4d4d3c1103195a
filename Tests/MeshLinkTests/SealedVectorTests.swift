import Crypto
import Foundation
@testable import MeshLink
import MeshRatchet
import MeshTestSupport
import MeshWire
import Testing

/// The sealed cases of `mesh.json` (PROTOCOL.md §19.6): the first three messages of a Double Ratchet
/// session between alice and bob, deterministic through ``SealedVectors``' fixed keys.
extension MeshVector {
    /// The packet ids of bob's reply and alice's next message.
    static let replyPacketID = Data(pattern(from: 0xc1, count: 16))
    static let nextPacketID = Data(pattern(from: 0xc2, count: 16))

    static var firstHeader: SealHeader {
        SealHeader(origin: FixedParty.alice.identity.nodeID, destination: FixedParty.bob.identity.nodeID, packetID: packetID)
    }
    static var replyHeader: SealHeader {
        SealHeader(origin: FixedParty.bob.identity.nodeID, destination: FixedParty.alice.identity.nodeID, packetID: replyPacketID)
    }
    static var nextHeader: SealHeader {
        SealHeader(origin: FixedParty.alice.identity.nodeID, destination: FixedParty.bob.identity.nodeID, packetID: nextPacketID)
    }

    static func data(_ text: String) -> SealedPayload.OneOf_Content {
        var data = Meshchat_V1_Data()
        data.payload = Data(text.utf8)
        return .data(data)
    }

    /// sealed (alice's prekey message), sealedReply (bob's session message) and sealedNext (alice's
    /// session message after a Diffie-Hellman step), each opened by its recipient for its body.
    static func sealedCases() throws -> [Case] {
        let alice = FixedParty.alice.identity, bob = FixedParty.bob.identity
        var aliceKeys = SealedVectors.aliceKeys, bobKeys = SealedVectors.bobKeys
        let (first, aliceBegun) = try SealedVectors.sealFirst(data("only for bob"), sentAt: sentAt, header: firstHeader,
                                                              alice: alice, bob: bob, keys: &aliceKeys)
        var aliceSessions = aliceBegun
        let openedFirst = try RatchetSealing.open(first, header: firstHeader, sessions: PairSessions(), identity: bob,
                                                  prekey: SealedVectors.bobPrekeys, using: &bobKeys)
        var bobSessions = openedFirst.sessions
        let reply = try RatchetSealing.seal(data("only for alice"), displayName: "bob", sealedAtMilliseconds: sentAt + 1_000,
                                            header: replyHeader, sessions: &bobSessions, peer: nil, identity: bob, using: &bobKeys)
        let openedReply = try RatchetSealing.open(reply.packet, header: replyHeader, sessions: aliceSessions, identity: alice,
                                                  prekey: { _ in nil }, using: &aliceKeys)
        aliceSessions = openedReply.sessions
        let next = try RatchetSealing.seal(data("and again for bob"), displayName: "alice", sealedAtMilliseconds: sentAt + 2_000,
                                           header: nextHeader, sessions: &aliceSessions, peer: SealedVectors.peerKeys(bob),
                                           identity: alice, using: &aliceKeys)
        // bob's ratchet key after this step is not part of the vector.
        var anyKeys = SystemRandomNumberGenerator()
        let openedNext = try RatchetSealing.open(next.packet, header: nextHeader, sessions: bobSessions, identity: bob,
                                                 prekey: SealedVectors.bobPrekeys, using: &anyKeys)

        func routed(_ header: SealHeader, _ packet: Data) -> String {
            var routed = MeshVector.routed(origin: header.origin, destination: header.destination, hopLimit: 7, hops: 0)
            routed.packetID = header.packetID
            routed.sealed = packet
            return Envelope.routed(routed).encoded.hexString
        }
        return [
            Case(name: "sealed", description: "alice's data \"only for bob\", sealed to bob: the first message of a new session, "
                     + "a prekey message (its plaintext carries alice's identity key and static signature)",
                 body: openedFirst.payload.serialized.hexString, envelope: routed(firstHeader, first)),
            Case(name: "sealedReply", description: "bob's data \"only for alice\" (packet id c1c2…d0, sent 1 s later): a session "
                     + "message on the session alice began, under bob's new ratchet key b0b1…cf",
                 body: openedReply.payload.serialized.hexString, envelope: routed(replyHeader, reply.packet)),
            Case(name: "sealedNext", description: "alice's data \"and again for bob\" after reading the reply (packet id c2c3…d1, "
                     + "sent 2 s later): a session message with a Diffie-Hellman step to her ratchet key c0c1…df",
                 body: openedNext.payload.serialized.hexString, envelope: routed(nextHeader, next.packet)),
        ]
    }
}

@Suite("Sealed vectors and end-to-end checks (§19.6)", .serialized)
struct SealedVectorTests {
    let alice = FixedParty.alice.identity
    let bob = FixedParty.bob.identity

    func sealed(_ name: String) throws -> Data { try MeshVectorTests.routed(name).sealed }

    func publicKey(_ privateKey: [UInt8]) throws -> Data {
        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey).publicKey.rawRepresentation
    }

    @Test("the first message is a prekey message on bob's prekey 1 with the fixed keys, and opens for bob only")
    func firstMessage() throws {
        let packet = try sealed("sealed")
        let header = MeshVector.firstHeader
        guard case .prekey(let prekey, let message) = try RatchetPacket(decoding: packet) else {
            Issue.record("not a prekey message")
            return
        }
        #expect(prekey.prekeyID == 1)
        #expect(prekey.ephemeralKey == (try publicKey(SealedVectors.aliceEphemeralPrivateKey)))
        #expect(prekey.initiatorStaticKey == alice.staticKey.publicKey.rawRepresentation)
        #expect(message.header.ratchetKey == (try publicKey(SealedVectors.aliceRatchetPrivateKey)))
        #expect(message.header.previousCount == 0 && message.header.number == 0)

        let opened = try SealedVectors.open(packet, header: header, as: bob)
        #expect(opened.payload.data.payload == Data("only for bob".utf8))
        #expect(opened.payload.displayName == "alice")
        #expect(opened.payload.identityKey == alice.signingKey.publicKey.rawRepresentation)
        #expect(opened.sessionID == prekey.sessionID)
        #expect(packet.range(of: Data("only for bob".utf8)) == nil, "relays do not see the text")

        // alice and carol, addressed in the header and even given bob's prekey, cannot open it; nor can
        // a node holding bob's identity and prekey but not his static key.
        let carol = try LocalIdentity.generate()
        let impostor = try LocalIdentity(signingKey: bob.signingKey, staticKey: carol.staticKey)
        #expect(try SealedVectors.openAsBobOnly(packet, header: header, bob: bob, other: alice).otherFailed)
        #expect(try SealedVectors.openAsBobOnly(packet, header: header, bob: bob, other: carol).otherFailed)
        #expect(throws: EndToEndError(.cannotOpen, "")) { try SealedVectors.open(packet, header: header, as: impostor) }
    }

    @Test("the first message does not open under a moved header or with any byte changed")
    func firstMessageIsBound() throws {
        let packet = try sealed("sealed")
        let header = MeshVector.firstHeader
        let carol = try LocalIdentity.generate()
        var moved = header
        moved.packetID = Data(repeating: 1, count: 16)
        #expect(throws: EndToEndError(.cannotOpen, "")) { try SealedVectors.open(packet, header: moved, as: bob) }
        moved = header
        moved.origin = carol.nodeID
        #expect(throws: EndToEndError(.cannotOpen, "")) { try SealedVectors.open(packet, header: moved, as: bob) }
        // The kind, the prekey id, EK_I, IK_I, the ratchet header, the ciphertext and the tag.
        for index in [0, 4, 5, 40, 69, 100, 109, packet.count / 2, packet.count - 1] {
            var tampered = packet
            tampered[index] ^= 0x80
            #expect(throws: EndToEndError.self, "byte \(index)") { try SealedVectors.open(tampered, header: header, as: bob) }
        }
        #expect(throws: EndToEndError.self) { try SealedVectors.open(packet.dropLast(), header: header, as: bob) }
        // A prekey bob does not hold: the sender must begin again on a current one (§19.7).
        var otherPrekey = packet
        otherPrekey[4] = 2
        #expect(throws: EndToEndError(.unknownSession, "")) { try SealedVectors.open(otherPrekey, header: header, as: bob) }
    }

    @Test("bob's reply and alice's next message open in turn as session messages, each only once")
    func conversation() throws {
        let first = try sealed("sealed"), reply = try sealed("sealedReply"), next = try sealed("sealedNext")
        let sessionID = try RatchetPacket(decoding: first).sessionID
        let bobSessions = try SealedVectors.open(first, header: MeshVector.firstHeader, as: bob).sessions

        // alice's side, replayed from the fixed keys: her first message is the recorded one.
        var aliceKeys = SealedVectors.aliceKeys
        let (again, aliceSessions) = try SealedVectors.sealFirst(MeshVector.data("only for bob"), sentAt: MeshVector.sentAt,
                                                                 header: MeshVector.firstHeader, alice: alice, bob: bob, keys: &aliceKeys)
        #expect(again == first)

        guard case .session(let replyID, let replyMessage) = try RatchetPacket(decoding: reply) else {
            Issue.record("the reply is not a session message")
            return
        }
        #expect(replyID == sessionID)
        #expect(replyMessage.header.ratchetKey == (try publicKey(SealedVectors.bobRatchetPrivateKey)))
        let openedReply = try RatchetSealing.open(reply, header: MeshVector.replyHeader, sessions: aliceSessions, identity: alice,
                                                  prekey: { _ in nil }, using: &aliceKeys)
        #expect(openedReply.payload.data.payload == Data("only for alice".utf8) && openedReply.payload.displayName == "bob")
        #expect(openedReply.payload.identityKey.isEmpty, "a session message carries no identity")
        var spare = SystemRandomNumberGenerator()
        #expect(throws: EndToEndError(.cannotOpen, ""), "a message key opens once") {
            try RatchetSealing.open(reply, header: MeshVector.replyHeader, sessions: openedReply.sessions, identity: alice,
                                    prekey: { _ in nil }, using: &spare)
        }
        #expect(throws: EndToEndError(.unknownSession, ""), "a session alice does not hold") {
            try RatchetSealing.open(reply, header: MeshVector.replyHeader, sessions: PairSessions(), identity: alice,
                                    prekey: { _ in nil }, using: &spare)
        }

        guard case .session(let nextID, let nextMessage) = try RatchetPacket(decoding: next) else {
            Issue.record("the next message is not a session message")
            return
        }
        #expect(nextID == sessionID)
        #expect(nextMessage.header.ratchetKey == (try publicKey(SealedVectors.aliceNextRatchetPrivateKey)))
        #expect(nextMessage.header.previousCount == 1 && nextMessage.header.number == 0)
        let openedNext = try SealedVectors.open(next, header: MeshVector.nextHeader, as: bob, sessions: bobSessions)
        #expect(openedNext.payload.data.payload == Data("and again for bob".utf8) && openedNext.payload.identityKey.isEmpty)
        var moved = MeshVector.nextHeader
        moved.packetID = MeshVector.packetID
        #expect(throws: EndToEndError(.cannotOpen, "")) { try SealedVectors.open(next, header: moved, as: bob, sessions: bobSessions) }
    }

    @Test("a prekey message whose identity key is another node's is refused (wrongOrigin)")
    func wrongOrigin() throws {
        // carol begins a session with bob under a header that claims alice as origin.
        let carol = try LocalIdentity.generate()
        var sessions = PairSessions()
        var keys = SystemRandomNumberGenerator()
        let sealed = try RatchetSealing.seal(.data(Meshchat_V1_Data()), displayName: "carol", sealedAtMilliseconds: 1,
                                             header: MeshVector.firstHeader, sessions: &sessions,
                                             peer: SealedVectors.peerKeys(bob), identity: carol, using: &keys)
        #expect(throws: EndToEndError(.wrongOrigin, "")) { try SealedVectors.open(sealed.packet, header: MeshVector.firstHeader, as: bob) }
    }

    /// A prekey message from carol to bob whose plaintext names carol's identity key with a signature
    /// that does not bind her static key `IK_I`.
    func unboundPrekeyMessage(from carol: LocalIdentity, header: SealHeader) throws -> Data {
        var plaintext = SealedPayload()
        plaintext.identityKey = carol.signingKey.publicKey.rawRepresentation
        plaintext.staticSignature = alice.staticSignature
        plaintext.displayName = "carol"
        plaintext.sealedAtMs = 1
        plaintext.data = Meshchat_V1_Data()
        var sessions = PairSessions()
        var keys = SystemRandomNumberGenerator()
        return try sessions.seal(plaintext.serialized, context: RatchetSealing.context(header), to: SealedVectors.peerKeys(bob),
                                 localStaticKey: carol.staticKey, using: &keys).packet
    }

    @Test("a prekey message whose static signature does not bind IK_I is refused (badSignature)")
    func badSignature() throws {
        let carol = try LocalIdentity.generate()
        let header = SealHeader(origin: carol.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        let sealed = try unboundPrekeyMessage(from: carol, header: header)
        #expect(throws: EndToEndError(.badSignature, "")) { try SealedVectors.open(sealed, header: header, as: bob) }
        // The identity fields missing altogether.
        var sessions = PairSessions()
        var keys = SystemRandomNumberGenerator()
        let bare = try sessions.seal(SealedPayload().serialized, context: RatchetSealing.context(header), to: SealedVectors.peerKeys(bob),
                                     localStaticKey: carol.staticKey, using: &keys).packet
        #expect(throws: EndToEndError(.malformed, "")) { try SealedVectors.open(bare, header: header, as: bob) }
    }

    @Test("a known static key skips only the binding's signature check: an unknown or different key is checked")
    func knownStaticKey() throws {
        let carol = try LocalIdentity.generate()
        let header = SealHeader(origin: carol.nodeID, destination: bob.nodeID, packetID: MeshVector.packetID)
        let sealed = try unboundPrekeyMessage(from: carol, header: header)
        #expect(throws: EndToEndError(.badSignature, "")) {
            try SealedVectors.open(sealed, header: header, as: bob, knownStaticKey: alice.staticKey.publicKey)
        }
        // The same static key was verified before (advert or handshake): the binding holds.
        let opened = try SealedVectors.open(sealed, header: header, as: bob, knownStaticKey: carol.staticKey.publicKey)
        #expect(opened.payload.displayName == "carol")
    }

    @Test("a plaintext over one prekey message is refused with the limit; the largest payload fits")
    func tooLarge() throws {
        var data = Meshchat_V1_Data()
        data.payload = Data(count: WireLimits.maxSealedPlaintext)
        var sessions = PairSessions()
        var keys = SystemRandomNumberGenerator()
        #expect(throws: EndToEndError(.tooLarge, "")) {
            try RatchetSealing.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: MeshVector.firstHeader,
                                    sessions: &sessions, peer: SealedVectors.peerKeys(bob), identity: alice, using: &keys)
        }
        #expect(sessions.isEmpty, "a refused seal begins no session")
        data.payload = Data(count: WireLimits.maxRelayedPayload)
        let sealed = try RatchetSealing.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: MeshVector.firstHeader,
                                             sessions: &sessions, peer: SealedVectors.peerKeys(bob), identity: alice, using: &keys)
        #expect(sealed.packet.count <= WireLimits.maxSealedSize)
        #expect(try SealedVectors.open(sealed.packet, header: MeshVector.firstHeader, as: bob).payload.data.payload.count
                == WireLimits.maxRelayedPayload)
    }
}
