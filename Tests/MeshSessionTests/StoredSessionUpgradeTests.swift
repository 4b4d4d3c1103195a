import Crypto
import Foundation
import Logging
import MeshLink
import MeshRatchet
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// A node upgraded from protocol version 5 finds sessions stored with version 5's HMAC chain keys
/// (PROTOCOL.md §19.3, §19.7): it refuses them, deletes the file, and the session is begun again;
/// nothing is opened or sealed with a chain key under the other derivation.
@Suite("stored sessions across the version 6 upgrade")
struct StoredSessionUpgradeTests {
    static let logger = Logger(label: "upgrade") { _ in SwiftLogNoOpLogHandler() }

    /// The stored pair file with each session's ratchet state marked as version 5 wrote it (its
    /// version byte 1; the layout is the same, §19.7).
    static func markedAsVersionFive(_ stored: Data) throws -> Data {
        var bytes = [UInt8](stored)
        #expect(bytes[0] == 1, "PairSessions' own version")
        var offset = 2
        for _ in 0..<Int(bytes[1]) {
            offset += 8 + 32
            let flags = bytes[offset]
            offset += 1
            if flags & 1 != 0 { offset += 4 + 32 + 32 }
            if flags & 2 != 0 { offset += 32 + 4 }
            let length = bytes[offset ..< offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            #expect(bytes[offset] == 2, "a version 6 ratchet state")
            bytes[offset] = 1
            offset += length
        }
        #expect(offset == bytes.count)
        return Data(bytes)
    }

    @Test("a restart finds version 5's stored sessions: they are refused and deleted, the next packet on them is an unknown session (repair), and a new session opens")
    func versionFiveSessionsBegunAgain() throws {
        let directory = TemporaryDirectory("meshchat-upgrade")
        let alice = try LocalIdentity.generate(), carol = try LocalIdentity.generate()
        let aliceStore = EndToEndStore(identity: alice, dataDirectory: directory.appending("alice"), logger: Self.logger)
        var carolStore = EndToEndStore(identity: carol, dataDirectory: directory.appending("carol"), logger: Self.logger)
        let prekey = carolStore.signedPrekey
        let carolKeys = PairSessions.PeerKeys(staticKey: carol.staticKey.publicKey, prekeyID: prekey.id,
                                              prekey: try prekey.verified(by: carol.signingKey.publicKey))
        var packetNumber: UInt8 = 0
        func line(_ text: String, fresh: Bool = false) throws -> (Data, SealHeader) {
            packetNumber += 1
            var data = Meshchat_V1_Data()
            data.payload = Data(text.utf8)
            let header = SealHeader(origin: alice.nodeID, destination: carol.nodeID, packetID: Data(repeating: packetNumber, count: 16))
            return (try aliceStore.seal(.data(data), displayName: "alice", sealedAtMilliseconds: 1, header: header,
                                        peer: carolKeys, fresh: fresh), header)
        }
        func opened(_ packet: (Data, SealHeader)) throws -> String {
            let (payload, _) = try carolStore.open(packet.0, header: packet.1, knownStaticKey: alice.staticKey.publicKey)
            guard case .data(let data) = payload.content else { return "" }
            return String(decoding: data.payload, as: UTF8.self)
        }
        #expect(try opened(line("before the upgrade")) == "before the upgrade")
        // Carol answers, so that alice's session is established and she sends session messages (§19.6).
        var reply = Meshchat_V1_Data()
        reply.payload = Data("hi".utf8)
        let back = SealHeader(origin: carol.nodeID, destination: alice.nodeID, packetID: Data(repeating: 0xEE, count: 16))
        let answer = try carolStore.seal(.data(reply), displayName: "carol", sealedAtMilliseconds: 1, header: back, peer: nil)
        _ = try aliceStore.open(answer, header: back, knownStaticKey: carol.staticKey.publicKey)
        let queued = try line("sealed before the upgrade, read after it")
        #expect(queued.0.first == RatchetPacket.sessionKind)
        carolStore.flush()
        let path = directory.appending("carol/sessions/\(alice.nodeID.hex)")
        // Written as version 5's nodes stored it: the whole file one PairSessions record (the format
        // up to session 16, which a node still reads).
        guard case .record(let stored) = SessionFileFormat.decode(try Data(contentsOf: URL(fileURLWithPath: path))) else {
            Issue.record("carol's sessions file is not in the slotted format")
            return
        }
        try Self.markedAsVersionFive(stored.payload).write(to: URL(fileURLWithPath: path))

        // Carol restarts on the version 5 file.
        carolStore = EndToEndStore(identity: carol, dataDirectory: directory.appending("carol"), logger: Self.logger)
        let error = #expect(throws: EndToEndError.self) { try opened(queued) }
        #expect(error?.code == .unknownSession, "an unknown session asks for a repair (§19.7): \(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: path), "the version 5 file is deleted")
        // Alice's repair (here: a fresh session on carol's prekey, which carol kept) opens.
        #expect(try opened(line("after the upgrade", fresh: true)) == "after the upgrade")
        #expect(try opened(line("and the next")) == "and the next")
    }
}
