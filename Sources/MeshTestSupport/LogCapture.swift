import Logging
import NIOConcurrencyHelpers

/// Log lines kept in memory (one node's, in a test), printed only when a test fails.
///
/// A bounded buffer: past ``capacity`` lines the oldest go. This type is thread-safe.
public final class LogCapture: Sendable {
    /// The most lines kept.
    public let capacity: Int
    private let lines = NIOLockedValueBox<[String]>([])

    /// Creates an empty capture.
    /// - Parameter capacity: the most lines kept (oldest dropped first).
    public init(capacity: Int = 5000) {
        self.capacity = capacity
    }

    /// Every line kept, oldest first.
    public var all: [String] { lines.withLockedValue { $0 } }

    /// A logger writing into this capture.
    /// - Parameters:
    ///   - label: the logger's label (shown on each line).
    ///   - level: the lowest level kept.
    /// - Returns: the logger.
    public func logger(label: String, level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, capture: self) }
        logger.logLevel = level
        return logger
    }

    func append(_ line: String) {
        lines.withLockedValue { lines in
            if lines.count >= capacity { lines.removeFirst(lines.count - capacity + 1) }
            lines.append(line)
        }
    }

    struct Handler: LogHandler {
        let label: String
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let (level, message, extra) = (event.level, event.message, event.metadata)
            let merged = metadata.merging(extra ?? [:]) { _, new in new }
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.append("\(level) \(label): \(message)\(fields.isEmpty ? "" : " [\(fields)]")")
        }
    }
}
