import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Folded place names laid out for prefix and substring search.
///
/// `buffer` is every key, each preceded by a 0 byte (keys never contain 0), so a substring
/// scan is one `memmem` walk over the whole table; `sorted` lists place indices by key
/// bytes (then name, then index) for prefix lookups by binary search.
struct NameTable: Sendable {
    private let buffer: [UInt8]
    private let starts: [Int]
    private let ends: [Int]
    private let sorted: [Int32]

    init(_ names: [String]) {
        var buffer: [UInt8] = []
        var starts: [Int] = []
        var ends: [Int] = []
        starts.reserveCapacity(names.count)
        ends.reserveCapacity(names.count)
        for name in names {
            buffer.append(0)
            starts.append(buffer.count)
            buffer.append(contentsOf: Self.keyBytes(name))
            ends.append(buffer.count)
        }
        buffer.append(0)
        self.buffer = buffer
        self.starts = starts
        self.ends = ends
        sorted = (0..<Int32(names.count)).sorted { a, b in
            let c = Self.compare(buffer, starts[Int(a)], ends[Int(a)], buffer, starts[Int(b)], ends[Int(b)])
            if c != 0 { return c < 0 }
            let na = names[Int(a)], nb = names[Int(b)]
            return na != nb ? na < nb : a < b
        }
    }

    /// The search key of a name, as UTF-8 (see ``PlaceIndex/searchKey(for:)``).
    static func keyBytes(_ name: String) -> [UInt8] {
        let folded: String
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            folded = name.lowercased()
        } else {
            folded = name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
        let collapsed = folded.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return collapsed.utf8.map { $0 == 0 ? 0x20 : $0 }
    }

    /// Lexicographic byte comparison of two ranges: negative, zero or positive.
    private static func compare(_ x: [UInt8], _ xs: Int, _ xe: Int, _ y: [UInt8], _ ys: Int, _ ye: Int) -> Int {
        var i = xs, j = ys
        while i < xe && j < ye {
            if x[i] != y[j] { return Int(x[i]) - Int(y[j]) }
            i += 1; j += 1
        }
        return (xe - xs) - (ye - ys)
    }

    /// Compares the keys of two places bytewise: negative, zero or positive.
    func compareKeys(_ a: Int, _ b: Int) -> Int {
        Self.compare(buffer, starts[a], ends[a], buffer, starts[b], ends[b])
    }

    /// Place indices whose key starts with `query`, ordered by (key bytes, name, index).
    func prefixMatches(_ query: [UInt8]) -> [Int] {
        // First key ≥ query.
        var lo = 0, hi = sorted.count
        while lo < hi {
            let m = (lo + hi) / 2
            let id = Int(sorted[m])
            if Self.compare(buffer, starts[id], ends[id], query, 0, query.count) < 0 { lo = m + 1 } else { hi = m }
        }
        var result: [Int] = []
        var i = lo
        while i < sorted.count {
            let id = Int(sorted[i])
            guard ends[id] - starts[id] >= query.count,
                  Self.compare(buffer, starts[id], starts[id] + query.count, query, 0, query.count) == 0 else { break }
            result.append(id)
            i += 1
        }
        return result
    }

    /// Place indices whose key contains `query` somewhere other than at its start, in index order.
    func substringOnlyMatches(_ query: [UInt8]) -> [Int] {
        guard !query.isEmpty else { return [] }
        var result: [Int] = []
        buffer.withUnsafeBytes { raw in
            query.withUnsafeBytes { q in
                var offset = 0
                while offset < raw.count {
                    guard let at = Self.find(q, in: raw, from: offset) else { return }
                    // The key holding the hit: the last start ≤ at.
                    var lo = 0, hi = starts.count
                    while lo < hi {
                        let m = (lo + hi) / 2
                        if starts[m] <= at { lo = m + 1 } else { hi = m }
                    }
                    let id = lo - 1
                    if at != starts[id] { result.append(id) }
                    offset = ends[id] + 1
                }
            }
        }
        return result
    }
}

extension NameTable {
    /// The first offset ≥ `start` where `needle` occurs in `haystack` (memchr for the first byte, then memcmp).
    fileprivate static func find(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let base = haystack.baseAddress!
        let first = Int32(needle[0])
        var offset = start
        while haystack.count - offset >= needle.count {
            guard let hit = memchr(base + offset, first, haystack.count - offset - needle.count + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(hit, needle.baseAddress!, needle.count) == 0 { return at }
            offset = at + 1
        }
        return nil
    }
}

extension PlaceIndex {
    /// The form names and queries are compared in: case and diacritics folded
    /// (`Zürich` → `zurich`), whitespace trimmed and inner runs collapsed to one space.
    /// - Parameter name: A name or a query.
    /// - Returns: The folded key.
    public static func searchKey(for name: String) -> String {
        String(decoding: NameTable.keyBytes(name), as: UTF8.self)
    }

    /// Places whose name matches a query, without a location.
    ///
    /// Names and the query are compared as ``searchKey(for:)`` folds them. Prefix matches
    /// come first, then names containing the query elsewhere; each group is ordered by
    /// folded name (bytewise), then name, then index.
    /// - Parameters:
    ///   - query: The text to look for; empty (after folding) finds nothing.
    ///   - limit: How many matches to return at most.
    /// - Returns: Up to `limit` matches.
    public func named(_ query: String, limit: Int) -> [NameMatch] {
        let key = NameTable.keyBytes(query)
        guard limit > 0, !key.isEmpty else { return [] }
        let source = MatchSource(places, origin: nil)
        var result = names.prefixMatches(key).map { NameMatch(index: $0, in: source, kind: .prefix) }
        if result.count >= limit { return Array(result.prefix(limit)) }
        let rest = names.substringOnlyMatches(key).sorted { a, b in
            let c = names.compareKeys(a, b)
            if c != 0 { return c < 0 }
            if places[a].name != places[b].name { return places[a].name < places[b].name }
            return a < b
        }
        result += rest.prefix(limit - result.count).map { NameMatch(index: $0, in: source, kind: .substring) }
        return result
    }

    /// Places whose name matches a query, nearest first.
    ///
    /// Names and the query are compared as ``searchKey(for:)`` folds them. Prefix matches
    /// come first, then names containing the query elsewhere; each group is ordered by
    /// (distance, name, index) from `origin`.
    /// - Parameters:
    ///   - query: The text to look for; empty (after folding) finds nothing.
    ///   - origin: The reference point for ranking, distances and bearings.
    ///   - limit: How many matches to return at most.
    /// - Returns: Up to `limit` matches; empty when `origin` is not a valid coordinate.
    public func named(_ query: String, near origin: Coordinate, limit: Int) -> [PlaceMatch] {
        let key = NameTable.keyBytes(query)
        guard limit > 0, !key.isEmpty, origin.isValid else { return [] }
        let q = Geodesy.unitVector(origin)
        func hits(_ ids: [Int]) -> [Hit] {
            var hits = ids.map { id in
                Hit(distance: Geodesy.arcLength(chord: Geodesy.chord(q, unitVector(ofPlace: id))), id: Int32(id))
            }
            hits.sortIntoResultOrder(nameRanks)
            return hits
        }
        var result = hits(names.prefixMatches(key))
        if result.count < limit {
            result += hits(names.substringOnlyMatches(key)).prefix(limit - result.count)
        }
        return matches(Array(result.prefix(limit)), from: origin)
    }
}
