/// A JSON value as ``JSONReader`` reads it: objects keep their members in source order and
/// numbers keep their text.
enum JSONValue {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// "an object", "a string", … for messages.
    var kind: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// The value of the first member named `key`, for an object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Compact JSON text: strings quoted and escaped, numbers as written, members in source order.
    var jsonText: String {
        switch self {
        case .object(let members):
            "{" + members.map { Self.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        case .array(let values): "[" + values.map(\.jsonText).joined(separator: ",") + "]"
        case .string(let s): Self.quoted(s)
        case .number(let text): text
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }

    /// A string as a JSON string literal.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A JSON syntax error at a byte offset.
struct JSONSyntaxError: Error {
    let offset: Int
    let message: String
}

/// A strict RFC 8259 reader over UTF-8 bytes, one value at a time, so a large array can be
/// walked element by element without building the whole document.
///
/// Structure is checked strictly (a syntax error is a ``JSONSyntaxError`` with its byte
/// offset); nesting deeper than ``maxDepth`` is an error rather than a deep recursion. String
/// contents are read leniently: raw control characters are kept, and invalid UTF-8 or a lone
/// surrogate escape becomes U+FFFD and is noted in ``stringFlaw`` (the caller decides what a
/// flawed string means) instead of failing the document.
struct JSONReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0
    private var depth = 0
    /// The first string-content problem since the caller last cleared it.
    var stringFlaw: String?

    /// How deeply arrays and objects may nest.
    static let maxDepth = 512

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { position = 3 }
    }

    var atEnd: Bool { position >= bytes.count }

    /// The next byte after whitespace (not consumed), nil at the end.
    mutating func peek() -> UInt8? {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return bytes[position]
            }
        }
        return nil
    }

    func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? position, message: message)
    }

    /// What is at the current position, for messages.
    private func found() -> String {
        guard position < bytes.count else { return "the end of the input" }
        let b = bytes[position]
        return b >= 0x20 && b < 0x7F ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16))"
    }

    /// Consumes `byte` after whitespace, or fails naming what was expected.
    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        guard peek() == byte else { throw error("expected \(what), found \(found())") }
        position += 1
    }

    /// Consumes `byte` after whitespace when it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        position += 1
        return true
    }

    // MARK: - Values

    /// Reads one value.
    mutating func value() throws(JSONSyntaxError) -> JSONValue {
        guard let b = peek() else { throw error("expected a value, found the end of the input") }
        switch b {
        case UInt8(ascii: "{"):
            try enter()
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            if !consume(UInt8(ascii: "}")) {
                repeat {
                    let key = try string()
                    try expect(UInt8(ascii: ":"), "':' after an object key")
                    members.append((key, try value()))
                } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "}"), "',' or '}' in an object")
            }
            depth -= 1
            return .object(members)
        case UInt8(ascii: "["):
            try enter()
            position += 1
            var values: [JSONValue] = []
            if !consume(UInt8(ascii: "]")) {
                repeat { values.append(try value()) } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "]"), "',' or ']' in an array")
            }
            depth -= 1
            return .array(values)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("expected a value, found \(found())")
        }
    }

    /// Counts one more level of nesting, failing past ``maxDepth``.
    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("arrays and objects nest deeper than \(Self.maxDepth) levels") }
    }

    /// Leaves a level entered with ``enter()`` by a caller that walks an array itself.
    mutating func leave() { depth -= 1 }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let start = position
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              (0..<count).allSatisfy({ bytes[position + $0] == word.utf8Start[$0] })
        else { throw error("expected a value, found \(found())", at: start) }
        position += count
    }

    /// Reads a number and returns its text.
    mutating func number() throws(JSONSyntaxError) -> String {
        let start = position
        func digits() -> Int {
            let from = position
            while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 { position += 1 }
            return position - from
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        if position < bytes.count, bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            throw error("a number has no digits", at: start)
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            if digits() == 0 { throw error("a number has no digits after its decimal point", at: start) }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            if digits() == 0 { throw error("a number has no digits in its exponent", at: start) }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    /// Reads a string (the next token must be one).
    mutating func string() throws(JSONSyntaxError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string, found \(found())") }
        let start = position
        position += 1
        let contentStart = position
        // Fast path: no escapes.
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[contentStart..<position])
                position += 1
                return text(raw)
            }
            if b == UInt8(ascii: "\\") { break }
            position += 1
        }
        guard position < bytes.count else { throw error("a string is not closed before the end of the input", at: start) }
        var out = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[contentStart..<position]))
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                return out.withUnsafeBytes { text($0) }
            }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                position += 1
                continue
            }
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), position + 1 < bytes.count,
                   bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                    let save = position
                    position += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        position = save
                    }
                }
                if let u = Unicode.Scalar(scalar) {
                    out.append(contentsOf: String(Character(u)).utf8)
                } else {
                    noteFlaw("a string has a lone surrogate escape \\u\(String(scalar, radix: 16))")
                    out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                }
            default:
                throw error("invalid escape \\\(Character(Unicode.Scalar(escape))) in a string", at: position - 2)
            }
        }
        throw error("a string is not closed before the end of the input", at: start)
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("a \\u escape needs four hex digits", at: position - 2) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw error("a \\u escape needs four hex digits", at: position)
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func noteFlaw(_ message: String) {
        if stringFlaw == nil { stringFlaw = message }
    }

    /// Text from UTF-8 bytes; invalid UTF-8 becomes U+FFFD and is noted in ``stringFlaw``.
    private mutating func text(_ raw: UnsafeRawBufferPointer) -> String {
        var ascii = true
        for b in raw where b >= 0x80 {
            ascii = false
            break
        }
        if ascii { return String(decoding: raw, as: UTF8.self) }
        if let s = String(validating: raw, as: UTF8.self) { return s }
        noteFlaw("a string is not valid UTF-8")
        return String(decoding: raw, as: UTF8.self)
    }
}

/// Maps byte offsets to 1-based line and column numbers, counting forward from the last
/// offset asked about (so asking in increasing order scans the text once). LF, CRLF and a
/// lone CR each end a line.
struct LineCounter {
    let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var line = 1
    private var lineStart = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The line and byte column of `target` (offsets before the last one asked restart from the top).
    mutating func position(of target: Int) -> (line: Int, column: Int) {
        if target < offset {
            offset = 0
            line = 1
            lineStart = 0
        }
        let end = min(target, bytes.count)
        while offset < end {
            let b = bytes[offset]
            offset += 1
            if b == 0x0A || (b == 0x0D && (offset >= bytes.count || bytes[offset] != 0x0A)) {
                line += 1
                lineStart = offset
            }
        }
        return (line, target - lineStart + 1)
    }
}
