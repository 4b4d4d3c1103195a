/// A configuration file that could not be used: it names the file, the line (and column, for
/// syntax errors) and the key, as `FILE:LINE: key "port": 70000 is out of range; use 0 to 65535`.
///
/// Equality compares ``code``, ``line`` and ``key``; ``message`` is for people.
public struct ConfigFileError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// The text is not TOML (TOMLKit's message and position).
        case syntax
        /// A key this program does not know (a typo is never ignored).
        case unknownKey
        /// A value of the wrong TOML type (a string where a number belongs…).
        case wrongType
        /// A value of the right type that is not allowed (a port over 65535, a bad name…).
        case invalidValue
        /// The file given with `--config` does not exist.
        case missing
        /// The file cannot be read, or is larger than ``ConfigFile/maxBytes``.
        case unreadable
    }

    /// What kind of failure this is.
    public let code: Code
    /// The file.
    public let file: String
    /// The line (from 1), when known.
    public let line: Int?
    /// The column (from 1) of a syntax error.
    public let column: Int?
    /// The key (dotted for a key in a table, `info.room`), when one is at fault.
    public let key: String?
    /// What is wrong, without the file and line.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: the kind.
    ///   - file: the file.
    ///   - line: the line, when known.
    ///   - column: the column, when known.
    ///   - key: the key at fault.
    ///   - message: what is wrong.
    public init(_ code: Code, file: String, line: Int? = nil, column: Int? = nil, key: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    /// `FILE:LINE[:COLUMN]: [key "KEY": ]MESSAGE`.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let line, let column, line > 0 { place += ":\(column)" }
        let subject = key.map { "key \"\($0)\": " } ?? ""
        return "\(place): \(subject)\(message)"
    }
}

extension ConfigFileError: Hashable {
    /// Compares ``code``, ``line`` and ``key``.
    public static func == (lhs: ConfigFileError, rhs: ConfigFileError) -> Bool {
        lhs.code == rhs.code && lhs.line == rhs.line && lhs.key == rhs.key
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(line)
        hasher.combine(key)
    }
}
