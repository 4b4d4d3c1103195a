import Foundation
import MeshChatKit
import MeshTestSupport
import Testing

/// The data directory's lock, taken twice in one process (flock locks belong to the open file,
/// so a second open conflicts just as a second process does).
@Suite("data directory lock")
struct DataDirectoryLockTests {
    @Test("a second lock on the same directory is refused, naming the directory, the holder and --data-dir")
    func secondIsRefused() async throws {
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
        // A child another test is forking at this moment holds a copy of the lock's file
        // description until its exec closes it (O_CLOEXEC), so the lock frees within moments.
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                _ = try DataDirectoryLock(directory: path)
                break
            } catch {
                guard error.isHeld, ContinuousClock.now < deadline else { throw error }
                try? await Task.sleep(for: .milliseconds(20))  // polling a lock with a deadline
            }
        }
    }
}
