import MeshPlaces
import Places

/// How places read in text output.
enum PlaceText {
    /// "350 m", "2.1 km", "12 km".
    static func distance(_ distance: Distance) -> String {
        let m = distance.metres
        if m < 1000 { return "\(Int(m.rounded())) m" }
        if m < 10_000 { return "\((m / 100).rounded() / 10) km" }
        return "\(Int((m / 1000).rounded())) km"
    }

    /// The 8-point compass name of a bearing: N, NE, E, …
    static func compass(_ bearing: Double) -> String {
        let names = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
        let sector = Int(((bearing.truncatingRemainder(dividingBy: 360) + 360 + 22.5) / 45).rounded(.down)) % 8
        return names[sector]
    }

    /// "2.1 km NE", or "here" within a metre.
    static func offset(_ distance: Distance, _ bearing: Double) -> String {
        distance.metres < 1 ? "here" : "\(Self.distance(distance)) \(compass(bearing))"
    }

    /// "51.50740,-0.12780".
    static func point(_ point: Coordinate) -> String {
        "\(rounded(point.latitude)),\(rounded(point.longitude))"
    }

    static func rounded(_ degrees: Double) -> Double { (degrees * 100_000).rounded() / 100_000 }
}
