import Crypto
import Foundation
import Logging
import MeshLink
import MeshRouting
@testable import MeshSession
import MeshTestSupport
import MeshTrust
import MeshWire
import Testing

/// Key rotation statements on the wire (PROTOCOL.md §20.2): carried in adverts and handshakes,
/// verified once each, refused when they do not hold; no sockets.
@Suite("Key rotations on the wire")
struct KeyRotationWireTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func key(_ byte: UInt8) -> Curve25519.Signing.PrivateKey {
        try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: byte, count: 32))
    }

    static func statement(_ old: Curve25519.Signing.PrivateKey, _ new: Curve25519.Signing.PrivateKey,
                          issued: UInt64 = 1_800_000_000_000) -> KeyRotationPayload {
        try! KeyRotation(retiring: old, for: new, issuedAtMilliseconds: issued).payload
    }

    static func node(_ key: Curve25519.Signing.PrivateKey) -> NodeID { LocalIdentity.nodeID(identityKey: key.publicKey) }

    @Test("a signed advert carries the node's chain (at most 4, newest first), and its handshake the newest")
    func encoded() throws {
        var identity = try LocalIdentity(signingKey: Self.key(9), staticKey: .init())
        let keys = (4...8).map { Self.key(UInt8($0)) } + [Self.key(9)]
        identity.rotations = (0..<5).reversed().map { Self.statement(keys[$0], keys[$0 + 1]) }
        var advert = LinkStatePayload()
        advert.displayName = "bob"
        advert.sequence = 7
        let signed = MeshSigning.signLinkState(advert, identity: identity)
        let verified = try MeshSigning.verifiedLinkState(signed, origin: identity.nodeID)
        #expect(verified.rotations == Array(identity.rotations.prefix(4)))
        #expect(verified.rotations.first?.newKey == identity.signingKey.publicKey.rawRepresentation)
        var book = RotationBook()
        let steps = book.learn(verified.rotations, identityKey: verified.identityKey, logger: Self.logger)
        // Oldest first, the four the advert carried.
        #expect(steps.map(\.old) == (1...4).map { Self.node(keys[$0]) })
        #expect(steps.map(\.new) == (2...5).map { Self.node(keys[$0]) })
        #expect(book.chain(of: identity.nodeID).count == 4)
    }

    @Test("a statement is checked once: a repeated advert reports nothing new")
    func checkedOnce() {
        var book = RotationBook()
        let statement = Self.statement(Self.key(1), Self.key(2))
        let key = Self.key(2).publicKey.rawRepresentation
        #expect(book.learn([statement], identityKey: key, logger: Self.logger) == [.init(old: Self.node(Self.key(1)), new: Self.node(Self.key(2)))])
        #expect(book.learn([statement], identityKey: key, logger: Self.logger).isEmpty)
        #expect(book.chain(of: Self.node(Self.key(2))).count == 1)
    }

    @Test("refused: a bad old or new signature, a new key that is not the node's own, equal keys, a broken chain, wrong sizes",
          arguments: ["old signature", "new signature", "not its own", "equal keys", "broken chain", "long signature", "short key"])
    func refused(_ fault: String) {
        var book = RotationBook()
        var statements = [Self.statement(Self.key(1), Self.key(2))]
        var holder = Self.key(2).publicKey.rawRepresentation
        switch fault {
        case "old signature": statements[0].oldSignature[0] ^= 1
        case "new signature": statements[0].newSignature[5] ^= 0x80
        case "not its own": holder = Self.key(3).publicKey.rawRepresentation
        case "long signature": statements[0].oldSignature += Data(count: 60_000)
        case "short key": statements[0].oldKey = Data(count: 31)
        case "equal keys":
            var equal = statements[0]
            equal.oldKey = equal.newKey
            statements = [equal]
        default:
            // The second statement's new key is not the first one's old key.
            statements.append(Self.statement(Self.key(5), Self.key(6)))
        }
        let steps = book.learn(statements, identityKey: holder, logger: Self.logger)
        if fault == "broken chain" {
            #expect(steps.count == 1)
            #expect(book.chain(of: Self.node(Self.key(2))).count == 1)
        } else {
            #expect(steps.isEmpty)
            #expect(book.chain(of: RotationBook.nodeID(holder)!).isEmpty)
        }
    }

    @Test("an advert with more than four statements: the rest are not read")
    func boundedChain() {
        var book = RotationBook()
        let keys = (1...7).map { Self.key(UInt8($0)) }
        let chain = (0..<6).reversed().map { Self.statement(keys[$0], keys[$0 + 1]) }
        let steps = book.learn(chain, identityKey: keys[6].publicKey.rawRepresentation, logger: Self.logger)
        #expect(steps.count == WireLimits.maxKeyRotations)
    }

    @Test("a node two hops away learns the rotation from the advert, before it hears the node is reachable")
    func advertAcrossTheMesh() throws {
        var line = MeshNodeStateMachineTests.Line()
        let old = Self.key(40)
        var identity = line.nodes[0].identity
        identity.rotations = [Self.statement(old, identity.signingKey)]
        let alice = try LocalPeer(displayName: "alice", identity: identity)
        line.nodes[0] = MeshNodeStateMachine(peer: alice, configuration: RoutingConfiguration(), initialSequence: 1, now: .zero,
                                             logger: Self.logger)
        line.link(0, 1)
        line.link(1, 2)
        for _ in 0..<5 { line.advance(.seconds(1)) }
        let events = line.events[2]
        let rotated = events.firstIndex { event in
            if case .keyRotated(let peer, let previous) = event {
                return peer.id == line.ids[0] && previous == Self.node(old) && peer.displayName == "alice"
            }
            return false
        }
        let reachable = events.firstIndex { event in
            if case .reachabilityChanged(let peer, _?) = event { return peer.id == line.ids[0] }
            return false
        }
        let first = try #require(rotated)
        #expect(first < (try #require(reachable)))
        // Reported once, though every refresh repeats it.
        #expect(events.filter { if case .keyRotated = $0 { true } else { false } }.count == 1)
        #expect(line.nodes[2].keyRotations(of: line.ids[0]).map(\.oldKey) == [old.publicKey.rawRepresentation])
        // The relay learnt it too; the node itself reports nothing about itself.
        #expect(line.nodes[1].keyRotations(of: line.ids[0]).count == 1)
        #expect(!line.events[0].contains { if case .keyRotated = $0 { true } else { false } })
    }

    @Test("the vector statement (Protocol/vectors/trust.json) encodes as its proto bytes and verifies after decoding")
    func vector() throws {
        struct Vectors: Decodable {
            struct Rotation: Decodable { var old_key: String, new_key: String, issued_ms: UInt64, old_signature: String, new_signature: String, proto: String }
            var rotation: Rotation
        }
        let v = try JSONDecoder().decode(Vectors.self, from: VectorFiles.data("trust")).rotation
        let statement = KeyRotation(oldKey: Data(try Hex.decode(v.old_key)), newKey: Data(try Hex.decode(v.new_key)),
                                    issuedAtMilliseconds: v.issued_ms, oldSignature: Data(try Hex.decode(v.old_signature)),
                                    newSignature: Data(try Hex.decode(v.new_signature)))
        let bytes = Data(try Hex.decode(v.proto))
        #expect(statement.payload.serialized == bytes)
        let decoded = try KeyRotationPayload(decoding: bytes, what: "key rotation")
        #expect(KeyRotation(decoded) == statement)
        #expect(throws: Never.self) { _ = try KeyRotation(decoded).verified() }
    }
}
