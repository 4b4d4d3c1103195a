import Foundation
import Synchronization

/// JSON lines on stdout (events) and stderr (the ready line, errors), one write per line.
final class Output: Sendable {
    private let lock = Mutex(())

    /// Writes one JSON object as a line; keys sorted, so `event` comes before `from`, `id`, `port`.
    func event(_ fields: [String: any Sendable], toStandardError: Bool = false) {
        guard JSONSerialization.isValidJSONObject(fields),
              var data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0A)
        lock.withLock { _ in
            (toStandardError ? FileHandle.standardError : FileHandle.standardOutput).write(data)
        }
    }

    /// An error line on stdout.
    func error(_ message: String) { event(["event": "error", "message": message]) }
}
