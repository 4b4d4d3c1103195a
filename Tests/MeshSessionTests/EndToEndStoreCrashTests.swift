import Crypto
import Foundation
import Logging
import MeshLink
import MeshRatchet
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// The end-to-end store across a process killed right after a sealed packet left (PROTOCOL.md §19.7,
/// issue 16): a store before the packet leaves is one write into the page cache, in place, and a
/// store restarted from the directory without a flush (what a kill -9 leaves) still opens what the
/// other end answers. Session 16's deferred store of a new chain failed the second test.
@Suite("end-to-end store: stores on the packet path survive a kill")
struct EndToEndStoreCrashTests {
    static let logger = Logger(label: "e2e-crash") { _ in SwiftLogNoOpLogHandler() }

    /// Alice and carol with stores in one temporary directory.
    struct Pair {
        let directory = TemporaryDirectory("meshchat-e2e-crash")
        let alice: LocalIdentity, carol: LocalIdentity
        var aliceStore: EndToEndStore, carolStore: EndToEndStore
        let carolKeys: PairSessions.PeerKeys
        var packetNumber: UInt8 = 0

        init() throws {
            alice = try LocalIdentity.generate()
            carol = try LocalIdentity.generate()
            aliceStore = EndToEndStore(identity: alice, dataDirectory: directory.appending("alice"), logger: EndToEndStoreCrashTests.logger)
            carolStore = EndToEndStore(identity: carol, dataDirectory: directory.appending("carol"), logger: EndToEndStoreCrashTests.logger)
            let prekey = carolStore.signedPrekey
            carolKeys = PairSessions.PeerKeys(staticKey: carol.staticKey.publicKey, prekeyID: prekey.id,
                                              prekey: try prekey.verified(by: carol.signingKey.publicKey))
        }

        var alicesFile: String { directory.appending("alice/sessions/\(carol.nodeID.hex)") }
        var carolsFile: String { directory.appending("carol/sessions/\(alice.nodeID.hex)") }

        /// A packet alice sealed for carol, not yet opened.
        mutating func aliceSeals(_ text: String) throws -> (Data, SealHeader) {
            packetNumber &+= 1
            let header = SealHeader(origin: alice.nodeID, destination: carol.nodeID, packetID: Data(repeating: packetNumber, count: 16))
            return (try aliceStore.seal(.data(Self.data(text)), displayName: "alice", sealedAtMilliseconds: 1, header: header, peer: carolKeys), header)
        }

        /// A packet carol sealed for alice, not yet opened.
        mutating func carolSeals(_ text: String) throws -> (Data, SealHeader) {
            packetNumber &+= 1
            let header = SealHeader(origin: carol.nodeID, destination: alice.nodeID, packetID: Data(repeating: packetNumber, count: 16))
            return (try carolStore.seal(.data(Self.data(text)), displayName: "carol", sealedAtMilliseconds: 1, header: header, peer: nil), header)
        }

        func carolOpens(_ packet: (Data, SealHeader)) throws -> String {
            try Self.text(carolStore.open(packet.0, header: packet.1, knownStaticKey: alice.staticKey.publicKey).0)
        }

        func aliceOpens(_ packet: (Data, SealHeader)) throws -> String {
            try Self.text(aliceStore.open(packet.0, header: packet.1, knownStaticKey: carol.staticKey.publicKey).0)
        }

        /// Carol's process dies (no flush) and starts again from her directory.
        mutating func killAndRestartCarol() {
            carolStore = EndToEndStore(identity: carol, dataDirectory: directory.appending("carol"), logger: EndToEndStoreCrashTests.logger)
        }

        /// Alice's process dies (no flush) and starts again from her directory.
        mutating func killAndRestartAlice(logger: Logger = EndToEndStoreCrashTests.logger) {
            aliceStore = EndToEndStore(identity: alice, dataDirectory: directory.appending("alice"), logger: logger)
        }

        static func data(_ text: String) -> Meshchat_V1_Data {
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            return data
        }

        static func text(_ payload: SealedPayload) -> String {
            guard case .data(let data) = payload.content else { return "" }
            return String(decoding: data.payload, as: UTF8.self)
        }
    }

    static func inode(_ path: String) -> UInt64 {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    static func sequence(_ path: String) throws -> UInt64? {
        guard case .record(let latest) = SessionFileFormat.decode(try Data(contentsOf: URL(fileURLWithPath: path))) else { return nil }
        return latest.sequence
    }

    @Test("every turn of a ping-pong is stored before its packet leaves, in place: the sequence grows, the file is never replaced")
    func turnsStoredInPlace() throws {
        var pair = try Pair()
        #expect(try pair.carolOpens(pair.aliceSeals("begin")) == "begin")
        #expect(try pair.aliceOpens(pair.carolSeals("reply")) == "reply")
        let (aliceInode, carolInode) = (Self.inode(pair.alicesFile), Self.inode(pair.carolsFile))
        #expect(aliceInode != 0 && carolInode != 0)
        for round in 0..<10 {
            let before = try Self.sequence(pair.alicesFile) ?? 0
            let line = try pair.aliceSeals("a\(round)")
            #expect(try Self.sequence(pair.alicesFile) ?? 0 > before, "alice's turn \(round) was stored before the packet left")
            #expect(try pair.carolOpens(line) == "a\(round)")
            let carolBefore = try Self.sequence(pair.carolsFile) ?? 0
            let reply = try pair.carolSeals("c\(round)")
            #expect(try Self.sequence(pair.carolsFile) ?? 0 > carolBefore, "carol's turn \(round) was stored before the packet left")
            #expect(try pair.aliceOpens(reply) == "c\(round)")
        }
        #expect(Self.inode(pair.alicesFile) == aliceInode && Self.inode(pair.carolsFile) == carolInode, "no store replaced a file")
        #expect(pair.aliceStore.openSessionFiles == 1 && pair.carolStore.openSessionFiles == 1)
    }

    @Test("killed right after sending on a new chain (no flush): the restarted node opens the answer to its new ratchet key, and the next lines")
    func killAfterTurnStaysLive() throws {
        var pair = try Pair()
        #expect(try pair.carolOpens(pair.aliceSeals("begin")) == "begin")
        #expect(try pair.aliceOpens(pair.carolSeals("reply")) == "reply")
        for round in 0..<3 {
            #expect(try pair.carolOpens(pair.aliceSeals("a\(round)")) == "a\(round)")
            // Carol sends on a new chain and is killed the moment it left.
            let reply = try pair.carolSeals("c\(round)")
            pair.killAndRestartCarol()
            #expect(try pair.aliceOpens(reply) == "c\(round)")
            // Alice's answer is on a chain answering carol's new ratchet key.
            #expect(try pair.carolOpens(pair.aliceSeals("answer \(round)")) == "answer \(round)")
            #expect(try pair.aliceOpens(pair.carolSeals("more \(round)")) == "more \(round)")
        }
        // And alice killed likewise.
        let line = try pair.aliceSeals("from alice")
        pair.killAndRestartAlice()
        #expect(try pair.carolOpens(line) == "from alice")
        #expect(try pair.aliceOpens(pair.carolSeals("to restarted alice")) == "to restarted alice")
        #expect(try pair.carolOpens(pair.aliceSeals("and back")) == "and back")
    }

    @Test("a store torn by the kill (the packet never left): the restarted node reads the store before, logs it, and the conversation goes on")
    func tornStoreStaysLive() throws {
        var pair = try Pair()
        #expect(try pair.carolOpens(pair.aliceSeals("begin")) == "begin")
        #expect(try pair.aliceOpens(pair.carolSeals("reply")) == "reply")
        #expect(try pair.carolOpens(pair.aliceSeals("a0")) == "a0")
        let unanswered = try pair.carolSeals("c0")
        #expect(try pair.aliceOpens(unanswered) == "c0")
        // Alice's next store is torn: she died inside the write, so her line never left.
        let file = try Data(contentsOf: URL(fileURLWithPath: pair.alicesFile))
        guard case .record(let before) = SessionFileFormat.decode(file) else { Issue.record("alice's file unreadable"); return }
        _ = try pair.aliceSeals("never left")
        let newest = SessionFileFormat.offset(ofSlot: 1 - before.slot, slotSize: before.slotSize)
        let torn = try Data(contentsOf: URL(fileURLWithPath: pair.alicesFile))
        var cut = Data(torn)
        // The newest record in slot 1 is the file's tail: cut it. In slot 0 (slot 1 after it): damage it.
        if before.slot == 0 { cut = cut.prefix(newest + 40) } else { cut[newest + 40] ^= 1 }
        try cut.write(to: URL(fileURLWithPath: pair.alicesFile))
        let capture = LogCapture()
        pair.killAndRestartAlice(logger: capture.logger(label: "alice"))
        let line = try pair.aliceSeals("after the torn store")
        #expect(capture.all.contains { $0.contains("ignored a torn or damaged") }, "\(capture.all)")
        #expect(try pair.carolOpens(line) == "after the torn store")
        #expect(try pair.aliceOpens(unanswered) == "c0", "the reply she had opened after the store she came back on opens again (the chat retransmits it)")
        #expect(try pair.aliceOpens(pair.carolSeals("c1")) == "c1")
    }

    @Test("sessions stored by session 16 (a whole file of PairSessions bytes) load, and the next store writes the slotted format")
    func oldFormatLoads() throws {
        var pair = try Pair()
        #expect(try pair.carolOpens(pair.aliceSeals("begin")) == "begin")
        #expect(try pair.aliceOpens(pair.carolSeals("reply")) == "reply")
        pair.carolStore.flush()
        let file = try Data(contentsOf: URL(fileURLWithPath: pair.carolsFile))
        guard case .record(let latest) = SessionFileFormat.decode(file) else { Issue.record("carol's file unreadable"); return }
        try latest.payload.write(to: URL(fileURLWithPath: pair.carolsFile))  // as session 16 stored it
        pair.killAndRestartCarol()
        #expect(try pair.carolOpens(pair.aliceSeals("after the upgrade")) == "after the upgrade")
        #expect(try pair.aliceOpens(pair.carolSeals("and back")) == "and back")
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: pair.carolsFile))
        #expect(rewritten.prefix(SessionFileFormat.magic.count).elementsEqual(SessionFileFormat.magic))
    }

    @Test("a damaged file is deleted with a log line and the session begun again; forgetting removes the file and closes it")
    func damagedAndForgotten() throws {
        var pair = try Pair()
        #expect(try pair.carolOpens(pair.aliceSeals("begin")) == "begin")
        try Data(SessionFileFormat.magic + [UInt8](repeating: 0xEE, count: 200)).write(to: URL(fileURLWithPath: pair.alicesFile))
        let capture = LogCapture()
        pair.killAndRestartAlice(logger: capture.logger(label: "alice"))
        _ = try pair.aliceSeals("begun again")
        #expect(capture.all.contains { $0.contains("damaged; it will be begun again") }, "\(capture.all)")
        #expect(try Self.sequence(pair.alicesFile) != nil, "the new session is stored in a new file")
        pair.aliceStore.forgetAll()
        #expect(!FileManager.default.fileExists(atPath: pair.alicesFile) && pair.aliceStore.openSessionFiles == 0)
    }
}
