/// The input history's file format (pure; ``save(_:to:)`` and ``load(from:)`` do the I/O).
///
/// UTF-8 text: a first line ``header``, then one entry per line, oldest first, with `\` written
/// `\\`, a line feed `\n` and a carriage return `\r`, so an entry never spans lines. Reading is
/// lenient: a file without the header, an unknown escape or a last line cut short still reads
/// (the file is only ever replaced whole, so a cut can come only from elsewhere).
///
/// Limits: an entry longer than ``maxEntryBytes`` is not written (a pasted page is no line to
/// recall in a later session); a file larger than ``maxFileBytes`` is not read.
public enum InputHistoryFile {
    /// The file's name in the data directory.
    public static let fileName = "input-history"
    /// The first line of the file.
    public static let header = "# meshchat input history 1"
    /// The longest entry written, in bytes of UTF-8: 4 KiB.
    public static let maxEntryBytes = 4_096
    /// The largest file read: 16 MiB (1,000 entries of 4 KiB, every byte escaped, fit).
    public static let maxFileBytes = 16 << 20

    /// The file's text for the entries.
    /// - Parameter entries: the lines, oldest first (already ``InputHistory/forDisk(_:)``).
    /// - Returns: the text.
    public static func encode(_ entries: [String]) -> String {
        var text = header + "\n"
        for entry in entries where entry.utf8.count <= maxEntryBytes {
            for character in entry.unicodeScalars {
                switch character {
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                default: text.unicodeScalars.append(character)
                }
            }
            text += "\n"
        }
        return text
    }

    /// The entries in a file's text.
    /// - Parameter text: the text.
    /// - Returns: the lines, oldest first.
    public static func decode(_ text: String) -> [String] {
        var entries: [String] = []
        for (index, line) in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            if index == 0 && line == header { continue }
            var entry = ""
            var escaped = false
            for scalar in line.unicodeScalars {
                if escaped {
                    switch scalar {
                    case "n": entry += "\n"
                    case "r": entry += "\r"
                    case "\\": entry += "\\"
                    default: entry.unicodeScalars.append(contentsOf: ["\\", scalar])
                    }
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else {
                    entry.unicodeScalars.append(scalar)
                }
            }
            if escaped { entry += "\\" }
            entries.append(entry)
        }
        return entries
    }
}
