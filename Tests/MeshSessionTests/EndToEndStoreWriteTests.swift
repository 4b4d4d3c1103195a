import Crypto
import Foundation
import Logging
import MeshLink
import MeshRatchet
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// What the end-to-end store writes on a sealed packet's path (PROTOCOL.md §19.7): a new session
/// before its first packet leaves, and nothing on a turn of the ratchet, which the next flush stores
/// with a reservation. A file write on the path cost 0.2–1.3 ms on ext4 (a replace by rename flushes
/// the new file's data), most of what one relay added to a sealed round trip (issue 16); these tests
/// watch the file, not the clock.
@Suite("end-to-end store: writes on the packet path")
struct EndToEndStoreWriteTests {
    static let logger = Logger(label: "e2e-writes") { _ in SwiftLogNoOpLogHandler() }

    /// Alice and carol with stores in one temporary directory, and a line each way.
    struct Pair {
        let directory = TemporaryDirectory("meshchat-e2e-writes")
        let alice: LocalIdentity, carol: LocalIdentity
        var aliceStore: EndToEndStore, carolStore: EndToEndStore
        let carolKeys: PairSessions.PeerKeys
        var packetNumber: UInt8 = 0

        init() throws {
            alice = try LocalIdentity.generate()
            carol = try LocalIdentity.generate()
            aliceStore = EndToEndStore(identity: alice, dataDirectory: directory.appending("alice"), logger: EndToEndStoreWriteTests.logger)
            carolStore = EndToEndStore(identity: carol, dataDirectory: directory.appending("carol"), logger: EndToEndStoreWriteTests.logger)
            let prekey = carolStore.signedPrekey
            carolKeys = PairSessions.PeerKeys(staticKey: carol.staticKey.publicKey, prekeyID: prekey.id,
                                              prekey: try prekey.verified(by: carol.signingKey.publicKey))
        }

        /// Alice's file of her sessions with carol.
        var alicesFile: String { directory.appending("alice/sessions/\(carol.nodeID.hex)") }
        /// Carol's file of her sessions with alice.
        var carolsFile: String { directory.appending("carol/sessions/\(alice.nodeID.hex)") }

        mutating func aliceToCarol(_ text: String) throws -> String {
            packetNumber &+= 1
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            let header = SealHeader(origin: alice.nodeID, destination: carol.nodeID, packetID: Data(repeating: packetNumber, count: 16))
            let sealed = try aliceStore.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: header, peer: carolKeys)
            return try Self.text(carolStore.open(sealed, header: header, knownStaticKey: alice.staticKey.publicKey).0)
        }

        mutating func carolToAlice(_ text: String) throws -> String {
            packetNumber &+= 1
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            let header = SealHeader(origin: carol.nodeID, destination: alice.nodeID, packetID: Data(repeating: packetNumber, count: 16))
            let sealed = try carolStore.seal(.data(data), displayName: "carol", sealedAtMilliseconds: 1, header: header, peer: nil)
            return try Self.text(aliceStore.open(sealed, header: header, knownStaticKey: carol.staticKey.publicKey).0)
        }

        static func text(_ payload: SealedPayload) -> String {
            guard case .data(let data) = payload.content else { return "" }
            return String(decoding: data.payload, as: UTF8.self)
        }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test("a new session is on disk before its first packet leaves; a ping-pong after it writes no file until the flush")
    func pingPongWritesNothingOnThePath() throws {
        var pair = try Pair()
        #expect(try pair.aliceToCarol("begin") == "begin")
        #expect(Self.exists(pair.alicesFile), "the initiator stored the new session before sending")
        #expect(try pair.carolToAlice("reply") == "reply")
        // From here every message turns the ratchet: a new sending chain each time.
        try FileManager.default.removeItem(atPath: pair.alicesFile)
        #expect(!Self.exists(pair.carolsFile), "carol's session (begun by alice's packet) waits for the flush")
        for round in 0..<10 {
            #expect(try pair.aliceToCarol("a\(round)") == "a\(round)")
            #expect(try pair.carolToAlice("c\(round)") == "c\(round)")
        }
        #expect(!Self.exists(pair.alicesFile) && !Self.exists(pair.carolsFile), "no turn wrote a file on the packet's path")
        pair.aliceStore.flush()
        pair.carolStore.flush()
        #expect(Self.exists(pair.alicesFile) && Self.exists(pair.carolsFile), "the flush stores both")
    }

    @Test("a restart from the flush that stored a turn reuses no message key: the next line opens and a replayed number would not")
    func restartAfterUnstoredTurnOpens() throws {
        var pair = try Pair()
        #expect(try pair.aliceToCarol("begin") == "begin")
        #expect(try pair.carolToAlice("reply") == "reply")  // alice's ratchet turns
        pair.aliceStore.flush()
        for round in 0..<3 { #expect(try pair.aliceToCarol("unstored \(round)") == "unstored \(round)") }
        // Alice's process dies; she comes back on the flushed state, which reserved the new chain.
        pair.aliceStore = EndToEndStore(identity: pair.alice, dataDirectory: pair.directory.appending("alice"), logger: Self.logger)
        #expect(try pair.aliceToCarol("after restart") == "after restart", "carol opens it: its key was never used")
        #expect(try pair.carolToAlice("and back") == "and back")
    }
}
