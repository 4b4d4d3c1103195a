extension PlaceIndex {
    // MARK: - Bounding box

    /// Every place inside a latitude/longitude box.
    ///
    /// The box is `south ≤ latitude ≤ north` and, when `west ≤ east`, `west ≤ longitude ≤ east`;
    /// when `west > east` it crosses the antimeridian: `longitude ≥ west` or `longitude ≤ east`.
    /// Edges are inclusive, longitudes 180 and −180 are one meridian, and a place at a pole is in
    /// every box that reaches that pole: the predicate is exactly ``BoundingBox/contains(_:)``.
    /// - Parameters:
    ///   - south: The southern edge in degrees.
    ///   - west: The western edge in degrees.
    ///   - north: The northern edge in degrees.
    ///   - east: The eastern edge in degrees.
    ///   - origin: The reference point for distances and bearings; nil for the box's centre
    ///     (see ``boxCentre(south:west:north:east:)``).
    /// - Returns: Matches ordered by (distance, name, index); empty when `south > north`, an
    ///   edge is NaN, or `origin` is given and not a valid coordinate.
    public func inBox(south: Double, west: Double, north: Double, east: Double, from origin: Coordinate? = nil) -> [PlaceMatch] {
        inBox(BoundingBox(south: south, west: west, north: north, east: east), from: origin)
    }

    /// Every place inside a box; see ``inBox(south:west:north:east:from:)``.
    /// - Parameters:
    ///   - box: The box (it crosses the antimeridian when `west > east`).
    ///   - origin: The reference point for distances and bearings; nil for the box's centre.
    /// - Returns: Matches ordered by (distance, name, index); empty when `south > north`, an
    ///   edge is NaN, or `origin` is given and not a valid coordinate.
    public func inBox(_ box: BoundingBox, from origin: Coordinate? = nil) -> [PlaceMatch] {
        let reference = origin ?? box.centre
        guard reference.isValid || origin == nil else { return [] }
        var ids: [Int32] = []
        collect(box, into: &ids)
        guard !ids.isEmpty else { return [] }
        let q = Geodesy.unitVector(reference)
        var hits = ids.map { id in
            Hit(distance: Geodesy.arcLength(chord: Geodesy.chord(q, unitVector(ofPlace: Int(id)))), id: id)
        }
        hits.sortIntoResultOrder(nameRanks)
        return matches(hits, from: reference)
    }

    /// The centre of a latitude/longitude box, antimeridian-aware.
    /// - Parameters:
    ///   - south: The southern edge in degrees.
    ///   - west: The western edge in degrees.
    ///   - north: The northern edge in degrees.
    ///   - east: The eastern edge in degrees.
    /// - Returns: The midpoint in latitude and in longitude (going east from `west` to `east`).
    public static func boxCentre(south: Double, west: Double, north: Double, east: Double) -> Coordinate {
        BoundingBox(south: south, west: west, north: north, east: east).centre
    }

    /// Appends the ids of the indexed places inside `box` (in tree order), each once: the
    /// longitude range (two disjoint halves for an antimeridian box), then the meridian ±180 under
    /// its other name and the poles, which ``BoundingBox/contains(_:)`` also counts as inside.
    func collect(_ box: BoundingBox, into ids: inout [Int32]) {
        guard box.south <= box.north, !box.west.isNaN, !box.east.isNaN, indexedCount > 0 else { return }
        let (south, north) = (box.south, box.north)
        if box.west <= box.east {
            collect(south: south, west: box.west, north: north, east: box.east, into: &ids)
        } else {
            collect(south: south, west: box.west, north: north, east: .infinity, into: &ids)
            collect(south: south, west: -.infinity, north: north, east: box.east, into: &ids)
        }
        var extra: [Int32] = []
        // The meridian ±180 under the name the range does not hold.
        if box.containsLongitude(-180) && !box.containsLongitude(180) { collect(south: south, west: 180, north: north, east: 180, into: &extra) }
        if box.containsLongitude(180) && !box.containsLongitude(-180) { collect(south: south, west: -180, north: north, east: -180, into: &extra) }
        // The poles, stored with any longitude.
        if south == -90 { collect(south: -90, west: -.infinity, north: -90, east: .infinity, into: &extra) }
        if north == 90 { collect(south: 90, west: -.infinity, north: 90, east: .infinity, into: &extra) }
        guard !extra.isEmpty else { return }
        var seen = Set(ids)
        for id in extra where seen.insert(id).inserted {
            ids.append(id)
        }
    }

    private func collect(south: Double, west: Double, north: Double, east: Double, into ids: inout [Int32]) {
        grid.coordinates.withUnsafeBufferPointer { coordinates in
            grid.ids.withUnsafeBufferPointer { treeIDs in
                grid.axes.withUnsafeBufferPointer { axes in
                    func inside(_ p: Int) -> Bool {
                        let lat = coordinates[2 * p], lon = coordinates[2 * p + 1]
                        return lat >= south && lat <= north && lon >= west && lon <= east
                    }
                    func visit(_ start: Int, _ end: Int) {
                        if end - start <= PackedKDTree.leafSize {
                            for p in start..<end where inside(p) { ids.append(treeIDs[p]) }
                            return
                        }
                        let mid = (start + end) / 2
                        let axis = Int(axes[mid])
                        let split = coordinates[2 * mid + axis]
                        let (low, high) = axis == 0 ? (south, north) : (west, east)
                        if inside(mid) { ids.append(treeIDs[mid]) }
                        if low <= split { visit(start, mid) }
                        if high >= split { visit(mid + 1, end) }
                    }
                    visit(0, treeIDs.count)
                }
            }
        }
    }
}
