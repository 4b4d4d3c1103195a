import Foundation

extension ConfigFile {
    /// Reads and parses a configuration file.
    /// - Parameters:
    ///   - path: the file (`--config`), or `nil` for ``defaultPath(environment:)``.
    ///   - environment: the process environment (`XDG_CONFIG_HOME`, `HOME`).
    /// - Returns: the file's settings, or empty settings when no `--config` was given and the
    ///   default file does not exist.
    /// - Throws: ``ConfigFileError``: `missing` when the file given with `--config` does not
    ///   exist, `unreadable`, or what ``parse(_:file:home:)`` throws.
    public static func load(path: String?, environment: [String: String]) throws(ConfigFileError) -> ChatSettings {
        let file = path ?? defaultPath(environment: environment)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            if path == nil { return ChatSettings() }
            throw ConfigFileError(.missing, file: file, message: "no such file (--config names a file that must exist; "
                                  + "without --config, \(defaultPath(environment: environment)) is read when it exists)")
        }
        guard !isDirectory.boolValue else { throw ConfigFileError(.unreadable, file: file, message: "is a directory, not a file") }
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw ConfigFileError(.unreadable, file: file, message: "cannot be opened for reading (check its permissions)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            throw ConfigFileError(.unreadable, file: file, message: "cannot be read: \(error.localizedDescription)")
        }
        guard data.count <= maxBytes else {
            throw ConfigFileError(.unreadable, file: file, message: "is larger than \(maxBytes) bytes; a configuration file is a few lines")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigFileError(.unreadable, file: file, message: "is not UTF-8 text (TOML files are UTF-8)")
        }
        return try parse(text, file: file, home: environment["HOME"] ?? NSHomeDirectory())
    }
}
