import Crypto
import Foundation
import MeshLink

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes the key file `identity.json` in the data directory (PROTOCOL.md §2.1).
///
/// The file holds the Ed25519 identity key and the X25519 static key as base64 of their raw
/// private bytes. It is created with mode 0600, only when none exists (never overwritten), and
/// refused when other users can read it — the same rule ssh applies to private keys.
struct IdentityStore {
    static let fileName = "identity.json"
    let directory: String

    var path: String { (directory as NSString).appendingPathComponent(Self.fileName) }

    private struct FileFormat: Codable {
        var version: Int
        var identityKey: String
        var staticKey: String
    }

    func loadOrCreate() throws(SessionError) -> LocalIdentity {
        try ensureDirectory()
        if FileManager.default.fileExists(atPath: path) {
            return try load()
        }
        let identity: LocalIdentity
        do {
            identity = try LocalIdentity.generate()
        } catch {
            throw .identityFile("could not generate keys: \(error)")
        }
        let created = try create(identity)
        // Another process may have created the file first: then its keys win.
        return created ? identity : try load()
    }

    private func ensureDirectory() throws(SessionError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .identityFile("data directory \(directory) is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .identityFile("could not create data directory \(directory): \(error.localizedDescription)")
        }
    }

    private func load() throws(SessionError) -> LocalIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .identityFile("could not read \(path): \(String(cString: strerror(errno)))") }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw .identityFile("key file \(path) is readable by other users (mode \(String(mode, radix: 8))); run: chmod 600 \(path)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .identityFile("could not read \(path): \(error.localizedDescription)")
        }
        let file: FileFormat
        do {
            file = try JSONDecoder().decode(FileFormat.self, from: data)
        } catch {
            throw .identityFile("key file \(path) is not valid: \(error)")
        }
        guard file.version == 1 else {
            throw .identityFile("key file \(path) has version \(file.version); this meshchat reads version 1")
        }
        guard let signing = Data(base64Encoded: file.identityKey), let agreement = Data(base64Encoded: file.staticKey) else {
            throw .identityFile("key file \(path) holds keys that are not base64")
        }
        do {
            return try LocalIdentity(
                signingKey: .init(rawRepresentation: signing),
                staticKey: .init(rawRepresentation: agreement))
        } catch {
            throw .identityFile("key file \(path) holds invalid keys: \(error)")
        }
    }

    /// Writes a new key file atomically with mode 0600; `false` when one appeared meanwhile.
    private func create(_ identity: LocalIdentity) throws(SessionError) -> Bool {
        let file = FileFormat(
            version: 1,
            identityKey: identity.signingKey.rawRepresentation.base64EncodedString(),
            staticKey: identity.staticKey.rawRepresentation.base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes = (try? encoder.encode(file)) ?? Data()
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .identityFile("could not create \(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        defer { unlink(temporary) }
        guard written == bytes.count, synced == 0 else {
            throw .identityFile("could not write \(temporary): \(String(cString: strerror(errno)))")
        }
        // link(2) fails with EEXIST instead of replacing: a key is created only where none exists.
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw .identityFile("could not create \(path): \(String(cString: strerror(errno)))")
        }
        return true
    }
}
