/// Names for received files (PROTOCOL.md §16.6): a sender's name made safe to store, and a free
/// name beside the existing files. Pure: existence is asked through a closure.
public enum FileNames {
    /// The name stored when nothing of the offered one is left.
    public static let fallback = "file"

    /// A sender's file name made safe: only its last path component (after `/` or `\`), without
    /// control or format characters (newlines, escapes, bidirectional overrides), without leading
    /// dots and spaces (no hidden files, never `.` or `..`), trimmed, and cut to
    /// ``FileTransferLimits/maxStoredNameBytes`` UTF-8 bytes with its extension kept.
    /// - Parameter offered: the name from the offer.
    /// - Returns: a non-empty name with no path separator.
    public static func sanitised(_ offered: String) -> String {
        let last = offered.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                continue
            default:
                scalars.append(scalar)
            }
        }
        var name = String(scalars)
        while let first = name.first, first == "." || first.isWhitespace { name.removeFirst() }
        while let last = name.last, last.isWhitespace { name.removeLast() }
        if name.isEmpty { return fallback }
        return cut(name, to: FileTransferLimits.maxStoredNameBytes)
    }

    /// The first of `name`, `stem (1).ext`, `stem (2).ext`, … that does not exist.
    /// - Parameters:
    ///   - name: a sanitised name.
    ///   - exists: whether a name is taken in the target directory.
    /// - Returns: a free name (within the byte limit).
    public static func unique(_ name: String, exists: (String) -> Bool) -> String {
        guard exists(name) else { return name }
        let (stem, ext) = split(name)
        var number = 1
        while true {
            let suffix = " (\(number))" + ext
            let candidate = cut(stem, to: FileTransferLimits.maxStoredNameBytes - suffix.utf8.count) + suffix
            if !exists(candidate) { return candidate }
            number += 1
        }
    }

    /// Splits `photo.tar.gz` into `photo.tar` and `.gz`; a name without a dot (or only a leading one) has no extension.
    static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        let ext = String(name[dot...])
        // A long "extension" is part of the name.
        guard ext.utf8.count <= 16 else { return (name, "") }
        return (String(name[..<dot]), ext)
    }

    /// Cuts a name to at most `limit` UTF-8 bytes on a character boundary, keeping its extension.
    static func cut(_ name: String, to limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        let (stem, ext) = split(name)
        var kept = ""
        let room = max(1, limit - ext.utf8.count)
        for character in stem {
            if kept.utf8.count + character.utf8.count > room { break }
            kept.append(character)
        }
        return kept.isEmpty ? fallback : kept + ext
    }
}
