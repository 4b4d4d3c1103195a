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
        // Names are folded only to match a text or to find one place in two sets; hits are built
        // only for the places returned.
        let overlapping = sets.count > 1
        var found: [(distance: Double, set: Int, place: Place)] = []
        var seen = Set<DuplicateKey>()
        for (number, set) in sets.enumerated() {
            for match in set.index.within(lookup.radius, of: lookup.centre) {
                var folded: String?
                if !key.isEmpty {
                    let name = PlaceIndex.searchKey(for: match.place.name)
                    guard name.contains(key) else { continue }
                    folded = name
                }
                if overlapping {
                    let duplicate = DuplicateKey(name: folded ?? PlaceIndex.searchKey(for: match.place.name), coordinate: match.place.coordinate)
                    guard seen.insert(duplicate).inserted else { continue }
                }
                found.append((match.distance.metres, number, match.place))
            }
        }
        // One set's matches come nearest first already (ties by name, then index).
        if overlapping {
            found.sort { a, b in
                if a.distance != b.distance { return a.distance < b.distance }
                if a.place.name != b.place.name { return a.place.name < b.place.name }
                return a.set < b.set
            }
        }
        let hits = found.prefix(lookup.limit).map {
            PlaceHit(name: Self.clipped($0.place.displayName), coordinate: $0.place.coordinate, placeSet: sets[$0.set].info.name)
        }
        return PlaceAnswer(id: lookup.id, hits: hits, total: found.count)
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
