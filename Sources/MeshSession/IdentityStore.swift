import Crypto
import Foundation
import MeshLink
import MeshTrust
import MeshWire

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
///
/// A node that replaced its key (``rotate(nowMilliseconds:)``, PROTOCOL.md §20.2) keeps the
/// statements in `rotations.json` beside it (mode 0600, newest first); loading keeps those that
/// lead to the current key, which the node then carries in its adverts and handshakes.
struct IdentityStore {
    static let fileName = "identity.json"
    static let rotationsFileName = "rotations.json"
    /// The largest `rotations.json` read.
    static let maxRotationsFileBytes = 64 * 1024
    let directory: String

    var path: String { (directory as NSString).appendingPathComponent(Self.fileName) }
    var rotationsPath: String { (directory as NSString).appendingPathComponent(Self.rotationsFileName) }

    private struct StoredRotation: Codable {
        var oldKey: Data
        var newKey: Data
        var issuedMs: UInt64
        var oldSignature: Data
        var newSignature: Data
    }

    private struct RotationsFile: Codable {
        var version: Int
        var rotations: [StoredRotation]
    }

    private struct FileFormat: Codable {
        var version: Int
        var identityKey: String
        var staticKey: String
    }

    func loadOrCreate() throws(SessionError) -> LocalIdentity {
        try ensureDirectory()
        if FileManager.default.fileExists(atPath: path) {
            return try loadWithRotations()
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

    /// Replaces the identity with fresh keys (PROTOCOL.md §20.2): signs the statement with the old and
    /// the new key, stores it (with the earlier ones, at most ``WireLimits/maxKeyRotations``) and then
    /// the new keys in place of the old, each written atomically with mode 0600, so the old private key
    /// is gone once the statement that hands its name on is safe. A crash in between leaves the old
    /// keys and a statement for keys that were never stored, which loading ignores.
    /// - Parameter nowMilliseconds: the wall clock, the statement's issue time.
    /// - Returns: the retired and the new identity (with its statements).
    /// - Throws: ``SessionError`` `identityFile` when there is no key file or it cannot be replaced.
    func rotate(nowMilliseconds: UInt64) throws(SessionError) -> (old: LocalIdentity, new: LocalIdentity) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw .identityFile("there is no key file \(path) to replace")
        }
        let old = try loadWithRotations()
        var new: LocalIdentity
        let statement: KeyRotation
        do {
            new = try LocalIdentity.generate()
            statement = try KeyRotation(retiring: old.signingKey, for: new.signingKey, issuedAtMilliseconds: nowMilliseconds)
        } catch {
            throw .identityFile("could not make new keys: \(error)")
        }
        new.rotations = Array(([statement.payload] + old.rotations).prefix(WireLimits.maxKeyRotations))
        let stored = RotationsFile(version: 1, rotations: new.rotations.map {
            StoredRotation(oldKey: $0.oldKey, newKey: $0.newKey, issuedMs: $0.issuedMs, oldSignature: $0.oldSignature, newSignature: $0.newSignature)
        })
        try replace(rotationsPath, with: Self.encode(stored))
        try replace(path, with: Self.encode(Self.file(of: new)))
        return (old, new)
    }

    private func loadWithRotations() throws(SessionError) -> LocalIdentity {
        var identity = try load()
        guard FileManager.default.fileExists(atPath: rotationsPath) else { return identity }
        let data: Data
        let file: RotationsFile
        do {
            // Four statements take about 1 KB; a larger file is damaged or not ours to trust whole.
            guard let handle = FileHandle(forReadingAtPath: rotationsPath) else {
                throw SessionError.identityFile("could not open \(rotationsPath)")
            }
            defer { try? handle.close() }
            data = try handle.read(upToCount: Self.maxRotationsFileBytes + 1) ?? Data()
            guard data.count <= Self.maxRotationsFileBytes else {
                throw SessionError.identityFile("over \(Self.maxRotationsFileBytes) bytes")
            }
            file = try JSONDecoder().decode(RotationsFile.self, from: data)
        } catch {
            throw .identityFile("key rotation file \(rotationsPath) is not valid: \(error)")
        }
        guard file.version == 1 else {
            throw .identityFile("key rotation file \(rotationsPath) has version \(file.version); this meshchat reads version 1")
        }
        // Only the statements that lead to this key count (a crash may have left one for keys never stored).
        var expected = identity.signingKey.publicKey.rawRepresentation
        var chain: [KeyRotationPayload] = []
        for stored in file.rotations.prefix(WireLimits.maxKeyRotations + 1) {
            let statement = KeyRotation(oldKey: stored.oldKey, newKey: stored.newKey, issuedAtMilliseconds: stored.issuedMs,
                                        oldSignature: stored.oldSignature, newSignature: stored.newSignature)
            if chain.isEmpty, statement.newKey != expected { continue }
            guard statement.newKey == expected, (try? statement.verified()) != nil else { break }
            chain.append(statement.payload)
            expected = statement.oldKey
        }
        identity.rotations = Array(chain.prefix(WireLimits.maxKeyRotations))
        return identity
    }

    private static func file(of identity: LocalIdentity) -> FileFormat {
        FileFormat(version: 1, identityKey: identity.signingKey.rawRepresentation.base64EncodedString(),
                   staticKey: identity.staticKey.rawRepresentation.base64EncodedString())
    }

    private static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(value)) ?? Data()
    }

    /// Writes a file atomically with mode 0600 in place of the old one: a temporary file, synced,
    /// renamed over it, then the directory synced.
    private func replace(_ target: String, with bytes: Data) throws(SessionError) {
        let temporary = try writeTemporary(bytes, for: target)
        guard rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .identityFile("could not write \(target): \(reason)")
        }
        let directoryFD = open(directory, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Writes `bytes` to a new temporary file beside `target` (mode 0600) and syncs it.
    /// - Returns: its path; the caller links or renames it into place.
    private func writeTemporary(_ bytes: Data, for target: String) throws(SessionError) -> String {
        let temporary = target + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .identityFile("could not create \(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .identityFile("could not write \(temporary): \(reason)")
        }
        return temporary
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
        let temporary = try writeTemporary(Self.encode(Self.file(of: identity)), for: path)
        defer { unlink(temporary) }
        // link(2) fails with EEXIST instead of replacing: a key is created only where none exists.
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw .identityFile("could not create \(path): \(String(cString: strerror(errno)))")
        }
        return true
    }
}
