import MeshSession
import Places

/// What a lookup found: the merged places with where each came from, and how each asked source
/// fared.
public struct LookupResult: Sendable {
    /// One place found, measured from the lookup's point.
    public struct Hit: Sendable, Hashable {
        /// The place's name.
        public var name: String
        /// Where it is.
        public var coordinate: Coordinate
        /// The great-circle distance from the lookup's point.
        public var distance: Distance
        /// The initial bearing from the lookup's point, degrees clockwise from north.
        public var bearing: Double
        /// The data set it came from.
        public var placeSet: String
        /// The node that answered, or `nil` for this node's own data.
        public var source: PeerID?

        /// Creates a hit.
        /// - Parameters:
        ///   - name: the name.
        ///   - coordinate: the position.
        ///   - distance: from the lookup's point.
        ///   - bearing: from the lookup's point, degrees.
        ///   - placeSet: the data set.
        ///   - source: the answering node, `nil` for this one.
        public init(name: String, coordinate: Coordinate, distance: Distance, bearing: Double, placeSet: String, source: PeerID?) {
            self.name = name
            self.coordinate = coordinate
            self.distance = distance
            self.bearing = bearing
            self.placeSet = placeSet
            self.source = source
        }
    }

    /// How one source fared.
    public enum Outcome: Sendable, Hashable {
        /// It answered with `count` of its `total` matches.
        case answered(count: Int, total: Int)
        /// It refused, saying why.
        case refused(String)
        /// No answer came within ``PlacesLimits/answerTimeout``.
        case noAnswer
        /// The lookup could not be sent to it.
        case unreachable(String)
    }

    /// One source asked: `nil` for this node's own data.
    public struct Source: Sendable, Hashable {
        /// The node, or `nil` for this node.
        public var peer: PeerID?
        /// Links to it across the mesh (0 for this node).
        public var hops: Int
        /// How it fared.
        public var outcome: Outcome

        /// Creates a source.
        /// - Parameters:
        ///   - peer: the node, `nil` for this one.
        ///   - hops: links to it.
        ///   - outcome: how it fared.
        public init(peer: PeerID?, hops: Int, outcome: Outcome) {
            self.peer = peer
            self.hops = hops
            self.outcome = outcome
        }
    }

    /// The lookup.
    public var lookup: PlaceLookup
    /// The places, nearest first (ties by name, then data set), at most the lookup's limit.
    public var hits: [Hit]
    /// Every source asked, this node first.
    public var sources: [Source]
    /// Matches before the limit, summed over the sources (overlapping data counts twice).
    public var total: Int

    /// Creates a result.
    /// - Parameters:
    ///   - lookup: the lookup.
    ///   - hits: the places, nearest first.
    ///   - sources: the sources asked.
    ///   - total: matches before the limit.
    public init(lookup: PlaceLookup, hits: [Hit], sources: [Source], total: Int) {
        self.lookup = lookup
        self.hits = hits
        self.sources = sources
        self.total = total
    }

    /// Whether nobody was asked: neither this node nor any reachable peer holds data covering the point.
    public var nobodyCovers: Bool { sources.isEmpty }
}
