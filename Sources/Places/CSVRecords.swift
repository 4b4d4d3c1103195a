/// One CSV record: its fields' bytes (unquoted and unescaped, one after another) and the
/// 1-based line it starts on. Reused from record to record to avoid allocating per row.
struct CSVRecord {
    var line = 0
    /// Every field's bytes, concatenated.
    var bytes: [UInt8] = []
    /// Where each field ends in ``bytes``; field `i` starts where field `i − 1` ends.
    var ends: [Int] = []
    /// Whether any byte is outside ASCII (only then can a field be invalid UTF-8).
    var hasNonASCII = false

    var count: Int { ends.count }

    func range(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    /// Field `i` as a string, or nil when it is not valid UTF-8.
    func string(_ i: Int) -> String? {
        let r = range(i)
        return bytes.withUnsafeBufferPointer { b in
            let field = UnsafeBufferPointer(rebasing: b[r])
            return hasNonASCII ? String(validating: field, as: UTF8.self) : String(decoding: field, as: UTF8.self)
        }
    }

    /// Field `i` without leading and trailing spaces and tabs, as a string (for numbers).
    func trimmedString(_ i: Int) -> String {
        var r = range(i)
        while let first = r.first, bytes[first] == 0x20 || bytes[first] == 0x09 { r = (first + 1)..<r.upperBound }
        while let last = r.last, bytes[last] == 0x20 || bytes[last] == 0x09 { r = r.lowerBound..<last }
        return String(decoding: bytes[r], as: UTF8.self)
    }

    /// The 1-based number of the first field that is not valid UTF-8, if any.
    func firstInvalidField() -> Int? {
        guard hasNonASCII else { return nil }
        return (0..<count).first { string($0) == nil }.map { $0 + 1 }
    }

    mutating func reset(line: Int) {
        self.line = line
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        hasNonASCII = false
    }
}

/// An RFC 4180 reader over UTF-8 bytes.
///
/// Handles quoted fields (with `""` escapes and embedded separators and line breaks), LF,
/// CRLF and lone CR line ends, a UTF-8 byte-order mark, and a missing final line end.
/// Blank lines are skipped. A quote inside an unquoted field is kept as a literal (lenient,
/// like most readers). A quote left open at the end of input makes the record a problem.
struct CSVRecords {
    private let bytes: UnsafeRawBufferPointer
    private let separator: UInt8
    private var position: Int
    private var line = 1

    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - separator: The field separator (one ASCII byte).
    init(bytes: UnsafeRawBufferPointer, separator: UInt8) {
        self.bytes = bytes
        self.separator = separator
        position = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// Reads the next record into `record`: true when one was read, false at the end of
    /// input; a problem for a quoted field never closed.
    mutating func next(into record: inout CSVRecord) -> Result<Bool, LoadProblem> {
        // Skip blank lines.
        while position < bytes.count, bytes[position] == 0x0A || bytes[position] == 0x0D {
            consumeLineEnd()
        }
        guard position < bytes.count else { return .success(false) }
        record.reset(line: line)
        var quoted = false
        var fieldStart = true
        var nonASCII: UInt8 = 0
        while position < bytes.count {
            let b = bytes[position]
            if quoted {
                if b == 0x22 {
                    if position + 1 < bytes.count, bytes[position + 1] == 0x22 {
                        record.bytes.append(0x22)
                        position += 2
                    } else {
                        quoted = false
                        position += 1
                    }
                } else {
                    if b == 0x0A || (b == 0x0D && !(position + 1 < bytes.count && bytes[position + 1] == 0x0A)) {
                        line += 1
                    }
                    nonASCII |= b
                    record.bytes.append(b)
                    position += 1
                }
                continue
            }
            if b == 0x22 && fieldStart {
                quoted = true
                fieldStart = false
                position += 1
            } else if b == separator {
                record.ends.append(record.bytes.count)
                fieldStart = true
                position += 1
            } else if b == 0x0A || b == 0x0D {
                consumeLineEnd()
                break
            } else {
                nonASCII |= b
                record.bytes.append(b)
                fieldStart = false
                position += 1
            }
        }
        record.hasNonASCII = nonASCII >= 0x80
        if quoted {
            let start = record.line
            return .failure(LoadProblem(line: start, message: "quoted field opened on line \(start) is not closed before the end of the file"))
        }
        record.ends.append(record.bytes.count)
        return .success(true)
    }

    private mutating func consumeLineEnd() {
        if bytes[position] == 0x0D, position + 1 < bytes.count, bytes[position + 1] == 0x0A {
            position += 2
        } else {
            position += 1
        }
        line += 1
    }
}
