import Foundation
import MeshSession
import MeshTestSupport
import Testing

@Suite("identity and peer ids")
struct IdentityTests {
    @Test("a key is created once (mode 0600) and reused; renaming keeps the id")
    func createdOnceAndReused() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("data")
        let first = try LocalPeer(displayName: "alice", dataDirectory: path)
        let key = try String(contentsOfFile: path + "/identity.json", encoding: .utf8)
        let second = try LocalPeer(displayName: "alice in wonderland", dataDirectory: path)
        #expect(first.peerID.id == second.peerID.id)
        #expect(second.peerID.displayName == "alice in wonderland")
        #expect(try String(contentsOfFile: path + "/identity.json", encoding: .utf8) == key)
        let mode = try FileManager.default.attributesOfItem(atPath: path + "/identity.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        let other = try LocalPeer(displayName: "alice", dataDirectory: directory.appending("other"))
        #expect(other.peerID.id != first.peerID.id)
    }

    @Test("a key file readable by others is refused with the chmod fix")
    func worldReadable() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("data")
        _ = try LocalPeer(displayName: "alice", dataDirectory: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path + "/identity.json")
        #expect {
            _ = try LocalPeer(displayName: "alice", dataDirectory: path)
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .identityFile && error.message.contains("chmod 600")
        }
    }

    @Test("a corrupt key file is a clear error, never replaced")
    func corrupt() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("data")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path + "/identity.json", contents: Data("not json".utf8),
                                       attributes: [.posixPermissions: 0o600])
        #expect {
            _ = try LocalPeer(displayName: "alice", dataDirectory: path)
        } throws: { error in
            (error as? SessionError)?.message.contains("is not valid") == true
        }
        #expect(try String(contentsOfFile: path + "/identity.json", encoding: .utf8) == "not json")
    }

    @Test("display names are 1 to 63 bytes of UTF-8", arguments: [
        ("", false), ("a", true), (String(repeating: "x", count: 63), true), (String(repeating: "x", count: 64), false),
        (String(repeating: "é", count: 31) + "x", true), (String(repeating: "é", count: 32), false),
    ])
    func displayNames(name: String, valid: Bool) throws {
        let directory = TemporaryDirectory()
        if valid {
            #expect(try LocalPeer(displayName: name, dataDirectory: directory.path).peerID.displayName == name)
        } else {
            #expect {
                _ = try LocalPeer(displayName: name, dataDirectory: directory.path)
            } throws: { error in
                (error as? SessionError)?.code == .invalidDisplayName
            }
        }
    }
}
