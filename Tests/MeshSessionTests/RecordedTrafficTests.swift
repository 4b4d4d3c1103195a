import Crypto
import Foundation
import Logging
import MeshLink
import MeshRatchet
import MeshRouting
@testable import MeshSession
import MeshTestSupport
import MeshWire
import NIOCore
import NIOEmbedded
import Testing

/// Three mesh nodes A—B—C wired by hand (no sockets): every routed packet one node sends is handed to
/// the neighbour it is for, and each sealed packet B forwards is recorded, as a relay that keeps
/// everything would (PROTOCOL.md §19.5).
private final class RecordingLine {
    let directory = TemporaryDirectory("meshchat-recorded")
    let identities: [String: LocalIdentity]
    let nodes: [String: MeshNode]
    /// The nodes' clock: virtual, moved by ``settle()``.
    let clock = EmbeddedEventLoop()
    private var names: [NodeID: String] = [:]
    /// Every sealed packet B forwarded, with its routing header.
    var recorded: [(header: SealHeader, sealed: Data)] = []
    /// What each node received as sealed data, in order.
    var received: [String: [String]] = [:]

    init() throws {
        var identities: [String: LocalIdentity] = [:]
        var nodes: [String: MeshNode] = [:]
        let clock = self.clock
        let logger = Logger(label: "recorded") { _ in SwiftLogNoOpLogHandler() }
        for name in ["alice", "bob", "carol"] {
            let identity = try LocalIdentity.generate()
            identities[name] = identity
            let peer = try LocalPeer(displayName: name, identity: identity, dataDirectory: directory.appending(name))
            try FileManager.default.createDirectory(atPath: directory.appending(name), withIntermediateDirectories: true)
            nodes[name] = MeshNode(peer: peer, configuration: RoutingConfiguration(), logger: logger, clock: clock)
        }
        self.identities = identities
        self.nodes = nodes
        for (name, identity) in identities { names[identity.nodeID] = name }
        try link("alice", "bob")
        try link("bob", "carol")
        try settle()
    }

    /// Moves virtual time on past the adverts' rate limit (§13.2.3) and fires the routers' timers, a
    /// few times, so that every batched advert goes out and the routes settle.
    func settle() throws {
        for _ in 0..<5 {
            clock.advanceTime(by: .milliseconds(100))
            for name in ["alice", "bob", "carol"] { try deliver(try #require(nodes[name]).timerFired(), from: name) }
        }
    }

    func id(_ name: String) throws -> NodeID { try #require(identities[name]).nodeID }

    private func link(_ x: String, _ y: String) throws {
        for (me, other) in [(x, y), (y, x)] {
            let node = try #require(nodes[me]), theirs = try #require(identities[other]), them = try #require(nodes[other])
            let step = node.neighborUp(try PeerID(id: theirs.nodeID, displayName: other), staticKey: theirs.staticKey.publicKey.rawRepresentation,
                                       identityKey: theirs.signingKey.publicKey.rawRepresentation,
                                       prekey: them.endToEnd.signedPrekey, latency: .milliseconds(1))
            try deliver(step, from: me)
        }
    }

    /// Hands every packet of a step to its neighbour, and what that causes, until nothing is left.
    func deliver(_ step: MeshNode.Step, from sender: String) throws {
        var queue: [(from: String, to: NodeID, routed: RoutedPayload)] = step.sends.map { (sender, $0.0, $0.1) }
        while !queue.isEmpty {
            let (from, to, routed) = queue.removeFirst()
            let receiver = try #require(names[to])
            if from == "bob", case .sealed(let sealed) = routed.payload {
                recorded.append((SealHeader(origin: try NodeID(bytes: routed.origin), destination: try NodeID(bytes: routed.destination),
                                            packetID: routed.packetID), sealed))
            }
            let next = try #require(nodes[receiver]).received(routed, from: try id(from))
            for event in next.events {
                if case .received(let message) = event, case .data(let data) = message.content {
                    received[receiver, default: []].append(String(decoding: data, as: UTF8.self))
                }
            }
            queue += next.sends.map { (receiver, $0.0, $0.1) }
        }
    }

    /// Sends a line sealed from one node to another.
    func send(_ text: String, from sender: String, to receiver: String) throws {
        var data = Meshchat_V1_Data()
        data.payload = Data(text.utf8)
        let node = try #require(nodes[sender])
        let step = try #require(try node.sendSealed(.data(data), to: try id(receiver)), "\(sender) cannot reach \(receiver)")
        try deliver(step, from: sender)
    }

    struct DamagedFile: Error { var reason: String }

    /// A node's sessions with another as stored on disk, once it has written what changed.
    func storedSessions(of owner: String, with other: String) throws -> PairSessions {
        try #require(nodes[owner]).endToEnd.flush()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.appending("\(owner)/sessions/\(try id(other).hex)")))
        // The file as an attacker who copied it reads it: its newest valid record (two slots since session 17).
        switch SessionFileFormat.decode(bytes) {
        case .record(let latest): return try PairSessions(serialized: latest.payload)
        case .legacy(let whole): return try PairSessions(serialized: whole)
        case .damaged(let why): throw DamagedFile(reason: why)
        }
    }

    /// A node's prekeys as stored on disk.
    func storedPrekeys(of owner: String) throws -> PrekeyRing {
        try PrekeyRing(serialized: try Data(contentsOf: URL(fileURLWithPath: directory.appending("\(owner)/prekeys"))))
    }
}

/// What a relay that recorded everything learns when it later steals a node's keys and state
/// (issue 15's recorded-traffic test; PROTOCOL.md §19.5).
@Suite("recorded traffic against stolen state", .serialized)
struct RecordedTrafficTests {
    /// Tries to open a recorded packet as carol with stolen state; the plaintext when it opens.
    private static func open(_ packet: (header: SealHeader, sealed: Data), with sessions: PairSessions, carol: LocalIdentity,
                             prekeys: PrekeyRing?) -> SealedPayload? {
        var random = SystemRandomNumberGenerator()
        return try? RatchetSealing.open(packet.sealed, header: packet.header, sessions: sessions, identity: carol,
                                        prekey: { prekeys?.privateKey(id: $0) }, using: &random).payload
    }

    @Test("forward secrecy: carol's long-term keys and all her session state, taken later, open none of the lines the relay recorded")
    func forwardSecrecy() throws {
        let line = try RecordingLine()
        for index in 0..<3 { try line.send("first \(index)", from: "alice", to: "carol") }
        try line.send("reply", from: "carol", to: "alice")
        for index in 0..<3 { try line.send("second \(index)", from: "alice", to: "carol") }
        try line.send("reply 2", from: "carol", to: "alice")
        try line.send("third", from: "alice", to: "carol")
        #expect(line.received["carol"] == ["first 0", "first 1", "first 2", "second 0", "second 1", "second 2", "third"])
        #expect(line.received["alice"] == ["reply", "reply 2"])
        let recorded = try line.recorded(from: "alice")
        #expect(recorded.count == 7)
        #expect(recorded.prefix(3).allSatisfy { $0.sealed.first == RatchetPacket.prekeyKind })
        #expect(recorded.dropFirst(3).allSatisfy { $0.sealed.first == RatchetPacket.sessionKind })
        // Relays see no plaintext: no recorded packet contains the line's bytes.
        #expect(!recorded.contains { $0.sealed.range(of: Data("second".utf8)) != nil })

        // Later the attacker takes everything carol has: her static key, her stored sessions, her prekeys.
        let carol = try #require(line.identities["carol"])
        let stolen = try line.storedSessions(of: "carol", with: "alice")
        let prekeys = try line.storedPrekeys(of: "carol")
        // The session messages stay closed: their keys were used and deleted.
        for packet in recorded.dropFirst(3) {
            #expect(Self.open(packet, with: stolen, carol: carol, prekeys: prekeys) == nil)
        }
        // The prekey messages rest on carol's prekey until she deletes it (§19.8: 30 days after it is
        // replaced); with it they open, after its deletion they do not.
        #expect(Self.open(recorded[0], with: PairSessions(), carol: carol, prekeys: prekeys) != nil)
        var later = prekeys
        var random = SystemRandomNumberGenerator()
        _ = later.rotateIfDue(now: MeshNode.nowMilliseconds + PrekeyRing.rotationInterval, using: &random)
        _ = later.rotateIfDue(now: MeshNode.nowMilliseconds + PrekeyRing.rotationInterval + PrekeyRing.retention, using: &random)
        #expect(later.privateKey(id: prekeys.currentID) == nil)
        for packet in recorded.prefix(3) {
            #expect(Self.open(packet, with: stolen, carol: carol, prekeys: later) == nil)
            #expect(Self.open(packet, with: PairSessions(), carol: carol, prekeys: later) == nil)
        }
    }

    @Test("post-compromise security: with alice's state stolen, carol's lines after one round trip are unreadable to the attacker")
    func postCompromise() throws {
        let line = try RecordingLine()
        try line.send("hello", from: "alice", to: "carol")
        try line.send("hi", from: "carol", to: "alice")
        try line.send("how are you", from: "alice", to: "carol")
        // The attacker copies alice's whole state (her static key and her stored sessions).
        let alice = try #require(line.identities["alice"])
        let stolen = try line.storedSessions(of: "alice", with: "carol")
        let before = try line.recorded(from: "carol")
        try line.send("exposed", from: "carol", to: "alice")
        // Carol's reply before alice's next turn is readable with the stolen state (§19.5: until the
        // other end's next reply)…
        let exposed = try #require(try line.recorded(from: "carol").dropFirst(before.count).first)
        var random = SystemRandomNumberGenerator()
        let opened = try RatchetSealing.open(exposed.sealed, header: exposed.header, sessions: stolen, identity: alice,
                                             prekey: { _ in nil }, using: &random)
        guard case .data(let data)? = opened.payload.content else { Issue.record("not data"); return }
        #expect(String(decoding: data.payload, as: UTF8.self) == "exposed")
        // …alice answers (a new ratchet key the attacker does not have), carol answers that: unreadable.
        try line.send("turn", from: "alice", to: "carol")
        let count = try line.recorded(from: "carol").count
        try line.send("healed", from: "carol", to: "alice")
        let healed = try #require(try line.recorded(from: "carol").dropFirst(count).first)
        #expect(throws: EndToEndError.self) {
            try RatchetSealing.open(healed.sealed, header: healed.header, sessions: opened.sessions, identity: alice,
                                    prekey: { _ in nil }, using: &random)
        }
        #expect(throws: EndToEndError.self) {
            try RatchetSealing.open(healed.sealed, header: healed.header, sessions: stolen, identity: alice,
                                    prekey: { _ in nil }, using: &random)
        }
        #expect(line.received["alice"] == ["hi", "exposed", "healed"])
    }
}

extension RecordingLine {
    /// The recorded packets one node made.
    func recorded(from origin: String) throws -> [(header: SealHeader, sealed: Data)] {
        let node = try id(origin)
        return recorded.filter { $0.header.origin == node }
    }
}

/// Sessions that cannot go on are begun again (PROTOCOL.md §19.6–§19.7).
@Suite("end-to-end session repair", .serialized)
struct SessionRepairTests {
    @Test("more than MAX_SKIP packets lost in a row: the next is refused and answered with a repair, and the sender's next line arrives on a new session")
    func lostRun() throws {
        let line = try RecordingLine()
        try line.send("hello", from: "alice", to: "carol")
        try line.send("hi", from: "carol", to: "alice")
        let alice = try #require(line.nodes["alice"])
        var data = Meshchat_V1_Data()
        data.payload = Data("lost".utf8)
        for _ in 0..<1_100 { _ = try alice.sendSealed(.data(data), to: try line.id("carol")) }  // sealed, never delivered
        let before = try line.recorded(from: "carol").count
        try line.send("refused", from: "alice", to: "carol")
        #expect(line.received["carol"] == ["hello"])
        // Carol answered with a repair on a fresh session (a prekey message).
        let repair = try #require(try line.recorded(from: "carol").dropFirst(before).first)
        #expect(repair.sealed.first == RatchetPacket.prekeyKind)
        try line.send("on a new session", from: "alice", to: "carol")
        #expect(line.received["carol"] == ["hello", "on a new session"])
        let last = try #require(try line.recorded(from: "alice").last)
        #expect(try RatchetPacket(decoding: last.sealed).sessionID == repair.sealed.dropFirst(5).prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
    }

    @Test("the receiver lost its sessions: the sender's next line is refused and repaired, the one after arrives")
    func lostState() throws {
        let line = try RecordingLine()
        try line.send("hello", from: "alice", to: "carol")
        try line.send("hi", from: "carol", to: "alice")
        try line.send("before", from: "alice", to: "carol")
        // Carol's sessions with alice vanish (a wiped disk): drop them from memory and disk.
        let carol = try #require(line.nodes["carol"])
        carol.endToEnd.forgetAll()
        try line.send("lost", from: "alice", to: "carol")
        try line.send("after", from: "alice", to: "carol")
        #expect(line.received["carol"] == ["hello", "before", "after"])
    }
}
