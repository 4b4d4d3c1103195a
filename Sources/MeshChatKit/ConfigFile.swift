import Foundation
import Logging
import MeshDiscovery
import MeshFiles
import Places
import TOMLKit

/// The configuration file: TOML at `$XDG_CONFIG_HOME/meshchat/config.toml` (else
/// `~/.config/meshchat/config.toml`), or the file given with `--config`.
///
/// ```toml
/// name = "alice"
/// service = "meshchat"
/// places = ["~/maps/london.geojson.gz", "cities.csv"]   # or one string
/// location = "51.5074,-0.1278"
/// hop_limit = 7
/// connect = "192.0.2.7:7000"                           # or a list; or a connection code "meshchat:…"
/// discovery = true
/// [info]
/// room = "blue"
/// ```
///
/// ``parse(_:file:home:)`` is pure: it reads the text with TOMLKit, checks every key against
/// ``keys`` (an unknown key is an error listing the known ones, so a typo is never silently
/// ignored), checks each value's type and range with the same rules as the command line, and
/// resolves paths (`places`, `data_dir`): `~/` is the home directory, and a relative path is
/// relative to the file's own directory. Every error is a ``ConfigFileError`` naming the file,
/// the line and the key. ``load(path:explicit:environment:)`` reads the file.
public enum ConfigFile {
    /// The largest configuration file read: 1 MiB.
    public static let maxBytes = 1 << 20

    /// One key the file may hold.
    public struct Key: Sendable, Hashable {
        /// The key as written in the file.
        public let name: String
        /// What its value must be, for errors and for the README.
        public let expects: String
    }

    /// Every key the file may hold, in the order `meshchat --help` lists the options.
    public static let keys: [Key] = [
        Key(name: "name", expects: "a string of 1 to 63 bytes (your display name)"),
        Key(name: "port", expects: "an integer from 0 to 65535 (0 picks a free port)"),
        Key(name: "connect", expects: "a string \"HOST:PORT\" or a connection code \"meshchat:…\", or a list of them"),
        Key(name: "data_dir", expects: "a string: a directory"),
        Key(name: "hop_limit", expects: "an integer from 1 to 32"),
        Key(name: "service", expects: "a string of 1 to 15 lowercase letters, digits and hyphens"),
        Key(name: "discovery", expects: "true or false"),
        Key(name: "manual", expects: "true or false"),
        Key(name: "info", expects: "a table of strings (KEY = \"VALUE\")"),
        Key(name: "places", expects: "a string (a place data file) or a list of them"),
        Key(name: "location", expects: "a string \"LAT,LON\" in decimal degrees"),
        Key(name: "downloads", expects: "a string: the directory received files go to"),
        Key(name: "max_file_size", expects: "the largest file accepted from a peer: bytes, or a string such as \"4GiB\" or \"500MiB\" (at most 16 GiB)"),
        Key(name: "bell", expects: "true or false (ring the terminal's bell on a mention or a private line; default true)"),
        Key(name: "presence", expects: "\"summary\" (a burst of peers coming and going is one line; the default), \"all\" (a line each) or \"none\""),
        Key(name: "mentions", expects: "a string or a list of strings: words besides your name that mention you (at most 32, 1 to 63 characters each)"),
        Key(name: "log_level", expects: "one of " + Logger.Level.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")),
    ]

    /// Where the configuration file is when `--config` is not given.
    /// - Parameter environment: the process environment (`XDG_CONFIG_HOME`, `HOME`).
    /// - Returns: `$XDG_CONFIG_HOME/meshchat/config.toml` when that variable is an absolute
    ///   path (as the XDG specification requires), else `$HOME/.config/meshchat/config.toml`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/meshchat/config.toml" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/meshchat/config.toml"
    }

    /// Reads the settings of a configuration file's text.
    /// - Parameters:
    ///   - text: the file's text.
    ///   - file: the file's path: named in errors, and the base of relative paths in it.
    ///   - home: the home directory, for paths starting with `~/`.
    /// - Returns: the settings the file gives (the others `nil`).
    /// - Throws: ``ConfigFileError`` for the first problem in the file's order.
    public static func parse(_ text: String, file: String, home: String) throws(ConfigFileError) -> ChatSettings {
        if let (line, column) = badTableHeader(in: text) {
            throw ConfigFileError(.syntax, file: file, line: line, column: column,
                                  message: "not valid TOML: a table header's key must start with a letter, a digit, _, - or a quote")
        }
        if let (line, column, problem) = valueTomlAssertsOn(in: text) {
            throw ConfigFileError(.syntax, file: file, line: line, column: column, message: "not valid TOML: \(problem)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigFileError(.syntax, file: file, line: error.source.begin.line, column: error.source.begin.column,
                                  message: "not valid TOML: \(error.description)")
        } catch {
            throw ConfigFileError(.syntax, file: file, message: "not valid TOML: \(error)")
        }
        let lines = KeyLines(text)
        var reader = Reader(file: file, lines: lines, base: (file as NSString).deletingLastPathComponent, home: home)
        // Unknown keys first, so that a typo is reported even when a known key is also wrong.
        let known = Set(keys.map(\.name))
        let unknown = table.keys.filter { !known.contains($0) }.sorted { (lines[$0] ?? .max, $0) < (lines[$1] ?? .max, $1) }
        if let key = unknown.first {
            var message = "unknown key"
            if let near = closest(to: key, among: keys.map(\.name)) { message += " (did you mean \"\(near)\"?)" }
            message += "; the known keys are " + keys.map(\.name).sorted().joined(separator: ", ")
            throw reader.error(.unknownKey, key, message)
        }
        var settings = ChatSettings()
        for key in table.keys.sorted(by: { (lines[$0] ?? .max, $0) < (lines[$1] ?? .max, $1) }) {
            guard let value = table[key] else { continue }
            try reader.read(key, value, into: &settings)
        }
        return settings
    }

    /// A known key within `maxEdits` edits (two by default) of `key`, for "did you mean".
    static func closest(to key: String, among names: [String], maxEdits: Int = 2) -> String? {
        let best = names.map { ($0, editDistance(Array(key.lowercased()), Array($0))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= maxEdits else { return nil }
        return best.0
    }

    /// Levenshtein distance.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension ConfigFile {
    /// Checks values and turns them into settings.
    private struct Reader {
        let file: String
        let lines: KeyLines
        let base: String
        let home: String

        func error(_ code: ConfigFileError.Code, _ key: String, _ message: String) -> ConfigFileError {
            ConfigFileError(code, file: file, line: lines[key], key: key, message: message)
        }

        func read(_ key: String, _ value: any TOMLValueConvertible, into settings: inout ChatSettings) throws(ConfigFileError) {
            switch key {
            case "name":
                let name = try string(key, value)
                guard !name.utf8.isEmpty, name.utf8.count <= 63 else {
                    throw error(.invalidValue, key, "\"\(name.prefix(70))\" is \(name.utf8.count) bytes; a name is 1 to 63 bytes of UTF-8")
                }
                settings.name = name
            case "port":
                settings.port = try integer(key, value, in: 0...65535, "0 to 65535 (0 picks a free port)")
            case "hop_limit":
                settings.hopLimit = try integer(key, value, in: 1...32, "1 to 32")
            case "service":
                let service = try string(key, value)
                if let problem = ServiceType.problem(service) {
                    throw error(.invalidValue, key, "\"\(service.prefix(40))\" is not a service type: \(problem)")
                }
                settings.service = service
            case "discovery":
                settings.discovery = try bool(key, value)
            case "manual":
                settings.manual = try bool(key, value)
            case "bell":
                settings.bell = try bool(key, value)
            case "presence":
                let text = try string(key, value)
                guard let mode = PresenceMode(rawValue: text) else {
                    throw error(.invalidValue, key, "\"\(text.prefix(40))\" is not summary, all or none")
                }
                settings.presence = mode
            case "mentions":
                let words = try strings(key, value)
                guard words.count <= Attention.maxWords else {
                    throw error(.invalidValue, key, "\(words.count) words; at most \(Attention.maxWords)")
                }
                if let bad = words.firstIndex(where: { $0.trimmingWhitespace().isEmpty || $0.count > Attention.maxWordCharacters }) {
                    throw error(.invalidValue, key, "word \(bad + 1) is empty or longer than \(Attention.maxWordCharacters) characters")
                }
                settings.mentions = words.map { $0.trimmingWhitespace() }
            case "data_dir":
                let directory = try string(key, value)
                guard !directory.isEmpty else { throw error(.invalidValue, key, "the directory is empty") }
                settings.dataDirectory = resolve(directory)
            case "downloads":
                let directory = try string(key, value)
                guard !directory.isEmpty else { throw error(.invalidValue, key, "the directory is empty") }
                settings.downloads = resolve(directory)
            case "max_file_size":
                let parsed: UInt64?
                if value.type == .string, let text = value.string {
                    parsed = FileTransferLimits.size(parsing: text)
                } else if value.type == .int, let number = value.int {
                    parsed = number > 0 ? FileTransferLimits.size(parsing: String(number)) : nil
                } else {
                    throw wrongType(key, value)
                }
                guard let parsed else {
                    throw error(.invalidValue, key, "not a size from 1 byte to 16 GiB (write bytes, or e.g. \"4GiB\", \"500MiB\")")
                }
                settings.maxFileSize = parsed
            case "places":
                let files = try strings(key, value)
                if let empty = files.firstIndex(of: "") { throw error(.invalidValue, key, "file \(empty + 1) is empty") }
                settings.places = files.map(resolve)
            case "connect":
                let addresses = try strings(key, value)
                for address in addresses {
                    do {
                        _ = try PeerAddress.parse(address)
                    } catch let problem {
                        throw error(.invalidValue, key, problem.message)
                    }
                }
                settings.connect = addresses
            case "location":
                let text = try string(key, value)
                do {
                    settings.location = try Coordinate(parsing: text)
                } catch let problem {
                    throw error(.invalidValue, key, "\(problem.message) (write \"LAT,LON\" in decimal degrees, e.g. \"51.5074,-0.1278\")")
                }
            case "log_level":
                let text = try string(key, value)
                guard let level = Logger.Level(rawValue: text.lowercased()) else {
                    throw error(.invalidValue, key, "\"\(text.prefix(40))\" is not a log level; use one of "
                                + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
                }
                settings.logLevel = level
            case "info":
                settings.info = try info(key, value)
            default:
                throw error(.unknownKey, key, "unknown key")
            }
        }

        func typeName(_ value: any TOMLValueConvertible) -> String {
            switch value.type {
            case .table: "a table"
            case .array: "a list"
            case .string: "a string"
            case .int: "an integer"
            case .double: "a floating-point number"
            case .bool: "a boolean"
            case .date: "a date"
            case .time: "a time"
            case .dateTime: "a date-time"
            }
        }

        func expects(_ key: String) -> String {
            ConfigFile.keys.first { $0.name == key }?.expects ?? "another type"
        }

        func wrongType(_ key: String, _ value: any TOMLValueConvertible) -> ConfigFileError {
            error(.wrongType, key, "expected \(expects(key)), found \(typeName(value))")
        }

        func string(_ key: String, _ value: any TOMLValueConvertible) throws(ConfigFileError) -> String {
            guard value.type == .string, let text = value.string else { throw wrongType(key, value) }
            return text
        }

        func bool(_ key: String, _ value: any TOMLValueConvertible) throws(ConfigFileError) -> Bool {
            guard value.type == .bool, let flag = value.bool else { throw wrongType(key, value) }
            return flag
        }

        func integer(_ key: String, _ value: any TOMLValueConvertible, in range: ClosedRange<Int>, _ wording: String) throws(ConfigFileError) -> Int {
            guard value.type == .int, let number = value.int else { throw wrongType(key, value) }
            guard range.contains(number) else { throw error(.invalidValue, key, "\(number) is out of range; use \(wording)") }
            return number
        }

        /// One string, or a list of strings.
        func strings(_ key: String, _ value: any TOMLValueConvertible) throws(ConfigFileError) -> [String] {
            if value.type == .string, let text = value.string { return [text] }
            guard value.type == .array, let array = value.array else { throw wrongType(key, value) }
            var texts: [String] = []
            for (index, element) in array.enumerated() {
                guard element.type == .string, let text = element.string else {
                    throw error(.wrongType, key, "item \(index + 1) of the list is \(typeName(element)); expected \(expects(key))")
                }
                texts.append(text)
            }
            return texts
        }

        func info(_ key: String, _ value: any TOMLValueConvertible) throws(ConfigFileError) -> [String: String] {
            guard value.type == .table, let table = value.table else { throw wrongType(key, value) }
            var pairs: [String: String] = [:]
            for name in table.keys {
                guard let element = table[name] else { continue }
                let dotted = "\(key).\(name)"
                guard element.type == .string, let text = element.string else {
                    throw error(.wrongType, dotted, "expected a string, found \(typeName(element))")
                }
                pairs[name] = text
            }
            do {
                try Advertisement.validate(pairs)
            } catch let problem {
                throw error(.invalidValue, key, problem.message)
            }
            return pairs
        }

        /// `~/x` in the home directory; a relative path from the file's directory.
        func resolve(_ path: String) -> String {
            if path == "~" { return home }
            if path.hasPrefix("~/") { return home + path.dropFirst(1) }
            if path.hasPrefix("/") || base.isEmpty { return path }
            return (base as NSString).appendingPathComponent(path)
        }
    }
}

/// The line on which each key is set, found by scanning the text (TOMLKit reports positions
/// for syntax errors only): `KEY = …` before any table header, `[KEY]` headers, and `KEY = …`
/// inside a table as `TABLE.KEY`. Lines inside multi-line strings are skipped.
struct KeyLines {
    private var lines: [String: Int] = [:]

    init(_ text: String) {
        var table: String?
        var openString: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            if let delimiter = openString {
                if raw.contains(delimiter) { openString = nil }
                continue
            }
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                let name = line.drop { $0 == "[" }.prefix { $0 != "]" }
                let path = Self.unquoted(String(name))
                table = path
                note(path, number)
                if let first = path.split(separator: ".").first { note(String(first), number) }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = Self.unquoted(String(line[..<equals]))
            let full = table.map { "\($0).\(key)" } ?? key
            note(full, number)
            if let first = full.split(separator: ".").first { note(String(first), number) }
            let value = line[line.index(after: equals)...]
            for delimiter in ["\"\"\"", "'''"] where value.components(separatedBy: delimiter).count == 2 {
                openString = delimiter
            }
        }
    }

    private mutating func note(_ key: String, _ line: Int) {
        if lines[key] == nil { lines[key] = line }
    }

    /// `"a b" . c` → `a b.c`.
    private static func unquoted(_ key: String) -> String {
        key.split(separator: ".").map { part in
            var piece = part.trimmingCharacters(in: .whitespaces)
            if piece.count >= 2, let first = piece.first, (first == "\"" || first == "'"), piece.last == first {
                piece = String(piece.dropFirst().dropLast())
            }
            return piece
        }.joined(separator: ".")
    }

    /// The line on which `key` is set (dotted for a table's key).
    subscript(_ key: String) -> Int? { lines[key] }
}
