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
    /// Where each key starts in `buffer`, plus one entry past the last key's end: key `i`
    /// is `buffer[start(i) ..< end(i)]`, and the 0 byte before each key makes `end(i)` =
    /// `starts[i + 1] − 1`. Offsets are 32-bit (half the memory of `Int`); keys past 4 GiB of
    /// names are left empty, so they match nothing.
    private let starts: [UInt32]
    private let sorted: [Int32]

    /// - Parameters:
    ///   - places: The places.
    ///   - excluded: Indices of places left out (ascending): their keys are empty, which no query matches.
    ///   - ranks: The places' ranks in name order, for ties between equal keys.
    init(_ places: [Place], excluding excluded: [Int], ranks: NameRanks) {
        var buffer: [UInt8] = []
        var starts: [UInt32] = []
        starts.reserveCapacity(places.count + 1)
        var skip = excluded[...]
        for (i, place) in places.enumerated() {
            buffer.append(0)
            starts.append(UInt32(buffer.count))
            if skip.first == i {
                skip.removeFirst()
                continue
            }
            let mark = buffer.count
            Self.appendKey(place.name, to: &buffer)
            if buffer.count >= Int(UInt32.max) - 1 { buffer.removeSubrange(mark...) }
        }
        buffer.append(0)
        starts.append(UInt32(buffer.count))
        let keys = SortKeys(places.indices.lazy.map { i in buffer[Int(starts[i])..<Int(starts[i + 1]) - 1] })
        let order = ranks.ranks.withUnsafeBufferPointer { ranks in
            keys.sortedIndices { a, b in ranks[Int(a)] < ranks[Int(b)] }
        }
        self.buffer = buffer
        self.starts = starts
        sorted = order
    }

    /// The search key of a name, as UTF-8 (see ``PlaceIndex/searchKey(for:)``).
    static func keyBytes(_ name: String) -> [UInt8] {
        var key: [UInt8] = []
        appendKey(name, to: &key)
        return key
    }

    /// Appends the search key of `name`: ASCII names byte by byte (lowercased, whitespace runs
    /// collapsed, NUL as a space), others through Foundation's case and diacritic folding.
    static func appendKey(_ name: String, to out: inout [UInt8]) {
        let mark = out.count
        var pendingSpace = false, started = false
        for b in name.utf8 {
            if b >= 0x80 {
                out.removeSubrange(mark...)
                appendFoldedKey(name, to: &out)
                return
            }
            if b == 0x20 || (b >= 0x09 && b <= 0x0D) {
                pendingSpace = started
                continue
            }
            if pendingSpace {
                out.append(0x20)
                pendingSpace = false
            }
            out.append(b == 0 ? 0x20 : (b >= 0x41 && b <= 0x5A ? b + 0x20 : b))
            started = true
        }
    }

    private static func appendFoldedKey(_ name: String, to out: inout [UInt8]) {
        let folded = name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var plain = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            if let replacement = plainLetters[scalar] { plain.append(contentsOf: replacement.unicodeScalars) } else { plain.append(scalar) }
        }
        let collapsed = String(plain).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        out.append(contentsOf: collapsed.utf8.lazy.map { $0 == 0 ? 0x20 : $0 })
    }

    /// What a person typing on a plain keyboard writes for letters that case and diacritic folding
    /// leave alone (they are letters of their own, not letters with marks), and for typographic
    /// punctuation: æ → ae, ø → o, ł → l, đ and ð → d, þ → th, œ → oe, ı → i, ħ → h, ŧ → t, ŋ → ng,
    /// ĸ → k, ſ → s; ’ ‘ ʼ ′ ´ → ', “ ” „ ″ → ", and the dashes ‐ ‑ ‒ – — ― − → -. (Foundation's
    /// folding has already lowered case, so only lower-case forms are listed.)
    static let plainLetters: [Unicode.Scalar: String] = [
        "æ": "ae", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "œ": "oe", "ı": "i", "ħ": "h",
        "ŧ": "t", "ŋ": "ng", "ĸ": "k", "ſ": "s", "ß": "ss",
        "\u{2019}": "'", "\u{2018}": "'", "\u{02BC}": "'", "\u{2032}": "'", "\u{00B4}": "'",
        "\u{201C}": "\"", "\u{201D}": "\"", "\u{201E}": "\"", "\u{2033}": "\"",
        "\u{2010}": "-", "\u{2011}": "-", "\u{2012}": "-", "\u{2013}": "-", "\u{2014}": "-", "\u{2015}": "-", "\u{2212}": "-",
    ]

    @inline(__always)
    private func start(_ i: Int) -> Int { Int(starts[i]) }

    @inline(__always)
    private func end(_ i: Int) -> Int { Int(starts[i + 1]) - 1 }

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
        Self.compare(buffer, start(a), end(a), buffer, start(b), end(b))
    }

    /// Place indices whose key starts with `query`, ordered by (key bytes, name, index).
    func prefixMatches(_ query: [UInt8]) -> [Int] {
        // First key ≥ query.
        var lo = 0, hi = sorted.count
        while lo < hi {
            let m = (lo + hi) / 2
            let id = Int(sorted[m])
            if Self.compare(buffer, start(id), end(id), query, 0, query.count) < 0 { lo = m + 1 } else { hi = m }
        }
        var result: [Int] = []
        var i = lo
        while i < sorted.count {
            let id = Int(sorted[i])
            guard end(id) - start(id) >= query.count,
                  Self.compare(buffer, start(id), start(id) + query.count, query, 0, query.count) == 0 else { break }
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
                    var lo = 0, hi = starts.count - 1
                    while lo < hi {
                        let m = (lo + hi) / 2
                        if start(m) <= at { lo = m + 1 } else { hi = m }
                    }
                    let id = lo - 1
                    if at != start(id) { result.append(id) }
                    offset = end(id) + 1
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
