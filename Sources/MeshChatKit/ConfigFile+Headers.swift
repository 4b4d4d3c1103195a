extension ConfigFile {
    /// Where a line opens a table header (`[` or `[[`, after optional spaces, and a byte order mark on
    /// the first line) whose key does not start with a letter, a digit, `_`, `-` or a quote: `[é]`,
    /// `[=`, a lone `[`.
    ///
    /// toml++ (under TOMLKit) asserts rather than report such a header (`parse_key()`: an abort in
    /// a debug build, undefined behaviour in a release one), so the file is refused here first,
    /// with the place. meshchat's keys are all top-level, so a file with any table is refused
    /// anyway ("unknown key").
    /// - Parameter text: the file's text.
    /// - Returns: the 1-based line and column of the character that cannot start the key, or `nil`.
    static func badTableHeader(in text: String) -> (line: Int, column: Int)? {
        // By scalars: "\r\n" is one Character, and toml++ ends lines at "\n" either way.
        for (number, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let scalars = Array(line)
            // toml++ skips a byte order mark at the start of the file.
            var i = number == 0 && scalars.first == "\u{FEFF}" ? 1 : 0
            func skipBlanks() { while i < scalars.count, scalars[i] == " " || scalars[i] == "\t" { i += 1 } }
            skipBlanks()
            guard i < scalars.count, scalars[i] == "[" else { continue }
            i += 1
            if i < scalars.count, scalars[i] == "[" { i += 1 }
            skipBlanks()
            let next = i < scalars.count ? scalars[i] : "\n"
            let startsKey = next.isASCII && (next.properties.isAlphabetic || ("0"..."9").contains(next) || "_-\"']".unicodeScalars.contains(next))
            if !startsKey { return (number + 1, i + 1) }
        }
        return nil
    }
}
