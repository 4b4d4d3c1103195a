import Foundation
import MeshChatKit
import MeshTestSupport
import Testing

/// The data directory's lock, taken twice in one process (flock locks belong to the open file,
/// so a second open conflicts just as a second process does).
@Suite("data directory lock")
struct DataDirectoryLockTests {
    @Test("a second lock on the same directory is refused, naming the directory, the holder and --data-dir")
    func secondIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("node")
        var first: DataDirectoryLock? = try DataDirectoryLock(directory: path)
        #expect(first?.directory == path)
        #expect(FileManager.default.fileExists(atPath: path + "/lock"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "/lock")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        do {
            _ = try DataDirectoryLock(directory: path)
            Issue.record("a second lock on \(path) was granted")
        } catch {
            #expect(error.isHeld)
            #expect(error.description.contains(path))
            #expect(error.description.contains("process \(getpid())"))
            #expect(error.description.contains("--data-dir"))
        }
        // Another directory is free, and the first lock's end frees its directory.
        _ = try DataDirectoryLock(directory: directory.appending("other"))
        first = nil
        _ = try DataDirectoryLock(directory: path)
    }
}
