import Foundation
import Logging

/// Log lines on stderr that keep clear of the input line: each is written through
/// ``TerminalIO/writeAboveInput(_:)``, so the input line is erased first and drawn again after,
/// as for chat output. The format is swift-log's `StreamLogHandler`'s
/// (`TIMESTAMP LEVEL LABEL: METADATA [SOURCE] MESSAGE`).
///
/// Unless the user asked for a level (`--log-level`, `log_level`), the terminal keeps its chat
/// calm (``quiet``): notices and warnings of the libraries, which a user cannot act on, are not
/// written, and an error is shown as a chat error (`! could not …`: its message only, no time,
/// label or metadata).
///
/// Only for an interactive terminal; scripts and `--json` runs log with `StreamLogHandler` as
/// usual. This type is thread-safe.
public struct TerminalLogHandler: LogHandler {
    /// The lowest level written.
    public var logLevel: Logger.Level
    /// Metadata added to every line.
    public var metadata: Logger.Metadata = [:]
    /// No level was asked for: only errors, as chat errors.
    public let quiet: Bool
    private let label: String
    private let terminal: TerminalIO

    /// Creates a handler.
    /// - Parameters:
    ///   - label: the logger's label.
    ///   - terminal: the terminal whose input line the lines keep clear of.
    ///   - level: the lowest level written (``quiet``: `error` whatever this says).
    ///   - quiet: no level was asked for: only errors, as chat errors.
    public init(label: String, terminal: TerminalIO, level: Logger.Level, quiet: Bool = false) {
        self.label = label
        self.terminal = terminal
        self.quiet = quiet
        self.logLevel = quiet ? max(level, .error) : level
    }

    /// One metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line to stderr, above the input line.
    public func log(event: LogEvent) {
        if quiet {
            guard event.level >= .error else { return }
            let text = Self.sentence("\(event.message)")
            terminal.writeAboveInput { StandardStreams.write(text, to: STDERR_FILENO) }
            return
        }
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let text = Self.format(date: Date(), level: event.level.rawValue, label: label, metadata: merged.mapValues { "\($0)" },
                               source: event.source, message: "\(event.message)")
        terminal.writeAboveInput { StandardStreams.write(text, to: STDERR_FILENO) }
    }

    /// An error as the chat shows one: `! message` on one line, control characters as spaces.
    static func sentence(_ message: String) -> String {
        "! " + String(message.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) }) + "\n"
    }

    /// One line as `StreamLogHandler` writes it, with its newline.
    static func format(date: Date, level: String, label: String, metadata: [String: String], source: String, message: String) -> String {
        let pretty = metadata.isEmpty ? "" : " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let stamp = date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
        return "\(stamp) \(level) \(label):\(pretty) [\(source)] \(message)\n"
    }
}
