import Crypto
import Foundation
import MeshLink
import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// Replacing the identity kept in a data directory (PROTOCOL.md §20.2).
@Suite("identity rotation on disk")
struct IdentityRotationTests {
    @Test("rotate: new keys (0600), the old private key gone, a statement both keys signed that the next start carries")
    func rotated() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("data")
        let before = try LocalPeer(displayName: "bob", dataDirectory: path)
        let oldPrivate = before.identity.signingKey.rawRepresentation.base64EncodedString()
        let statement = try LocalPeer.rotateIdentity(in: path, nowMilliseconds: 1_800_000_000_000)
        let after = try LocalPeer(displayName: "bob", dataDirectory: path)
        #expect(after.peerID.id != before.peerID.id)
        #expect(statement.oldKey == before.identity.signingKey.publicKey.rawRepresentation)
        #expect(statement.newKey == after.identity.signingKey.publicKey.rawRepresentation)
        #expect(throws: Never.self) { _ = try statement.verified() }
        #expect(after.identity.rotations.count == 1)
        #expect(after.identity.rotations.first?.oldSignature == statement.oldSignature)
        for file in ["identity.json", "rotations.json"] {
            let mode = try FileManager.default.attributesOfItem(atPath: path + "/" + file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        // No file in the directory still holds the old private key.
        for file in try FileManager.default.contentsOfDirectory(atPath: path) {
            let text = (try? String(contentsOfFile: path + "/" + file, encoding: .utf8)) ?? ""
            #expect(!text.contains(oldPrivate), "\(file)")
        }
        // A second rotation: the chain, newest first.
        _ = try LocalPeer.rotateIdentity(in: path, nowMilliseconds: 1_800_000_000_001)
        let third = try LocalPeer(displayName: "bob", dataDirectory: path)
        #expect(third.identity.rotations.map(\.newKey) == [third.identity.signingKey.publicKey.rawRepresentation,
                                                          after.identity.signingKey.publicKey.rawRepresentation])
    }

    @Test("a statement for keys never stored (a crash between the two writes) is not carried")
    func strayStatement() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("data")
        _ = try LocalPeer(displayName: "bob", dataDirectory: path)
        let key = try String(contentsOfFile: path + "/identity.json", encoding: .utf8)
        _ = try LocalPeer.rotateIdentity(in: path, nowMilliseconds: 1)
        // Put the old key back: the statement now names a successor this directory does not hold.
        try Data(key.utf8).write(to: URL(fileURLWithPath: path + "/identity.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + "/identity.json")
        let restarted = try LocalPeer(displayName: "bob", dataDirectory: path)
        #expect(restarted.identity.rotations.isEmpty)
    }

    @Test("rotating a directory without a key file is refused")
    func noKey() {
        let directory = TemporaryDirectory()
        #expect(throws: SessionError.self) { _ = try LocalPeer.rotateIdentity(in: directory.appending("empty"), nowMilliseconds: 1) }
    }
}
