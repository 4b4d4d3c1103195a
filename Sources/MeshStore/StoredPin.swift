import Foundation
import MeshCore

/// A place pin shared in the mesh, as the store keeps it (PROTOCOL.md §14.4).
///
/// The store checks no coordinates or lengths: the places layer validates pins before it stores them.
public struct StoredPin: Sendable, Hashable {
    /// The pin id: 32 lowercase hex digits.
    public var id: String
    /// The node that made it.
    public var author: NodeID
    /// The author's display name when the pin arrived.
    public var authorName: String
    /// Latitude in degrees.
    public var latitude: Double
    /// Longitude in degrees.
    public var longitude: Double
    /// The short label.
    public var label: String
    /// The optional note ("" for none).
    public var note: String
    /// When the author made it (the author's clock).
    public var createdAt: Date
    /// When it expires (the author's clock).
    public var expiresAt: Date
    /// When this node stored it.
    public var receivedAt: Date

    /// Creates a pin.
    /// - Parameters:
    ///   - id: 32 hex digits.
    ///   - author: the author's node.
    ///   - authorName: the author's display name.
    ///   - latitude: degrees.
    ///   - longitude: degrees.
    ///   - label: the label.
    ///   - note: the note, "" for none.
    ///   - createdAt: when it was made.
    ///   - expiresAt: when it expires.
    ///   - receivedAt: when it was stored here.
    public init(id: String, author: NodeID, authorName: String, latitude: Double, longitude: Double, label: String,
                note: String, createdAt: Date, expiresAt: Date, receivedAt: Date) {
        self.id = id
        self.author = author
        self.authorName = authorName
        self.latitude = latitude
        self.longitude = longitude
        self.label = label
        self.note = note
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.receivedAt = receivedAt
    }
}

/// What storing a received pin did.
public enum PinChange: Sendable, Hashable {
    /// A pin new to this node.
    case added
    /// A copy of a pin already stored, withdrawn, or expired: nothing changed.
    case unchanged
}
