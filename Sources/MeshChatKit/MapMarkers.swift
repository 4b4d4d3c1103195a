import Places

/// Places gathered into the map's cells at its current scale: each cell with places is one
/// cluster, with its count and its place nearest the centre.
struct PlaceClusters: Sendable {
    /// One cell's places.
    struct Cluster: Sendable, Hashable {
        /// The cell.
        var cell: MapCell
        /// How many places fall in it.
        var count: Int
        /// The index (in the places given) of its place nearest the centre.
        var nearest: Int
        /// That place's distance and bearing from the centre.
        var location: MapLocation
    }

    /// The clusters, nearest first (by their nearest place; ties by label).
    let clusters: [Cluster]
    /// How many places fall inside the frame.
    let shown: Int

    /// Gathers places into cells.
    /// - Parameters:
    ///   - places: The places; those with invalid coordinates or off the map are left out.
    ///   - projection: Where each falls.
    init(_ places: [MapView.Marker], projection: MapProjection) {
        var byCell: [MapCell: Cluster] = [:]
        var shown = 0
        for (index, place) in places.enumerated() {
            guard let location = projection.locate(place.coordinate), let cell = location.cell else { continue }
            shown += 1
            if var cluster = byCell[cell] {
                cluster.count += 1
                if Self.isNearer(location, places[index], than: cluster.location, places[cluster.nearest]) {
                    cluster.nearest = index
                    cluster.location = location
                }
                byCell[cell] = cluster
            } else {
                byCell[cell] = Cluster(cell: cell, count: 1, nearest: index, location: location)
            }
        }
        self.shown = shown
        self.clusters = byCell.values.sorted {
            if $0.location.distance != $1.location.distance { return $0.location.distance < $1.location.distance }
            if places[$0.nearest].label != places[$1.nearest].label { return places[$0.nearest].label < places[$1.nearest].label }
            return $0.nearest < $1.nearest
        }
    }

    private static func isNearer(_ a: MapLocation, _ aMarker: MapView.Marker, than b: MapLocation, _ bMarker: MapView.Marker) -> Bool {
        a.distance < b.distance || (a.distance == b.distance && aMarker.label < bMarker.label)
    }
}

/// Pins in distance order with the symbol each is drawn with.
///
/// Pins inside the frame get the letters A–Z then a–z, nearest first; further pins inside the
/// frame are drawn as the glyph set's extra-pin symbol, and pins off the map get no symbol.
struct PinPlacements: Sendable {
    /// One pin.
    struct Pin: Sendable, Hashable {
        /// Its index in the pins given.
        var index: Int
        /// Its distance, bearing and cell.
        var location: MapLocation
        /// Its letter, when it is on the map and among the first 52 there.
        var letter: Character?
    }

    /// The letters pins are given, in order.
    static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// Every pin with a valid coordinate, nearest first (ties by label, then index).
    let pins: [Pin]

    /// Places pins.
    /// - Parameters:
    ///   - pins: The pins; those with invalid coordinates are left out.
    ///   - projection: Where each falls.
    init(_ pins: [MapView.Marker], projection: MapProjection) {
        var located: [Pin] = []
        located.reserveCapacity(pins.count)
        for (index, pin) in pins.enumerated() {
            guard let location = projection.locate(pin.coordinate) else { continue }
            located.append(Pin(index: index, location: location, letter: nil))
        }
        located.sort {
            if $0.location.distance != $1.location.distance { return $0.location.distance < $1.location.distance }
            if pins[$0.index].label != pins[$1.index].label { return pins[$0.index].label < pins[$1.index].label }
            return $0.index < $1.index
        }
        var next = 0
        for i in located.indices where located[i].location.cell != nil && next < Self.letters.count {
            located[i].letter = Self.letters[next]
            next += 1
        }
        self.pins = located
    }

    /// Pins inside the frame.
    var shown: [Pin] { pins.filter { $0.location.cell != nil } }
    /// Pins off the map.
    var offMap: [Pin] { pins.filter { $0.location.cell == nil } }
}
