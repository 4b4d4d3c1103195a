import Foundation
import MeshSession
import MeshStore
import Places

/// A place pin shared with the room (PROTOCOL.md §14.4): a labelled point with an expiry,
/// made by one node, which alone may withdraw it.
public struct SharedPin: Sendable, Hashable {
    /// The pin id: 32 lowercase hex digits.
    public var id: String
    /// Who made it.
    public var author: PeerID
    /// Where it is.
    public var coordinate: Coordinate
    /// The label, 1–64 bytes of UTF-8.
    public var label: String
    /// An optional note ("" for none), at most 256 bytes.
    public var note: String
    /// When it was made (the author's clock).
    public var createdAt: Date
    /// When it expires (the author's clock).
    public var expiresAt: Date

    /// Creates a pin, checking every limit.
    /// - Parameters:
    ///   - id: 32 hex digits; a random one by default.
    ///   - author: who makes it.
    ///   - coordinate: where.
    ///   - label: 1–64 bytes of UTF-8 (leading and trailing whitespace removed).
    ///   - note: at most 256 bytes.
    ///   - createdAt: when.
    ///   - lifetime: how long it lives, within ``PlacesLimits/pinLifetime``.
    /// - Throws: ``PlacesInputError`` naming what breaks a limit.
    public init(id: String = NodeID.random().hex, author: PeerID, coordinate: Coordinate, label: String, note: String = "",
                createdAt: Date = Date(), lifetime: Duration = PlacesLimits.defaultPinLifetime) throws(PlacesInputError) {
        guard PlacesLimits.pinLifetime.contains(lifetime) else {
            throw PlacesInputError("pin lifetime \(lifetime) is out of range: 1 minute to 7 days")
        }
        let seconds = Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
        try self.init(checking: id, author: author, coordinate: coordinate, label: label.trimmingCharacters(in: .whitespacesAndNewlines),
                      note: note.trimmingCharacters(in: .whitespacesAndNewlines), createdAt: createdAt,
                      expiresAt: createdAt.addingTimeInterval(seconds))
    }

    /// Validates a received pin.
    /// - Parameters:
    ///   - payload: the pin.
    ///   - author: the node that signed (broadcast) or sealed (catch-up) it.
    ///   - now: the receiver's time, to refuse pins from the far future.
    /// - Throws: ``PlacesInputError`` naming the bad field.
    public init(validating payload: PinPayload, author: PeerID, now: Date) throws(PlacesInputError) {
        guard let id = try? NodeID(bytes: payload.pinID) else {
            throw PlacesInputError("pin id has \(payload.pinID.count) bytes, expected 16")
        }
        let created = Date(timeIntervalSince1970: Double(payload.createdAtMs) / 1000)
        let expires = Date(timeIntervalSince1970: Double(payload.expiresAtMs) / 1000)
        let skew = Double(PlacesLimits.pinClockSkew.components.seconds)
        guard created.timeIntervalSince(now) <= skew else {
            throw PlacesInputError("pin \"\(payload.label.prefix(64))\" was made \(ReceivedNumber.whole(created.timeIntervalSince(now))) s in the future by our clock")
        }
        try self.init(checking: id.hex, author: author, coordinate: Coordinate(latitude: payload.latitude, longitude: payload.longitude),
                      label: payload.label, note: payload.note, createdAt: created, expiresAt: expires)
    }

    private init(checking id: String, author: PeerID, coordinate: Coordinate, label: String, note: String,
                 createdAt: Date, expiresAt: Date) throws(PlacesInputError) {
        guard let node = try? NodeID(hex: id) else { throw PlacesInputError("pin id \"\(id.prefix(40))\" is not 32 hex digits") }
        guard coordinate.isValid else { throw PlacesInputError("pin position \(coordinate) is not a valid latitude,longitude") }
        let labelBytes = label.utf8.count
        guard PlacesLimits.pinLabelBytes.contains(labelBytes) else {
            throw PlacesInputError("pin label is \(labelBytes) bytes, expected 1–\(PlacesLimits.pinLabelBytes.upperBound)")
        }
        guard note.utf8.count <= PlacesLimits.maxPinNoteBytes else {
            throw PlacesInputError("pin note is \(note.utf8.count) bytes, at most \(PlacesLimits.maxPinNoteBytes)")
        }
        let life = expiresAt.timeIntervalSince(createdAt)
        let range = PlacesLimits.pinLifetime
        guard life >= Double(range.lowerBound.components.seconds), life <= Double(range.upperBound.components.seconds) else {
            throw PlacesInputError("pin \"\(label)\" lives \(ReceivedNumber.whole(life)) s, expected 60 s to 7 days")
        }
        self.id = node.hex
        self.author = author
        self.coordinate = coordinate
        self.label = label
        self.note = note
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// A stored pin read back (the store keeps validated pins only).
    /// - Parameter stored: the row.
    public init(_ stored: StoredPin) {
        id = stored.id
        author = (try? PeerID(id: stored.author, displayName: stored.authorName))
            ?? (try! PeerID(id: stored.author, displayName: stored.author.shortHex))
        coordinate = Coordinate(latitude: stored.latitude, longitude: stored.longitude)
        label = stored.label
        note = stored.note
        createdAt = stored.createdAt
        expiresAt = stored.expiresAt
    }

    /// The pin as the store keeps it.
    /// - Parameter receivedAt: when it was stored.
    /// - Returns: the row.
    public func stored(receivedAt: Date) -> StoredPin {
        StoredPin(id: id, author: author.id, authorName: author.displayName, latitude: coordinate.latitude,
                  longitude: coordinate.longitude, label: label, note: note, createdAt: createdAt, expiresAt: expiresAt,
                  receivedAt: receivedAt)
    }

    /// The pin as sent.
    public var payload: PinPayload {
        var payload = PinPayload()
        payload.pinID = Data((try? NodeID(hex: id))?.bytes ?? [])
        payload.latitude = coordinate.latitude
        payload.longitude = coordinate.longitude
        payload.label = label
        payload.note = note
        payload.createdAtMs = Int64((createdAt.timeIntervalSince1970 * 1000).rounded())
        payload.expiresAtMs = Int64((expiresAt.timeIntervalSince1970 * 1000).rounded())
        return payload
    }
}
