/// A validated Multipeer service type such as `meshchat`, published as `_meshchat._tcp`.
///
/// The rules are Multipeer Connectivity's (and DNS-SD's, RFC 6763 §7.2): 1–15 characters of
/// lowercase ASCII letters, digits and hyphens, with at least one letter, no hyphen at either end
/// and no two hyphens together.
public struct ServiceType: Sendable, Hashable, CustomStringConvertible {
    /// The maximum length in characters.
    public static let maxLength = 15

    /// The service type as given, e.g. `meshchat`.
    public let name: String

    /// Validates a service type.
    /// - Parameter name: e.g. `meshchat`.
    /// - Throws: ``DiscoveryError`` `invalidServiceType` naming the rule that is broken.
    public init(_ name: String) throws(DiscoveryError) {
        if let problem = Self.problem(name) { throw .invalidServiceType(name, problem) }
        self.name = name
    }

    /// The DNS-SD type for TCP, e.g. `_meshchat._tcp`.
    public var dnsType: String { "_\(name)._tcp" }

    /// The name.
    public var description: String { name }

    /// Why `name` is not a valid service type, or `nil` when it is.
    /// - Parameter name: a candidate service type.
    /// - Returns: a sentence naming the first rule broken.
    public static func problem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "it is empty (1–\(maxLength) characters are required)" }
        if bytes.count > maxLength { return "it has \(bytes.count) characters; the maximum is \(maxLength)" }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): continue
            default:
                return "only lowercase ASCII letters, digits and hyphens are allowed"
            }
        }
        if !bytes.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) {
            return "it needs at least one letter"
        }
        if bytes.first == UInt8(ascii: "-") || bytes.last == UInt8(ascii: "-") {
            return "it may not begin or end with a hyphen"
        }
        if name.contains("--") { return "it may not contain two hyphens together" }
        return nil
    }
}
