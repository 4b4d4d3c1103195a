import Foundation

/// A JSON value whose objects keep their keys in the order given, for writing golden vector files
/// that read top-down (`description` first) in the style of `Protocol/vectors/`.
///
/// `JSONEncoder` either sorts keys or emits them in hash order; vector files are meant to be read
/// by people, so the generators build an `OrderedJSON` and ``rendered`` prints it with two-space
/// indentation and `"key": value` members. Non-ASCII text is written as UTF-8, not escaped.
///
/// ```swift
/// let json: OrderedJSON = .keyed(["description": "a vector", "bytes": .string("00ff")])
/// try json.rendered.write(to: url, atomically: true, encoding: .utf8)
/// ```
public indirect enum OrderedJSON: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral
{
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int64)
    /// `true` or `false`.
    case bool(Bool)
    /// An array.
    case array([OrderedJSON])
    /// An object whose members keep this order.
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: OrderedJSON

        /// Creates a member.
        /// - Parameters:
        ///   - key: the key.
        ///   - value: the value.
        public init(_ key: String, _ value: OrderedJSON) {
            self.key = key
            self.value = value
        }
    }

    /// An object from key–value pairs, in order.
    /// - Parameter members: the members.
    /// - Returns: the object.
    public static func keyed(_ members: KeyValuePairs<String, OrderedJSON>) -> OrderedJSON {
        .object(members.map { Member($0.key, $0.value) })
    }

    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// The value as pretty-printed JSON text ending in a newline.
    public var rendered: String {
        var out = ""
        write(into: &out, indent: 0)
        out.append("\n")
        return out
    }

    private func write(into out: inout String, indent: Int) {
        let pad = String(repeating: " ", count: indent + 2)
        let closingPad = String(repeating: " ", count: indent)
        switch self {
        case .string(let text): Self.writeString(text, into: &out)
        case .integer(let value): out.append(String(value))
        case .bool(let value): out.append(value ? "true" : "false")
        case .array(let items):
            guard !items.isEmpty else { out.append("[]"); return }
            out.append("[\n")
            for (index, item) in items.enumerated() {
                out.append(pad)
                item.write(into: &out, indent: indent + 2)
                out.append(index == items.count - 1 ? "\n" : ",\n")
            }
            out.append(closingPad + "]")
        case .object(let members):
            guard !members.isEmpty else { out.append("{}"); return }
            out.append("{\n")
            for (index, member) in members.enumerated() {
                out.append(pad)
                Self.writeString(member.key, into: &out)
                out.append(": ")
                member.value.write(into: &out, indent: indent + 2)
                out.append(index == members.count - 1 ? "\n" : ",\n")
            }
            out.append(closingPad + "}")
        }
    }

    private static func writeString(_ text: String, into out: inout String) {
        out.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }
}
