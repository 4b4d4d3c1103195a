import MeshCore

/// What a meshchat peer announces in its DNS-SD TXT record (PROTOCOL.md §12.2): its node id,
/// protocol version and display name, plus the application's discoveryInfo.
///
/// The TXT record holds one `key=value` string per entry:
/// `_id=<32 hex digits>`, `_v=<protocol version>`, `_n=<display name>`, `_s=<cipher suite ids>`
/// (when the advertiser gives them), then the discoveryInfo entries sorted by key. Keys beginning
/// with `_` are reserved for meshchat.
///
/// Limits: each `key=value` string at most 255 bytes (DNS); the discoveryInfo entries together
/// at most ``maxDiscoveryInfoBytes`` bytes as encoded (one length byte per string included); a
/// received record at most ``maxRecordBytes`` bytes. A received record that breaks any rule is
/// refused as a whole with a reason (``decode(_:)``): a missing or malformed id, a duplicate key
/// (keys compare case-insensitively, RFC 6763 §6.4), bytes that are not UTF-8, an oversized record.
public struct Advertisement: Sendable, Hashable {
    /// The largest encoded discoveryInfo: 1,024 bytes.
    public static let maxDiscoveryInfoBytes = 1024
    /// The largest TXT record accepted from the network: 1,300 bytes (one mDNS packet's worth).
    public static let maxRecordBytes = 1300
    /// The largest `key=value` string: 255 bytes.
    public static let maxEntryBytes = 255
    /// The reserved key of the node id.
    public static let idKey = "_id"
    /// The reserved key of the protocol version.
    public static let versionKey = "_v"
    /// The reserved key of the display name.
    public static let nameKey = "_n"
    /// The reserved key of the cipher suites offered (PROTOCOL.md §4.11, §12.2).
    public static let suitesKey = "_s"
    /// The most suite ids a `_s` entry may list (as a hello's offer, PROTOCOL.md §4.11).
    public static let maxSuites = 8

    /// The advertising node.
    public var nodeID: NodeID
    /// The advertiser's display name.
    public var displayName: String
    /// The protocol version the advertiser speaks.
    public var protocolVersion: UInt32
    /// The application's key/value pairs (Multipeer's `discoveryInfo`).
    public var discoveryInfo: [String: String]
    /// The cipher suite ids the advertiser offers on its links, most preferred first (PROTOCOL.md
    /// §4.11); empty when it does not say. A hint for the first handshake message only, so a
    /// malformed `_s` received is read as empty rather than refusing the advertisement.
    public var suites: [UInt8] = []

    /// Creates an advertisement, validating the discoveryInfo.
    /// - Parameters:
    ///   - nodeID: the advertising node.
    ///   - displayName: its display name (1–63 bytes, checked by the caller's `PeerID`).
    ///   - protocolVersion: the protocol version.
    ///   - discoveryInfo: the application's pairs.
    /// - Throws: ``DiscoveryError`` `invalidDiscoveryInfo` naming the key and the rule.
    public init(nodeID: NodeID, displayName: String, protocolVersion: UInt32,
                discoveryInfo: [String: String]) throws(DiscoveryError) {
        try Self.validate(discoveryInfo)
        self.nodeID = nodeID
        self.displayName = displayName
        self.protocolVersion = protocolVersion
        self.discoveryInfo = discoveryInfo
    }

    private init(unchecked nodeID: NodeID, displayName: String, protocolVersion: UInt32, discoveryInfo: [String: String]) {
        self.nodeID = nodeID
        self.displayName = displayName
        self.protocolVersion = protocolVersion
        self.discoveryInfo = discoveryInfo
    }

    /// Checks a discoveryInfo dictionary against the rules above.
    /// - Parameter info: the pairs.
    /// - Throws: ``DiscoveryError`` `invalidDiscoveryInfo` naming the key and the rule.
    public static func validate(_ info: [String: String]) throws(DiscoveryError) {
        var seen: [String: String] = [:]
        var total = 0
        for (key, value) in info.sorted(by: { $0.key < $1.key }) {
            if key.isEmpty { throw .invalidDiscoveryInfo("a key is empty") }
            if key.hasPrefix("_") { throw .invalidDiscoveryInfo("key \"\(key)\" begins with \"_\", which is reserved for meshchat") }
            if let bad = key.utf8.first(where: { $0 < 0x20 || $0 > 0x7E || $0 == UInt8(ascii: "=") }) {
                let what = bad == UInt8(ascii: "=") ? "\"=\"" : "byte 0x" + String(bad, radix: 16)
                throw .invalidDiscoveryInfo("key \"\(key)\" contains \(what) (keys are printable ASCII without \"=\")")
            }
            if let other = seen[key.lowercased()] {
                throw .invalidDiscoveryInfo("keys \"\(other)\" and \"\(key)\" are the same key (TXT keys ignore case)")
            }
            seen[key.lowercased()] = key
            let size = key.utf8.count + 1 + value.utf8.count
            if size > maxEntryBytes {
                throw .invalidDiscoveryInfo("\"\(key)=…\" is \(size) bytes; each key=value may be at most \(maxEntryBytes)")
            }
            total += size + 1
        }
        if total > maxDiscoveryInfoBytes {
            throw .invalidDiscoveryInfo("the entries take \(total) bytes; the maximum is \(maxDiscoveryInfoBytes)")
        }
    }

    /// The TXT strings, reserved keys first, then the discoveryInfo sorted by key.
    public var txt: [[UInt8]] {
        var strings: [[UInt8]] = [
            Array("\(Self.idKey)=\(nodeID.hex)".utf8),
            Array("\(Self.versionKey)=\(protocolVersion)".utf8),
            Array("\(Self.nameKey)=\(displayName)".utf8),
        ]
        if !suites.isEmpty {
            strings.append(Array("\(Self.suitesKey)=\(suites.prefix(Self.maxSuites).map(String.init).joined(separator: ","))".utf8))
        }
        for (key, value) in discoveryInfo.sorted(by: { $0.key < $1.key }) {
            strings.append(Array("\(key)=\(value)".utf8))
        }
        return strings
    }

    /// Decodes a received TXT record.
    /// - Parameter txt: the strings as received.
    /// - Returns: the advertisement.
    /// - Throws: ``DiscoveryError`` `invalidAdvertisement` naming what was wrong.
    public static func decode(_ txt: [[UInt8]]) throws(DiscoveryError) -> Advertisement {
        let size = txt.reduce(0) { $0 + 1 + $1.count }
        if size > maxRecordBytes {
            throw .invalidAdvertisement("TXT record of \(size) bytes exceeds the maximum \(maxRecordBytes)")
        }
        var pairs: [String: String] = [:]
        var keysSeen: Set<String> = []
        for (index, string) in txt.enumerated() where !string.isEmpty {
            if string.count > maxEntryBytes {
                throw .invalidAdvertisement("TXT string \(index + 1) is \(string.count) bytes; the maximum is \(maxEntryBytes)")
            }
            let split = string.firstIndex(of: UInt8(ascii: "=")) ?? string.endIndex
            let keyBytes = string[..<split]
            let valueBytes = split == string.endIndex ? [] : string[(split + 1)...]
            guard !keyBytes.isEmpty else { throw .invalidAdvertisement("TXT string \(index + 1) has an empty key") }
            guard keyBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw .invalidAdvertisement("TXT string \(index + 1) has a key that is not printable ASCII")
            }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard keysSeen.insert(key.lowercased()).inserted else {
                throw .invalidAdvertisement("TXT key \"\(key)\" appears more than once")
            }
            guard let value = String(validating: valueBytes, as: UTF8.self) else {
                throw .invalidAdvertisement("the value of TXT key \"\(key)\" is not UTF-8")
            }
            pairs[key] = value
        }
        guard let idText = pairs.removeValue(forKey: idKey) else {
            throw .invalidAdvertisement("the TXT record has no \(idKey) (node id) entry")
        }
        let id: NodeID
        do { id = try NodeID(hex: idText) } catch {
            throw .invalidAdvertisement("\(idKey) \"\(idText.prefix(40))\" is not a node id (32 hex digits)")
        }
        guard let versionText = pairs.removeValue(forKey: versionKey), let version = UInt32(versionText) else {
            throw .invalidAdvertisement("the TXT record has no valid \(versionKey) (protocol version) entry")
        }
        guard let name = pairs.removeValue(forKey: nameKey), PeerID.displayNameProblem(name) == nil else {
            throw .invalidAdvertisement("the TXT record has no valid \(nameKey) (display name, 1–63 bytes) entry")
        }
        let suites = pairs.removeValue(forKey: suitesKey).flatMap(Self.suites(decoding:)) ?? []
        // Unknown reserved keys are from a later version: ignored (PROTOCOL.md §12.2).
        let info = pairs.filter { !$0.key.hasPrefix("_") }
        var advertisement = Advertisement(unchecked: id, displayName: name, protocolVersion: version, discoveryInfo: info)
        advertisement.suites = suites
        return advertisement
    }

    /// Reads a `_s` value: 1 to ``maxSuites`` decimal ids from 1 to 255 separated by commas, none
    /// twice (PROTOCOL.md §12.2). Anything else is `nil`: the hint is dropped, the record kept.
    /// - Parameter value: the value as received.
    /// - Returns: the ids in the advertiser's order, or `nil`.
    static func suites(decoding value: String) -> [UInt8]? {
        let parts = value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard (1...maxSuites).contains(parts.count) else { return nil }
        var ids: [UInt8] = []
        for part in parts {
            // At most three ASCII digits, so the conversion below cannot overflow an Int.
            guard (1...3).contains(part.count), part.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            let number = part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard let id = UInt8(exactly: number), id != 0, !ids.contains(id) else { return nil }
            ids.append(id)
        }
        return ids
    }
}
