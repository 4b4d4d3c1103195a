import struct Foundation.Data
import Logging
import MeshSession
import Places
import SwiftProtobuf

/// A place data set a node holds, as its channel 3 attachment describes it (PROTOCOL.md §14.1):
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

extension PlaceSetInfo {
    // MARK: The channel 3 attachment (PROTOCOL.md §14.1)

    /// Encodes the data sets a node answers lookups from as its channel 3 attachment: a
    /// `PlaceSets` of at most ``PlacesLimits/maxPlaceSets``, at most
    /// ``MeshSession/Session/maxChannelAttachment`` bytes.
    ///
    /// A set whose name is not 1–64 bytes or whose box is invalid is left out (another node
    /// would refuse it), and so are the sets past the eighth; each is logged.
    /// - Parameters:
    ///   - sets: this node's data sets, in order of preference.
    ///   - logger: where what was left out is logged.
    /// - Returns: the attachment, or `nil` when no set is advertised.
    public static func attachment(_ sets: [PlaceSetInfo], logger: Logger) -> Data? {
        var valid: [PlaceSetPayload] = []
        for set in sets {
            let payload = set.payload
            do {
                _ = try PlaceSetInfo(validating: payload)
            } catch {
                logger.notice("not advertising a place data set", metadata: ["places.set": "\(set.name.prefix(80))", "error": "\(error)"])
                continue
            }
            guard valid.count < PlacesLimits.maxPlaceSets else {
                logger.notice("not advertising a place data set: a node advertises at most \(PlacesLimits.maxPlaceSets)",
                              metadata: ["places.set": "\(set.name.prefix(80))"])
                continue
            }
            valid.append(payload)
        }
        var message = PlaceSetsPayload()
        message.sets = valid
        // Serializing a message built in Swift cannot fail.
        var data = try! message.serializedData()
        while data.count > Session.maxChannelAttachment, let last = message.sets.popLast() {
            // Unreachable with valid sets (8 take at most 880 bytes); kept so that a change of
            // the limits cannot make the advert refuse the attachment.
            logger.notice("not advertising a place data set: the attachment is over \(Session.maxChannelAttachment) bytes",
                          metadata: ["places.set": "\(last.name.prefix(80))"])
            data = try! message.serializedData()
        }
        return message.sets.isEmpty ? nil : data
    }

    /// Decodes another node's channel 3 attachment: its first ``PlacesLimits/maxPlaceSets``
    /// data sets that validate; the rest, and a malformed attachment, are ignored.
    /// - Parameter attachment: the attachment, or `nil`.
    /// - Returns: the data sets, possibly none.
    public static func sets(fromAttachment attachment: Data?) -> [PlaceSetInfo] {
        guard let attachment, let message = try? PlaceSetsPayload(serializedBytes: attachment) else { return [] }
        return message.sets.prefix(PlacesLimits.maxPlaceSets).compactMap { try? PlaceSetInfo(validating: $0) }
    }
}
