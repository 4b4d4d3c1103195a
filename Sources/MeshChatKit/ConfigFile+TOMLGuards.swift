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

extension ConfigFile {
    /// Where, outside strings and comments, text that toml++ asserts on in `parse_value()` is:
    /// a 10-character value shaped like a date (`2020-01-01`) followed by a space, one digit and
    /// the end of the value (`x = 2020-01-01 1`: toml++ reads on in case it is a date-time), or a
    /// `}` where an array expects a value (`x = [}`, `x = [1, }`). Neither is ever valid TOML
    /// (a time has colons; a `}` closes no array), so such text is refused here first.
    /// - Parameter text: the file's text.
    /// - Returns: the 1-based line and column of the digit or the `}`, and what is wrong, or `nil`.
    static func valueTomlAssertsOn(in text: String) -> (line: Int, column: Int, problem: String)? {
        let s = Array(text.unicodeScalars)
        // toml++'s value terminators; its whitespace also has U+180E, U+200B, U+2060 and U+FEFF.
        func ends(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace || "]},#\u{180E}\u{200B}\u{2060}\u{FEFF}".unicodeScalars.contains(c) }
        var i = 0, line = 1, lineStart = 0
        var quote: (mark: Unicode.Scalar, triple: Bool)?
        var tokenStart: Int?
        var keyEnded = false
        var last: Unicode.Scalar?  // the last character outside strings and comments, not a blank
        while i < s.count {
            let c = s[i]
            if quote == nil, c == "}", last == "[" || last == "," {
                return (line, i + 1 - lineStart, "\"}\" where an array expects a value")
            }
            if quote == nil, !c.properties.isWhitespace, c != "#" { last = c }
            if let open = quote {
                if c == "\\" && open.mark == "\"" {
                    i += 2
                    continue
                }
                if c == open.mark && (!open.triple || (i + 2 < s.count && s[i + 1] == c && s[i + 2] == c)) {
                    quote = nil
                    i += open.triple ? 3 : 1
                    continue
                }
                if c == "\n" {
                    (line, lineStart) = (line + 1, i + 1)
                    if !open.triple { quote = nil }
                }
                i += 1
                continue
            }
            if c == "#" {
                while i < s.count && s[i] != "\n" { i += 1 }
                continue
            }
            if (c == "\"" || c == "'") && tokenStart == nil {  // within a bare value, a quote is part of it
                let triple = i + 2 < s.count && s[i + 1] == c && s[i + 2] == c
                quote = (c, triple)
                tokenStart = nil
                i += triple ? 3 : 1
                continue
            }
            if ends(c) {
                if let start = tokenStart, c == " ", i + 2 < s.count, ("0"..."9").contains(s[i + 1]), ends(s[i + 2]) {
                    let chars = s[start..<i].filter { $0 != "_" }
                    if chars.count == 10, ("0"..."9").contains(chars[0]), chars[4] == "-", chars[7] == "-" {
                        return (line, i + 2 - lineStart, "a date followed by a space needs a time (HH:MM:SS)")
                    }
                }
                tokenStart = nil
                if c == "\n" { (line, lineStart, keyEnded) = (line + 1, i + 1, false) }
            } else if c == "=" && !keyEnded {
                tokenStart = nil  // the value starts after the key's "="; a later one is part of it
                keyEnded = true
            } else if tokenStart == nil && c != "[" && c != "{" {
                tokenStart = i
            }
            i += 1
        }
        return nil
    }
}
