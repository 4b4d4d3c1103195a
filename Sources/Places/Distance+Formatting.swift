extension Distance {
    /// The units a distance is written in for people.
    public enum Units: Sendable, Hashable, CaseIterable {
        /// Metres below 1 km, then kilometres.
        case metric
        /// Feet below 0.1 mile (528 ft), then miles.
        case imperial
    }

    /// The distance written for people: `850 m`, `2.1 km`, `125 km`; or `300 ft`, `2.1 mi`.
    ///
    /// Metric: whole metres below 1 km (a value that rounds to 1,000 m is written `1.0 km`),
    /// kilometres with one decimal below 100 km, whole kilometres from there. Imperial: whole
    /// feet below 0.1 mile, miles with one decimal below 100 miles, whole miles from there.
    /// Rounding is to nearest, halves away from zero. A value that is not finite is written
    /// as its number (`inf m`).
    /// - Parameter units: Metric (the default) or imperial.
    /// - Returns: The text, a number, a space and the unit's symbol.
    public func formatted(units: Units = .metric) -> String {
        guard metres.isFinite else { return "\(metres) m" }
        switch units {
        case .metric:
            if Self.rounded(metres, decimals: 0) < 1000 { return "\(Self.fixed(metres, decimals: 0)) m" }
            let km = metres / 1000
            return Self.rounded(km, decimals: 1) < 100 ? "\(Self.fixed(km, decimals: 1)) km" : "\(Self.fixed(km, decimals: 0)) km"
        case .imperial:
            let mi = miles
            if abs(mi) < 0.1 { return "\(Self.fixed(metres / 0.3048, decimals: 0)) ft" }
            return Self.rounded(mi, decimals: 1) < 100 ? "\(Self.fixed(mi, decimals: 1)) mi" : "\(Self.fixed(mi, decimals: 0)) mi"
        }
    }

    private static func rounded(_ value: Double, decimals: Int) -> Double {
        let scale = decimals == 0 ? 1.0 : 10.0
        return (abs(value) * scale).rounded(.toNearestOrAwayFromZero) / scale
    }

    /// `value` with exactly `decimals` (0 or 1) digits after the point, without Foundation's locale.
    private static func fixed(_ value: Double, decimals: Int) -> String {
        let scale = decimals == 0 ? 1.0 : 10.0
        let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 1e18 else { return "\(value)" }
        let units = UInt64(scaled)
        let sign = value < 0 && units != 0 ? "-" : ""
        return decimals == 0 ? "\(sign)\(units)" : "\(sign)\(units / 10).\(units % 10)"
    }
}
