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

/// A JSON syntax error at a byte offset, or a string over the field limit there.
struct JSONSyntaxError: Error {
    /// The offset in the whole text.
    let offset: Int
    let message: String
    /// Whether this is a string over ``LoadLimits/maxFieldBytes`` rather than bad syntax.
    var tooLarge = false
}

/// A strict RFC 8259 reader over UTF-8 text, one value at a time, so a large array can be
/// walked element by element without building the whole document.
///
/// The text comes through a ``ByteWindow``: the reader keeps the text from ``mark`` on (the
/// caller moves it to the start of each record, such as a feature) and reads more as it needs
/// it. The end of what the window gives is the end of the input; when the window stopped for a
/// failure or a record over the limit, the caller reports that instead of the syntax error that
/// the early end causes. A string longer than ``LoadLimits/maxFieldBytes`` is an error marked
/// ``JSONSyntaxError/tooLarge``.
///
/// Structure is checked strictly (a syntax error is a ``JSONSyntaxError`` with its byte
/// offset); nesting deeper than ``maxDepth`` is an error rather than a deep recursion. String
/// contents are read leniently: raw control characters are kept, and invalid UTF-8 or a lone
/// surrogate escape becomes U+FFFD and is noted in ``stringFlaw`` (the caller decides what a
/// flawed string means) instead of failing the document.
struct JSONReader: WindowReader {
    let window: ByteWindow
    /// The text held (the window's, cached); `position` indexes it.
    var bytes: UnsafeRawBufferPointer
    /// The offset in the whole text of `bytes[0]`.
    var origin: Int
    var position = 0
    private var depth = 0
    private let maxString: Int
    /// The first offset that must stay readable: the start of the current record.
    var mark = 0
    /// The first string-content problem since the caller last cleared it.
    var stringFlaw: String?

    /// How deeply arrays and objects may nest.
    static let maxDepth = 512

    /// - Parameter window: The text, from its start.
    init(_ window: ByteWindow) {
        self.window = window
        window.fill(atLeast: 3)
        bytes = window.bytes
        origin = window.base
        maxString = window.limits.maxFieldBytes
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { position = 3 }
    }

    /// The offset in the whole text of the next byte.
    var offset: Int { origin + position }

    /// The next byte after whitespace (not consumed), nil at the end.
    mutating func peek() -> UInt8? {
        while position < bytes.count || more() {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return bytes[position]
            }
        }
        return nil
    }

    /// Skips whitespace between records: the mark moves along, so none of it is kept, and ends
    /// at the next byte.
    mutating func skipWhitespace() {
        while true {
            if position >= bytes.count {
                mark = offset
                if !more() { return }
            }
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default:
                mark = offset
                return
            }
        }
    }

    /// An error at `offset` in the whole text (default: the position).
    func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? self.offset, message: message)
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
        let count = word.utf8CodeUnitCount
        guard has(count), (0..<count).allSatisfy({ bytes[position + $0] == word.utf8Start[$0] })
        else { throw error("expected a value, found \(found())") }
        position += count
    }

    /// Reads a number and returns its text.
    mutating func number() throws(JSONSyntaxError) -> String {
        let start = offset
        func digits() -> Int {
            let from = offset
            while position < bytes.count || more(), bytes[position] >= 0x30, bytes[position] <= 0x39 { position += 1 }
            return offset - from
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        if has(1), bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            throw error("a number has no digits", at: start)
        }
        if has(1), bytes[position] == UInt8(ascii: ".") {
            position += 1
            if digits() == 0 { throw error("a number has no digits after its decimal point", at: start) }
        }
        if has(1), bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if has(1), bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            if digits() == 0 { throw error("a number has no digits in its exponent", at: start) }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(start - origin)..<position]), as: UTF8.self)
    }

    /// Reads more text inside the string that starts at `start` and has `count` bytes so far,
    /// failing when it is already over the field limit; false at the end of the input.
    private mutating func moreOfString(_ count: Int, from start: Int) throws(JSONSyntaxError) -> Bool {
        try checkLength(count, from: start)
        return more()
    }

    /// Fails when a string (that starts at `start`) of `count` bytes is over the field limit.
    private func checkLength(_ count: Int, from start: Int) throws(JSONSyntaxError) {
        guard count > maxString else { return }
        var tooLong = error("a string is longer than \(maxString) bytes (the limit for one field)", at: start)
        tooLong.tooLarge = true
        throw tooLong
    }

    /// Reads a string (the next token must be one).
    mutating func string() throws(JSONSyntaxError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string, found \(found())") }
        let start = offset
        position += 1
        let contentStart = offset
        // Fast path: no escapes.
        while true {
            if position >= bytes.count { guard try moreOfString(offset - start - 1, from: start) else { break } }
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                try checkLength(position - (contentStart - origin), from: start)
                let raw = UnsafeRawBufferPointer(rebasing: bytes[(contentStart - origin)..<position])
                position += 1
                return text(raw)
            }
            if b == UInt8(ascii: "\\") { break }
            position += 1
        }
        guard position < bytes.count else { throw error("a string is not closed before the end of the input", at: start) }
        var out = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[(contentStart - origin)..<position]))
        while true {
            if position >= bytes.count { guard try moreOfString(out.count, from: start) else { break } }
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                try checkLength(out.count, from: start)
                return out.withUnsafeBytes { text($0) }
            }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                position += 1
                continue
            }
            position += 1
            guard has(1) else { break }
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
                if (0xD800..<0xDC00).contains(scalar), has(2),
                   bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                    let save = offset
                    position += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        position = save - origin
                    }
                }
                if let u = Unicode.Scalar(scalar) {
                    out.append(contentsOf: String(Character(u)).utf8)
                } else {
                    noteFlaw("a string has a lone surrogate escape \\u\(String(scalar, radix: 16))")
                    out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                }
            default:
                throw error("invalid escape \\\(Character(Unicode.Scalar(escape))) in a string", at: offset - 2)
            }
        }
        throw error("a string is not closed before the end of the input", at: start)
    }

    /// Reads four hex digits.
    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard has(4) else { throw error("a \\u escape needs four hex digits", at: offset - 2) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw error("a \\u escape needs four hex digits")
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
