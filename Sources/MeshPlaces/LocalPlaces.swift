import Places

/// The place data sets this node holds, and how it answers lookups from them (PROTOCOL.md §14.3).
///
/// A pure value: answering reads the indexes only.
public struct LocalPlaces: Sendable {
    /// One loaded data set.
    public struct DataSet: Sendable {
        /// Its advert: name, count, box.
        public var info: PlaceSetInfo
        /// Its index.
        public var index: PlaceIndex

        /// Creates a data set.
        /// - Parameters:
        ///   - info: its advert.
        ///   - index: its index.
        public init(info: PlaceSetInfo, index: PlaceIndex) {
            self.info = info
            self.index = index
        }
    }

    /// The data sets, in the order given.
    public let sets: [DataSet]

    /// Creates the holdings.
    /// - Parameter sets: the data sets (none for a node without data).
    public init(_ sets: [DataSet] = []) { self.sets = sets }

    /// Whether some data set's box holds a point.
    /// - Parameter point: the point.
    /// - Returns: whether lookups there are answered here.
    public func covers(_ point: Coordinate) -> Bool { sets.contains { $0.info.covers(point) } }

    /// Answers a lookup from every data set: places within the radius whose folded names contain
    /// the folded text, nearest first (ties by name, then data set), one per (folded name,
    /// position) when sets overlap, at most the lookup's limit.
    /// - Parameter lookup: the lookup.
    /// - Returns: the answer.
    public func answer(_ lookup: PlaceLookup) -> PlaceAnswer {
        let key = PlaceIndex.searchKey(for: lookup.text)
        var found: [(distance: Double, hit: PlaceHit)] = []
        var seen = Set<DuplicateKey>()
        for set in sets {
            for match in set.index.within(lookup.radius, of: lookup.centre) {
                let folded = key.isEmpty ? "" : PlaceIndex.searchKey(for: match.place.name)
                if !key.isEmpty, !folded.contains(key) { continue }
                let duplicate = DuplicateKey(name: key.isEmpty ? PlaceIndex.searchKey(for: match.place.name) : folded,
                                             coordinate: match.place.coordinate)
                guard seen.insert(duplicate).inserted else { continue }
                found.append((match.distance.metres,
                              PlaceHit(name: Self.clipped(match.place.displayName), coordinate: match.place.coordinate, placeSet: set.info.name)))
            }
        }
        found.sort { a, b in
            if a.distance != b.distance { return a.distance < b.distance }
            if a.hit.name != b.hit.name { return a.hit.name < b.hit.name }
            return a.hit.placeSet < b.hit.placeSet
        }
        return PlaceAnswer(id: lookup.id, hits: found.prefix(lookup.limit).map(\.hit), total: found.count)
    }

    private struct DuplicateKey: Hashable {
        var name: String
        var coordinate: Coordinate
    }

    /// A name cut to ``PlacesLimits/maxHitNameBytes`` bytes at a character boundary.
    static func clipped(_ name: String) -> String {
        guard name.utf8.count > PlacesLimits.maxHitNameBytes else { return name }
        var result = ""
        for character in name {
            if result.utf8.count + character.utf8.count > PlacesLimits.maxHitNameBytes { break }
            result.append(character)
        }
        return result
    }
}
