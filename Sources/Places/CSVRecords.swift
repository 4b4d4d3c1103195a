/// One CSV record: its fields and the 1-based line it starts on.
struct CSVRecord {
    var line: Int
    var fields: [String]
}

/// An RFC 4180 reader over UTF-8 bytes.
///
/// Handles quoted fields (with `""` escapes and embedded separators and line breaks), LF,
/// CRLF and lone CR line ends, a UTF-8 byte-order mark, and a missing final line end.
/// Blank lines are skipped. A field that is not valid UTF-8, or a quote left open at the
/// end of input, makes the record a problem rather than a record.
struct CSVRecords {
    private let bytes: [UInt8]
    private let separator: UInt8
    private var position: Int
    private var line = 1

    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - separator: The field separator (one ASCII byte).
    init(bytes: [UInt8], separator: UInt8) {
        self.bytes = bytes
        self.separator = separator
        position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    /// The next record, a problem for a malformed one, or nil at the end of input.
    mutating func next() -> Result<CSVRecord, LoadProblem>? {
        // Skip blank lines.
        while position < bytes.count, bytes[position] == 0x0A || bytes[position] == 0x0D {
            consumeLineEnd()
        }
        guard position < bytes.count else { return nil }
        let startLine = line
        var fields: [String] = []
        var field: [UInt8] = []
        var badUTF8: Int?
        func finishField() {
            if let s = String(validating: field, as: UTF8.self) {
                fields.append(s)
            } else {
                if badUTF8 == nil { badUTF8 = fields.count + 1 }
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
        }
        var quoted = false
        var fieldStart = true
        while position < bytes.count {
            let b = bytes[position]
            if quoted {
                if b == 0x22 {
                    if position + 1 < bytes.count, bytes[position + 1] == 0x22 {
                        field.append(0x22)
                        position += 2
                    } else {
                        quoted = false
                        position += 1
                    }
                } else {
                    if b == 0x0A || (b == 0x0D && !(position + 1 < bytes.count && bytes[position + 1] == 0x0A)) {
                        line += 1
                    }
                    field.append(b)
                    position += 1
                }
                continue
            }
            if b == 0x22 && fieldStart {
                quoted = true
                fieldStart = false
                position += 1
            } else if b == separator {
                finishField()
                fieldStart = true
                position += 1
            } else if b == 0x0A || b == 0x0D {
                consumeLineEnd()
                break
            } else {
                // A quote inside an unquoted field is kept as a literal (lenient, like most readers).
                field.append(b)
                fieldStart = false
                position += 1
            }
        }
        if quoted {
            return .failure(LoadProblem(line: startLine, message: "quoted field opened on line \(startLine) is not closed before the end of the file"))
        }
        finishField()
        if let column = badUTF8 {
            return .failure(LoadProblem(line: startLine, message: "field \(column) is not valid UTF-8"))
        }
        return .success(CSVRecord(line: startLine, fields: fields))
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
