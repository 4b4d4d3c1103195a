extension PlaceIndex {
    /// Places binned into a regular grid: one cluster per occupied cell.
    ///
    /// Each place goes into the ``GridCell`` holding it; a cluster reports the cell, the count,
    /// the centroid (mean latitude and longitude) and a representative (the place nearest the
    /// centroid). With a box, only places inside it count (a cell cut by the box's edge counts
    /// the places on the inside); the box may cross the antimeridian.
    ///
    /// Clusters come in a deterministic order: by the lowest place index in each cluster, which
    /// for a data set in file order is the order cells are first met in the file.
    /// - Parameters:
    ///   - cellDegrees: The cell size in degrees of latitude and longitude; clamped to
    ///     0.000001 … 360.
    ///   - box: Only places inside this box; nil for all.
    /// - Returns: The clusters; empty when `cellDegrees` is not positive or NaN, or nothing
    ///   is inside.
    /// - Complexity: O(n) for the whole set; O(m log m) for the m places in a box.
    public func clusters(cellDegrees: Double, in box: BoundingBox? = nil) -> [PlaceCluster] {
        guard cellDegrees > 0, indexedCount > 0 else { return [] }
        let size = GridCell.clampedSize(cellDegrees)
        let members: [Int32]
        if let box, !(box.south <= -90 && box.north >= 90 && box.west <= -180 && box.east >= 180) {
            var ids: [Int32] = []
            collect(box, into: &ids)
            ids.sort()  // sums run in index order, exactly as a scan of the places would add them
            members = ids
        } else {
            var ids: [Int32] = []
            ids.reserveCapacity(indexedCount)
            var skip = excluded[...]
            for i in places.indices {
                if skip.first == i {
                    skip.removeFirst()
                } else {
                    ids.append(Int32(i))
                }
            }
            members = ids
        }
        return clusters(of: members, size: size)
    }

    /// Clusters for a web-map zoom level: cells of ``cellDegrees(zoom:)`` degrees.
    /// - Parameters:
    ///   - zoom: The zoom level, clamped to 0 … 28.
    ///   - box: Only places inside this box (typically the visible map); nil for all.
    /// - Returns: As ``clusters(cellDegrees:in:)``.
    public func clusters(zoom: Int, in box: BoundingBox? = nil) -> [PlaceCluster] {
        clusters(cellDegrees: Self.cellDegrees(zoom: zoom), in: box)
    }

    /// The cell size for a web-map zoom level: `90 / 2^zoom` degrees.
    ///
    /// A 256-pixel web-map tile at zoom z spans `360 / 2^z` degrees of longitude, so cells are a
    /// quarter tile, 64 pixels wide at the equator (90° at zoom 0, 0.35° at zoom 8, about 0.0014°
    /// or 150 m at zoom 16). Cells are square in degrees, so on a Web Mercator map they look
    /// taller away from the equator.
    /// - Parameter zoom: The zoom level, clamped to 0 … 28.
    /// - Returns: Degrees.
    public static func cellDegrees(zoom: Int) -> Double {
        90 / Double(1 << Swift.min(28, Swift.max(0, zoom)))
    }

    private func clusters(of members: [Int32], size: Double) -> [PlaceCluster] {
        guard !members.isEmpty else { return [] }
        let rows = GridCell.rows(size), columns = GridCell.columns(size)
        var slotOfCell: [Int: Int32] = [:]
        slotOfCell.reserveCapacity(Swift.min(members.count, 1 << 16))
        var cellKeys: [Int] = [], counts: [Int] = [], latitudes: [Double] = [], longitudes: [Double] = []
        var memberSlots = [Int32](repeating: 0, count: members.count)
        for (m, id) in members.enumerated() {
            let c = places[Int(id)].coordinate
            let key = GridCell.slot((c.latitude + 90) / size, count: rows) * columns
                + GridCell.slot((c.longitude + 180) / size, count: columns)
            let slot: Int
            if let known = slotOfCell[key] {
                slot = Int(known)
            } else {
                slot = counts.count
                slotOfCell[key] = Int32(slot)
                cellKeys.append(key)
                counts.append(0)
                latitudes.append(0)
                longitudes.append(0)
            }
            memberSlots[m] = Int32(slot)
            counts[slot] += 1
            latitudes[slot] += c.latitude
            longitudes[slot] += c.longitude
        }
        let centroids = counts.indices.map { s in
            Coordinate(latitude: latitudes[s] / Double(counts[s]), longitude: longitudes[s] / Double(counts[s]))
        }
        let centroidVectors = centroids.map(Geodesy.unitVector)
        var best = [Hit](repeating: Hit(distance: .infinity, id: -1), count: counts.count)
        for (m, id) in members.enumerated() {
            let slot = Int(memberSlots[m])
            let d = Geodesy.arcLength(chord: Geodesy.chord(centroidVectors[slot], unitVector(ofPlace: Int(id))))
            let candidate = Hit(distance: d, id: id)
            if best[slot].id < 0 || nameRanks.precedes(candidate, best[slot]) { best[slot] = candidate }
        }
        return counts.indices.map { s in
            let representative = Int(best[s].id)
            return PlaceCluster(
                cell: GridCell(row: cellKeys[s] / columns, column: cellKeys[s] % columns, size: size),
                count: counts[s], centroid: centroids[s],
                representativeIndex: representative, representative: places[representative])
        }
    }
}
