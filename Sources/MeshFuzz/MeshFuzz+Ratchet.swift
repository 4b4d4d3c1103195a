import Crypto
import Foundation
import MeshLink
import MeshRatchet
import MeshSession
import MeshWire

extension MeshFuzz {
    /// A fixed session (fixed keys): the responder's end after it has read one message, and one more
    /// message for it, so that fuzz inputs hit a live ratchet.
    private static let ratchetSession: (bob: DoubleRatchet, next: RatchetMessage)? = {
        func key(_ byte: UInt8) -> Curve25519.KeyAgreement.PrivateKey? {
            try? .init(rawRepresentation: [UInt8](repeating: byte, count: 32))
        }
        guard let alice = key(1), let bob = key(2), let prekey = key(3), let ephemeral = key(4),
              let initiated = try? PrekeyAgreement.initiate(identity: alice, responderIdentity: bob.publicKey,
                                                            responderPrekey: prekey.publicKey, ephemeral: ephemeral),
              let responded = try? PrekeyAgreement.respond(identity: bob, prekey: prekey, initiatorIdentity: alice.publicKey,
                                                           initiatorEphemeral: ephemeral.publicKey) else { return nil }
        var generator = CountingGenerator()
        guard var sender = try? DoubleRatchet(initiatorSecret: initiated.secret, responderRatchetKey: prekey.publicKey,
                                              associatedData: initiated.associatedData, using: &generator) else { return nil }
        var receiver = DoubleRatchet(responderSecret: responded.secret, ratchetKey: prekey, associatedData: responded.associatedData)
        guard let first = try? sender.encrypt(Data("first".utf8)),
              (try? receiver.decrypt(first, using: &generator)) != nil,
              let next = try? sender.encrypt(Data("next".utf8)) else { return nil }
        return (receiver, next)
    }()

    /// End-to-end ratchet input (§19): the input as a ratchet message to a live session (a failure
    /// must leave the session unchanged; a decoded message re-encodes to its bytes), and as a stored
    /// session state (refused or restored, never a trap; a restored one stores to the same bytes).
    @Sendable static func fuzzRatchet(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let restored = try? DoubleRatchet(serialized: data) {
            precondition(restored.serialized == data, "a stored ratchet state does not store back to its bytes")
        }
        guard let session = ratchetSession, let message = try? RatchetMessage(decoding: data) else { return }
        precondition(message.encoded == data, "a ratchet message does not re-encode to its bytes")
        var bob = session.bob
        let before = bob.serialized
        var generator = CountingGenerator()
        if (try? bob.decrypt(message, using: &generator)) == nil {
            precondition(bob.serialized == before, "a refused ratchet message changed the session")
        }
        // The genuine next message still opens unless the input was that very message.
        if message != session.next {
            precondition((try? bob.decrypt(session.next, using: &generator)) != nil, "a refused message broke the session")
        }
    }
}

extension MeshFuzz {
    /// Sealed packets between the neighbour and this node with fixed keys and a fixed generator (the
    /// same bytes on every run; `Tests/FuzzCorpus/ratchetpacket` holds them as seeds): the
    /// neighbour's first message (a prekey message on this node's prekey 1), this node's sessions
    /// after reading it and answering, and the neighbour's next message after reading the answer (a
    /// session message with a Diffie-Hellman step).
    package struct PacketFixture: Sendable {
        let header: SealHeader
        let prekey: Curve25519.KeyAgreement.PrivateKey
        /// The neighbour's first message.
        package let first: Data
        /// The neighbour's next message.
        package let next: Data
        /// This node's sessions after the first message and its answer.
        let sessions: PairSessions

        func prekeys(_ id: UInt32) -> Curve25519.KeyAgreement.PrivateKey? { id == 1 ? prekey : nil }
    }

    /// The fixture, or `nil` if it cannot be made (it always can with these keys).
    package static let packetFixture: PacketFixture? = {
        let me = FuzzKeys.me.identity, sender = FuzzKeys.neighbour.identity
        guard let prekey = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 9, count: 32)) else { return nil }
        let peer = PairSessions.PeerKeys(staticKey: me.staticKey.publicKey, prekeyID: 1, prekey: prekey.publicKey)
        let header = SealHeader(origin: sender.nodeID, destination: me.nodeID, packetID: Data(repeating: 7, count: 16))
        let answer = SealHeader(origin: me.nodeID, destination: sender.nodeID, packetID: Data(repeating: 8, count: 16))
        func data(_ text: String) -> SealedPayload.OneOf_Content {
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            return .data(data)
        }
        var generator = CountingGenerator()
        var theirs = PairSessions()
        guard let first = try? RatchetSealing.seal(data("first"), displayName: "mallory", sealedAtMilliseconds: 1, header: header,
                                                   sessions: &theirs, peer: peer, identity: sender, using: &generator),
              var mine = try? RatchetSealing.open(first.packet, header: header, sessions: PairSessions(), identity: me,
                                                  prekey: { $0 == 1 ? prekey : nil }, using: &generator).sessions,
              let reply = try? RatchetSealing.seal(data("answer"), displayName: "me", sealedAtMilliseconds: 2, header: answer,
                                                   sessions: &mine, peer: nil, identity: me, using: &generator),
              let read = try? RatchetSealing.open(reply.packet, header: answer, sessions: theirs, identity: sender,
                                                  prekey: { _ in nil }, using: &generator) else { return nil }
        theirs = read.sessions
        guard let next = try? RatchetSealing.seal(data("next"), displayName: "mallory", sealedAtMilliseconds: 3, header: header,
                                                  sessions: &theirs, peer: peer, identity: sender, using: &generator) else { return nil }
        return PacketFixture(header: header, prekey: prekey, first: first.packet, next: next.packet, sessions: mine)
    }()

    /// Hostile bytes as a sealed packet to this node (§19.6): its work estimated (§13.11), decoded as
    /// a ratchet packet (a decoded one re-encodes to its bytes) and opened with no session with the sender (only a prekey message
    /// can open) and with a live one (a refused packet changes nothing: the genuine next message still
    /// opens on what is kept).
    @Sendable static func fuzzRatchetPacket(_ bytes: [UInt8]) {
        let data = Data(bytes)
        let packet = try? RatchetPacket(decoding: data)
        if let packet { precondition(packet.encoded == data, "a ratchet packet does not re-encode to its bytes") }
        // The work estimate charged before opening (§13.11) reads the same hostile bytes.
        precondition(PairSessions().openingWork(of: data).diffieHellman == (data.first == RatchetPacket.prekeyKind),
                     "without sessions only a prekey message may be charged Diffie-Hellman")
        guard let fixture = packetFixture else { return }
        let work = fixture.sessions.openingWork(of: data)
        precondition(work.derivedKeys <= 2 * Int(RatchetLimits().maxSkip) + 1, "a work estimate beyond the most a packet can cost")
        let me = FuzzKeys.me.identity
        var generator = CountingGenerator()
        if let opened = try? RatchetSealing.open(data, header: fixture.header, sessions: PairSessions(), identity: me,
                                                 prekey: fixture.prekeys, using: &generator) {
            guard case .prekey? = packet else { preconditionFailure("a session message opened without its session") }
            precondition(opened.sessions.count == 1, "a first message kept other than one session")
        }
        let live = try? RatchetSealing.open(data, header: fixture.header, sessions: fixture.sessions, identity: me,
                                            prekey: fixture.prekeys, using: &generator)
        if data == fixture.next {
            precondition(live != nil, "the genuine next message does not open")
        } else {
            precondition((try? RatchetSealing.open(fixture.next, header: fixture.header, sessions: live?.sessions ?? fixture.sessions,
                                                   identity: me, prekey: fixture.prekeys, using: &generator)) != nil,
                         "a hostile sealed packet broke the session")
        }
    }
}

/// Deterministic "randomness" for the fuzz session, so that a kept input replays exactly.
struct CountingGenerator: RandomNumberGenerator {
    var state: UInt64 = 0x6d65_7368_6368_6174
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return state
    }
}
