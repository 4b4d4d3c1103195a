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
    }

    /// The lookup.
    public var lookup: PlaceLookup
    /// The places, nearest first (ties by name, then data set), at most the lookup's limit.
    public var hits: [Hit]
    /// Every source asked, this node first.
    public var sources: [Source]
    /// Matches before the limit, summed over the sources (overlapping data counts twice).
    public var total: Int

    /// Whether nobody was asked: neither this node nor any reachable peer holds data covering the point.
    public var nobodyCovers: Bool { sources.isEmpty }
}
