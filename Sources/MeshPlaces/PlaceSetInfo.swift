import MeshWire
import Places

/// A place data set a node holds, as its link-state advert describes it (PROTOCOL.md §14.1):
/// a name, how many places, and the bounding box lookups can be answered in.
public struct PlaceSetInfo: Sendable, Hashable {
    /// The data set's name (e.g. its file name).
    public var name: String
    /// How many places it holds.
    public var count: Int
    /// The box its places lie in (crossing the antimeridian when `west > east`).
    public var bounds: BoundingBox

    /// Creates a description.
    /// - Parameters:
    ///   - name: 1–64 bytes of UTF-8.
    ///   - count: places in the set.
    ///   - bounds: the box its places lie in.
    public init(name: String, count: Int, bounds: BoundingBox) {
        self.name = name
        self.count = count
        self.bounds = bounds
    }

    /// Validates an advertised data set.
    /// - Parameter payload: the advert's entry.
    /// - Throws: ``PlacesInputError`` naming the bad field.
    public init(validating payload: PlaceSetPayload) throws(PlacesInputError) {
        let bytes = payload.name.utf8.count
        guard PlacesLimits.placeSetNameBytes.contains(bytes) else {
            throw PlacesInputError("place set name is \(bytes) bytes, expected \(PlacesLimits.placeSetNameBytes.lowerBound)–\(PlacesLimits.placeSetNameBytes.upperBound)")
        }
        let bounds = BoundingBox(south: payload.south, west: payload.west, north: payload.north, east: payload.east)
        guard bounds.isValid else { throw PlacesInputError("place set \"\(payload.name)\" has an invalid box \(bounds) (S,W,N,E)") }
        self.init(name: payload.name, count: Int(payload.count), bounds: bounds)
    }

    /// The advert entry.
    public var payload: PlaceSetPayload {
        var payload = PlaceSetPayload()
        payload.name = name
        payload.count = UInt32(clamping: count)
        payload.south = bounds.south
        payload.west = bounds.west
        payload.north = bounds.north
        payload.east = bounds.east
        return payload
    }

    /// Whether lookups around a point can be answered from this set: the point is in its box
    /// (edges included; antimeridian-aware).
    /// - Parameter point: the point.
    public func covers(_ point: Coordinate) -> Bool { bounds.contains(point) }
}
