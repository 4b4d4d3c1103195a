import MeshWire
import Places

/// A place data set a node holds, as its link-state advert describes it (PROTOCOL.md §14.1):
/// a name, how many places, and the bounding box lookups can be answered in.
public struct PlaceSetInfo: Sendable, Hashable {
    /// The data set's name (e.g. its file name).
    public var name: String
    /// How many places it holds.
    public var count: Int
    /// Southern edge, degrees.
    public var south: Double
    /// Western edge, degrees; greater than ``east`` when the box crosses the antimeridian.
    public var west: Double
    /// Northern edge, degrees.
    public var north: Double
    /// Eastern edge, degrees.
    public var east: Double

    /// Creates a description.
    /// - Parameters:
    ///   - name: 1–64 bytes of UTF-8.
    ///   - count: places in the set.
    ///   - south: southern edge.
    ///   - west: western edge.
    ///   - north: northern edge.
    ///   - east: eastern edge.
    public init(name: String, count: Int, south: Double, west: Double, north: Double, east: Double) {
        self.name = name
        self.count = count
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// Validates an advertised data set.
    /// - Parameter payload: the advert's entry.
    /// - Throws: ``PlacesInputError`` naming the bad field.
    public init(validating payload: PlaceSetPayload) throws(PlacesInputError) {
        let bytes = payload.name.utf8.count
        guard PlacesLimits.placeSetNameBytes.contains(bytes) else {
            throw PlacesInputError("place set name is \(bytes) bytes, expected \(PlacesLimits.placeSetNameBytes.lowerBound)–\(PlacesLimits.placeSetNameBytes.upperBound)")
        }
        guard (-90...90).contains(payload.south), (-90...90).contains(payload.north), payload.south <= payload.north,
              (-180...180).contains(payload.west), (-180...180).contains(payload.east) else {
            throw PlacesInputError("place set \"\(payload.name)\" has an invalid box S \(payload.south) W \(payload.west) N \(payload.north) E \(payload.east)")
        }
        self.init(name: payload.name, count: Int(payload.count), south: payload.south, west: payload.west,
                  north: payload.north, east: payload.east)
    }

    /// The advert entry.
    public var payload: PlaceSetPayload {
        var payload = PlaceSetPayload()
        payload.name = name
        payload.count = UInt32(clamping: count)
        payload.south = south
        payload.west = west
        payload.north = north
        payload.east = east
        return payload
    }

    /// The box.
    public var bounds: BoundingBox { BoundingBox(south: south, west: west, north: north, east: east) }

    /// Whether a point lies in the box (edges included; antimeridian-aware).
    /// - Parameter point: the point.
    /// - Returns: whether lookups around it can be answered from this set.
    public func covers(_ point: Coordinate) -> Bool { bounds.contains(point) }
}
