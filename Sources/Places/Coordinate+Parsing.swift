extension Coordinate {
    /// Reads a position written as `LAT,LON` in decimal degrees (latitude first, spaces allowed
    /// around the numbers), e.g. `51.4613,-0.1383`.
    /// - Parameter text: The text.
    /// - Throws: ``PlacesError`` with code ``PlacesError/Code/badCoordinate`` naming the part
    ///   that is wrong: not two numbers, a latitude outside −90…90 or a longitude outside
    ///   −180…180.
    public init(parsing text: String) throws(PlacesError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard parts.count == 2 else {
            throw .badCoordinate("\"\(text)\" is not LAT,LON: it has \(parts.count) comma-separated part(s), need 2")
        }
        guard !parts[0].isEmpty, let lat = Double(parts[0]), lat.isFinite else {
            throw .badCoordinate("latitude \"\(parts[0])\" in \"\(text)\" is not a number")
        }
        guard !parts[1].isEmpty, let lon = Double(parts[1]), lon.isFinite else {
            throw .badCoordinate("longitude \"\(parts[1])\" in \"\(text)\" is not a number")
        }
        guard abs(lat) <= 90 else {
            throw .badCoordinate("latitude \(parts[0]) in \"\(text)\" is outside -90...90 (the order is LAT,LON)")
        }
        guard abs(lon) <= 180 else {
            throw .badCoordinate("longitude \(parts[1]) in \"\(text)\" is outside -180...180")
        }
        self.init(latitude: lat, longitude: lon)
    }
}
