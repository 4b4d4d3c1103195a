import Foundation

/// A JSON value whose objects keep their keys in the order they were written, so every event
/// line starts with `"event"` (RFC 8259 output, UTF-8, no insignificant whitespace).
public indirect enum JSONValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral
{
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A finite number with a fraction, written in the shortest form that reads back exactly (`null` when not finite).
    case double(Double)
    /// A boolean.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object with ordered keys.
    case object([(String, JSONValue)])

    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// Equality by structure and key order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized == rhs.serialized }
    /// Hashes the serialized form.
    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }

    /// The value as one line of JSON.
    public var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .string(let text): Self.writeString(text, into: &out)
        case .int(let number): out += String(number)
        case .double(let number): out += number.isFinite ? "\(number)" : "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    /// Whether a string holds a byte JSON output escapes: C's `strcspn` scans it (a debug build's
    /// byte loop over a 22 MB line took most of a second).
    private static func needsEscaping(_ text: String) -> Bool {
        text.withCString { pointer in
            // A NUL stops strcspn early: then the string needs escaping (NUL is a control character).
            strcspn(pointer, Self.escapedBytes) != text.utf8.count
        }
    }

    /// Every byte that needs escaping or starts U+2028/U+2029 (0xE2), NUL-terminated for `strcspn`.
    private static let escapedBytes: [CChar] = (Array(1..<0x20) + [0x22, 0x5c, 0x7f, 0xe2, 0]).map { CChar(bitPattern: $0) }

    private static func writeString(_ text: String, into out: inout String) {
        out += "\""
        // Fast path: nothing to escape (a 16 MiB data event's base64 is written in one append,
        // not scalar by scalar). 0xE2 may start U+2028 or U+2029; other non-ASCII passes as is.
        if !needsEscaping(text) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
