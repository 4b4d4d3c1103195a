import Foundation
import MeshCore

/// Which key a display name belongs to, as this node learned it (PROTOCOL.md §20.3: trust on first
/// use). Names are claims anyone can make; the book remembers the first node (key) seen under each
/// name, so that another key claiming a known name is a different, flagged peer and never receives
/// what the user addressed by name.
///
/// A value with no I/O: the caller stores it (``encoded``) and feeds it what adverts and handshakes
/// say (``observe(name:node:atMilliseconds:)``). A name passes to another key only through a verified
/// ``KeyRotation`` (``rotate(from:to:)``) or when the user forgets it (``forget(name:)``).
/// Bounded by ``maxNodes``: when full, the node known for the shortest time (then the one seen least
/// recently) is forgotten first, never a verified one, so that a flood of fresh identities evicts
/// only itself.
public struct NameBook: Sendable, Equatable {
    /// How a node's claim to a name stands.
    public enum Standing: Hashable, Sendable {
        /// The name's holder, verified by the user (safety numbers compared).
        case verified
        /// The name's holder (the first key seen under it, or its successor by rotation).
        case holder
        /// Another node holds this name: the claimant is a different peer (shown flagged, reachable
        /// only by its id).
        case newKey(holder: NodeID)
    }

    /// What the book remembers of one node.
    public struct Record: Hashable, Sendable, Codable {
        /// The names this node holds, normalised.
        public var names: Set<String>
        /// Whether the user verified it.
        public var verified: Bool
        /// When it was first and last seen (milliseconds since 1970).
        public var firstSeen: UInt64
        /// When it was last seen.
        public var lastSeen: UInt64

        /// How long it has been known (0 when the clock went backwards).
        var span: UInt64 { lastSeen >= firstSeen ? lastSeen - firstSeen : 0 }
    }

    /// The most nodes remembered.
    public let maxNodes: Int
    /// The most names one node holds: a node that renames itself again and again binds no more
    /// (the further names stay free), so that one node cannot grow the book without bound.
    public static let maxNamesPerNode = 16
    /// Holder of each normalised name.
    private(set) var holders: [String: NodeID] = [:]
    /// What is known of each node.
    public private(set) var records: [NodeID: Record] = [:]
    /// The nodes forgotten to stay within ``maxNodes`` since the last ``takeEvicted()`` (at most
    /// ``maxNodes`` of them are remembered), so that a caller storing the book per node can delete them.
    public private(set) var evicted: [NodeID] = []

    /// An empty book.
    /// - Parameter maxNodes: the most nodes it remembers (at least 1; 10,000 by default).
    public init(maxNodes: Int = 10_000) {
        self.maxNodes = max(1, maxNodes)
    }

    /// The form names are compared in: Unicode canonical composition, then lower case, so that
    /// "Bob" and "bob" (or two encodings of "José") are one name.
    public static func normalised(_ name: String) -> String {
        name.precomposedStringWithCanonicalMapping.lowercased()
    }

    /// Records that `node` appeared under `name` (in a verified advert or a handshake).
    /// - Returns: how its claim stands: the holder (the first key seen under the name is bound to
    ///   it), verified, or a new key when another node holds the name.
    @discardableResult
    public mutating func observe(name: String, node: NodeID, atMilliseconds now: UInt64) -> Standing {
        let key = Self.normalised(name)
        var record = records[node] ?? Record(names: [], verified: false, firstSeen: now, lastSeen: now)
        record.lastSeen = max(record.lastSeen, now)
        if let holder = holders[key], holder != node {
            records[node] = record
            evictIfFull(keeping: node)
            return .newKey(holder: holder)
        }
        if holders[key] == nil, record.names.count < Self.maxNamesPerNode {
            holders[key] = node
            record.names.insert(key)
        }
        records[node] = record
        evictIfFull(keeping: node)
        return record.verified ? .verified : .holder
    }

    /// How `node`'s claim to `name` stands now, without recording anything.
    /// - Returns: `nil` when nobody holds the name yet.
    public func standing(of node: NodeID, name: String) -> Standing? {
        guard let holder = holders[Self.normalised(name)] else { return nil }
        guard holder == node else { return .newKey(holder: holder) }
        return records[node]?.verified == true ? .verified : .holder
    }

    /// The node a name addressed by the user goes to: its holder, never a claimant with another key.
    public func holder(of name: String) -> NodeID? { holders[Self.normalised(name)] }

    /// Whether the user verified `node`.
    public func isVerified(_ node: NodeID) -> Bool { records[node]?.verified ?? false }

    /// Marks a node verified (the user compared the safety number) or not.
    public mutating func setVerified(_ node: NodeID, _ verified: Bool, atMilliseconds now: UInt64) {
        var record = records[node] ?? Record(names: [], verified: false, firstSeen: now, lastSeen: now)
        record.verified = verified
        records[node] = record
        evictIfFull(keeping: node)
    }

    /// Hands everything `old` held (names, verification, first-seen time) to `new`, after the caller
    /// verified a ``KeyRotation`` from `old`'s key to `new`'s.
    public mutating func rotate(from old: NodeID, to new: NodeID) {
        guard old != new, let record = records.removeValue(forKey: old) else { return }
        var merged = records[new] ?? Record(names: [], verified: false, firstSeen: record.firstSeen, lastSeen: record.lastSeen)
        // Within the limit: the new key's own names first, then the old key's in order; the rest are freed.
        for name in record.names.sorted() where !merged.names.contains(name) {
            if merged.names.count < Self.maxNamesPerNode { merged.names.insert(name) } else { holders[name] = nil }
        }
        merged.verified = merged.verified || record.verified
        merged.firstSeen = min(merged.firstSeen, record.firstSeen)
        merged.lastSeen = max(merged.lastSeen, record.lastSeen)
        for name in merged.names { holders[name] = new }
        records[new] = merged
    }

    /// Releases a name (the user decided its holder is gone), so that the next key seen under it
    /// becomes its holder.
    public mutating func forget(name: String) {
        let key = Self.normalised(name)
        guard let holder = holders.removeValue(forKey: key) else { return }
        records[holder]?.names.remove(key)
    }

    private mutating func evictIfFull(keeping kept: NodeID) {
        while records.count > maxNodes {
            let victim = records.filter { $0.key != kept && !$0.value.verified }.min { a, b in
                (a.value.span, a.value.lastSeen) < (b.value.span, b.value.lastSeen)
            }?.key
            guard let victim, let record = records.removeValue(forKey: victim) else { return }
            for name in record.names where holders[name] == victim { holders[name] = nil }
            if evicted.count >= maxNodes { evicted.removeFirst() }
            evicted.append(victim)
        }
    }

    /// The nodes evicted since the last call (see ``evicted``), forgetting them.
    public mutating func takeEvicted() -> [NodeID] {
        defer { evicted = [] }
        return evicted
    }

    // MARK: Storage

    /// Puts back one stored node, checking it (the store may be damaged or edited): at most
    /// ``maxNamesPerNode`` names, each normalised and held by no other node, and room in the book.
    /// - Throws: ``TrustError`` `malformed`; the book is unchanged.
    public mutating func restore(_ node: NodeID, _ record: Record) throws(TrustError) {
        guard records[node] == nil, records.count < maxNodes else {
            throw TrustError(.malformed, "the name book holds node \(node.shortHex) twice, or more than \(maxNodes) nodes")
        }
        guard record.names.count <= Self.maxNamesPerNode else {
            throw TrustError(.malformed, "the name book gives one node \(record.names.count) names (maximum \(Self.maxNamesPerNode))")
        }
        for name in record.names where name != Self.normalised(name) || holders[name] != nil {
            throw TrustError(.malformed, "the name book gives one name to two nodes, or holds an unnormalised name")
        }
        for name in record.names { holders[name] = node }
        records[node] = record
    }

    private struct Stored: Codable {
        var version: Int
        var nodes: [String: Record]
    }

    /// The book as JSON, for the caller to store (it names who the user talks to: keep it private).
    public var encoded: Data {
        let stored = Stored(version: 1, nodes: Dictionary(uniqueKeysWithValues: records.map { ($0.key.hex, $0.value) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(stored)) ?? Data()
    }

    /// Restores a stored book, checking it (the file may be damaged or edited): every node id valid,
    /// every name held by one node only, at most `maxNodes` nodes and ``maxNamesPerNode`` names each.
    /// - Throws: ``TrustError`` `malformed`.
    public init(decoding data: Data, maxNodes: Int = 10_000) throws(TrustError) {
        self.init(maxNodes: maxNodes)
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.version == 1 else {
            throw TrustError(.malformed, "the name book is not a version 1 book")
        }
        guard stored.nodes.count <= self.maxNodes else {
            throw TrustError(.malformed, "the name book holds \(stored.nodes.count) nodes (maximum \(self.maxNodes))")
        }
        for (hex, record) in stored.nodes {
            guard let node = try? NodeID(hex: hex) else { throw TrustError(.malformed, "the name book holds a bad node id") }
            try restore(node, record)
        }
    }
}
