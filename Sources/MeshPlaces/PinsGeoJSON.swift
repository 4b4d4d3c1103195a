import Foundation
import MeshSession
import Places

/// Pins as an RFC 7946 GeoJSON FeatureCollection of Points, for any map tool.
public enum PinsGeoJSON {
    /// The document: one Feature per pin, `[lon, lat]`, with properties `id`, `label`, `note`,
    /// `author`, `author_id`, `created_at`, `expires_at` (ISO 8601).
    /// - Parameter pins: the pins.
    /// - Returns: UTF-8 JSON text.
    public static func document(_ pins: [SharedPin]) -> Data {
        let iso = ISO8601DateFormatter()
        let features: [[String: Any]] = pins.map { pin in
            [
                "type": "Feature",
                "geometry": ["type": "Point", "coordinates": [pin.coordinate.longitude, pin.coordinate.latitude]],
                "properties": [
                    "id": pin.id, "label": pin.label, "note": pin.note, "author": pin.author.displayName,
                    "author_id": pin.author.id.hex, "created_at": iso.string(from: pin.createdAt),
                    "expires_at": iso.string(from: pin.expiresAt),
                ] as [String: Any],
            ]
        }
        let collection: [String: Any] = ["type": "FeatureCollection", "features": features]
        // Serializing dictionaries of strings, numbers and arrays cannot fail.
        return (try? JSONSerialization.data(withJSONObject: collection, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }

    /// Writes the document to a file (replacing it atomically).
    /// - Parameters:
    ///   - pins: the pins.
    ///   - path: the file.
    /// - Throws: ``PlacesInputError`` naming the file and the reason.
    public static func write(_ pins: [SharedPin], to path: String) throws(PlacesInputError) {
        do {
            try document(pins).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PlacesInputError("cannot write \(path): \((error as NSError).localizedDescription)")
        }
    }
}
