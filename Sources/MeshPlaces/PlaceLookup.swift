import Foundation
import MeshSession
import Places

/// A lookup: the places within a radius of a point whose names contain a text (PROTOCOL.md §14.2).
public struct PlaceLookup: Sendable, Hashable {
    /// The lookup's id (16 random bytes), which its answers carry.
    public var id: NodeID
    /// The point.
    public var centre: Coordinate
    /// The radius, ``PlacesLimits/minRadiusMetres`` to ``PlacesLimits/maxRadiusMetres``.
    public var radius: Distance
    /// Text the names must contain (folded: case and accents ignored); empty for any name.
    public var text: String
    /// How many results at most, 1 to ``PlacesLimits/maxLimit``.
    public var limit: Int

    /// Creates a lookup, checking every limit.
    /// - Parameters:
    ///   - id: its id; a random one by default.
    ///   - centre: the point.
    ///   - radius: the radius.
    ///   - text: name text, or "".
    ///   - limit: results at most.
    /// - Throws: ``PlacesInputError`` naming what breaks a limit.
    public init(id: NodeID = .random(), centre: Coordinate, radius: Distance, text: String = "",
                limit: Int = PlacesLimits.defaultLimit) throws(PlacesInputError) {
        guard centre.isValid else { throw PlacesInputError("\(centre) is not a valid latitude,longitude") }
        guard radius.metres.isFinite, radius.metres >= PlacesLimits.minRadiusMetres, radius.metres <= PlacesLimits.maxRadiusMetres else {
            throw PlacesInputError("radius \(ReceivedNumber.whole(radius.metres)) m is out of range: 1 m to 100 km")
        }
        let bytes = text.utf8.count
        guard bytes <= PlacesLimits.maxQueryTextBytes else {
            throw PlacesInputError("lookup text is \(bytes) bytes, at most \(PlacesLimits.maxQueryTextBytes)")
        }
        guard (1...PlacesLimits.maxLimit).contains(limit) else {
            throw PlacesInputError("limit \(limit) is out of range: 1 to \(PlacesLimits.maxLimit)")
        }
        self.id = id
        self.centre = centre
        self.radius = radius
        self.text = text
        self.limit = limit
    }

    /// Validates a received query.
    /// - Parameter payload: the query.
    /// - Throws: ``PlacesInputError`` naming the bad field.
    public init(validating payload: PlaceQueryPayload) throws(PlacesInputError) {
        guard let id = try? NodeID(bytes: payload.queryID) else {
            throw PlacesInputError("lookup id has \(payload.queryID.count) bytes, expected 16")
        }
        try self.init(id: id, centre: Coordinate(latitude: payload.latitude, longitude: payload.longitude),
                      radius: .metres(payload.radiusM), text: payload.text, limit: Int(clamping: payload.limit))
    }

    /// The query as sent.
    public var payload: PlaceQueryPayload {
        var payload = PlaceQueryPayload()
        payload.queryID = Data(id.bytes)
        payload.latitude = centre.latitude
        payload.longitude = centre.longitude
        payload.radiusM = radius.metres
        payload.text = text
        payload.limit = UInt32(limit)
        return payload
    }
}

/// One place in an answer: where it is and which data set it came from.
public struct PlaceHit: Sendable, Hashable {
    /// The name as the data set has it (at most ``PlacesLimits/maxHitNameBytes`` bytes).
    public var name: String
    /// Where it is.
    public var coordinate: Coordinate
    /// The data set's name.
    public var placeSet: String

    /// Creates a hit.
    /// - Parameters:
    ///   - name: the name.
    ///   - coordinate: the position.
    ///   - placeSet: the data set's name.
    public init(name: String, coordinate: Coordinate, placeSet: String) {
        self.name = name
        self.coordinate = coordinate
        self.placeSet = placeSet
    }
}

/// The answer to a ``PlaceLookup`` (PROTOCOL.md §14.3).
public struct PlaceAnswer: Sendable, Hashable {
    /// The lookup's id.
    public var id: NodeID
    /// The places, nearest to the lookup's point first.
    public var hits: [PlaceHit]
    /// How many places matched before the limit.
    public var total: Int
    /// Why the lookup was not answered (rate limit, no data), or `nil`.
    public var refused: String?

    /// Creates an answer.
    /// - Parameters:
    ///   - id: the lookup's id.
    ///   - hits: the places.
    ///   - total: matches before the limit.
    ///   - refused: why it was refused, or `nil`.
    public init(id: NodeID, hits: [PlaceHit], total: Int, refused: String? = nil) {
        self.id = id
        self.hits = hits
        self.total = total
        self.refused = refused
    }

    /// Validates a received answer: invalid coordinates and over-long names are errors, and
    /// more hits than ``PlacesLimits/maxLimit``.
    /// - Parameter payload: the answer.
    /// - Throws: ``PlacesInputError`` naming the bad field.
    public init(validating payload: PlaceAnswerPayload) throws(PlacesInputError) {
        guard let id = try? NodeID(bytes: payload.queryID) else {
            throw PlacesInputError("answer's lookup id has \(payload.queryID.count) bytes, expected 16")
        }
        guard payload.hits.count <= PlacesLimits.maxLimit else {
            throw PlacesInputError("answer has \(payload.hits.count) places, at most \(PlacesLimits.maxLimit)")
        }
        var hits: [PlaceHit] = []
        for (n, hit) in payload.hits.enumerated() {
            let coordinate = Coordinate(latitude: hit.latitude, longitude: hit.longitude)
            guard coordinate.isValid else { throw PlacesInputError("answer place \(n + 1) has an invalid position \(coordinate)") }
            guard hit.name.utf8.count <= PlacesLimits.maxHitNameBytes, hit.placeSet.utf8.count <= PlacesLimits.placeSetNameBytes.upperBound else {
                throw PlacesInputError("answer place \(n + 1) has a name over \(PlacesLimits.maxHitNameBytes) bytes or a data set name over 64")
            }
            hits.append(PlaceHit(name: hit.name, coordinate: coordinate, placeSet: hit.placeSet))
        }
        self.init(id: id, hits: hits, total: max(Int(payload.total), hits.count),
                  refused: payload.refused.isEmpty ? nil : String(payload.refused.prefix(200)))
    }

    /// The answer as sent.
    public var payload: PlaceAnswerPayload {
        var payload = PlaceAnswerPayload()
        payload.queryID = Data(id.bytes)
        payload.total = UInt32(clamping: total)
        payload.refused = refused ?? ""
        payload.hits = hits.map { hit in
            var entry = PlaceHitPayload()
            entry.name = hit.name
            entry.latitude = hit.coordinate.latitude
            entry.longitude = hit.coordinate.longitude
            entry.placeSet = hit.placeSet
            return entry
        }
        return payload
    }
}
