import Foundation
import Places

extension Coordinate {
    /// Parses `LAT,LON` in decimal degrees (spaces allowed around the comma), e.g. `51.5074,-0.1278`.
    /// - Parameter text: the text.
    /// - Throws: ``PlacesInputError`` naming what was wrong.
    public init(parsing text: String) throws(PlacesInputError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw PlacesInputError("\"\(text.prefix(60))\" is not LAT,LON (e.g. 51.5074,-0.1278)")
        }
        let trimmed = parts.map { $0.trimmingCharacters(in: .whitespaces) }
        guard let latitude = Double(trimmed[0]), latitude.isFinite else {
            throw PlacesInputError("latitude \"\(trimmed[0].prefix(30))\" is not a number")
        }
        guard let longitude = Double(trimmed[1]), longitude.isFinite else {
            throw PlacesInputError("longitude \"\(trimmed[1].prefix(30))\" is not a number")
        }
        guard (-90...90).contains(latitude) else { throw PlacesInputError("latitude \(latitude) is out of range −90 to 90") }
        guard (-180...180).contains(longitude) else { throw PlacesInputError("longitude \(longitude) is out of range −180 to 180") }
        self.init(latitude: latitude, longitude: longitude)
    }
}
