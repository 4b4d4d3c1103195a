import Foundation
import Places

/// A picture, in terminal cells, of the places and pins around a position (`/map [radius]`).
///
/// `MapView` is pure: it queries no terminal and prints nothing. The chat front gives it the
/// terminal's size and whether stdout is a terminal, then prints ``render(places:pins:colour:glyphs:)``
/// (a picture) or ``describe(places:pins:)`` (plain text for scripts and screen readers).
///
/// ## The picture
///
/// 500 m around me in 34 × 9 cells, with three places in one cell, twelve in another, one
/// more, and one pin:
///
/// ```
/// ┌─ N ↑ ──────────────────────────┐
/// │          ···········           │
/// │         ··      3  ··          │
/// │        ··           ··         │
/// │        ·      @A     ·         │
/// │        ·· #         ··         │
/// │         ··       1 ··          │
/// │          ···········           │
/// └─ ├──────┤ 500 m ───────────────┘
/// places 16/16 shown,
/// pins 1/1 shown, radius 500 m
/// @ me  · radius
/// 1-9 places in a cell  # 10 or more
/// A pin
/// A     120 m NE  Café Nero
/// ```
///
/// - The frame is exactly ``width`` × ``height`` cells; north is up (the `N ↑` in the top edge)
///   and the centre cell is me (`@`).
/// - **Projection**: azimuthal equidistant around the centre: every place is drawn at its true
///   great-circle distance (``Geodesy/distance(from:to:)``) and bearing
///   (``Geodesy/bearing(from:to:)``) from me, the same numbers the legend prints, so the scale
///   bar holds in every direction from the centre, and poles and the antimeridian need no special
///   case. An equirectangular map with cos(latitude) scaling would be true only along the centre's
///   parallel and meridian, would need longitude wrapping at ±180°, and degenerates at a pole.
///   Rows are ``cellAspect`` times as tall as columns are wide (2 by default, a typical terminal
///   font), so the circle of ``radius``, drawn with `·`, is round on the screen and fills the
///   frame's shorter half-side.
/// - **Scale bar** in the bottom edge: `├─────┤ 500 m` spans exactly ``MapScale/barCells``
///   columns tick to tick, and that many columns are exactly ``MapScale/barLength`` on the
///   ground, a round 1, 2 or 5 × 10ⁿ m (the scale is chosen to make it so; see ``MapScale``).
/// - **Places** are clustered by cell at the current scale: a digit 1–9 is how many places fall
///   in that cell, `#` means ten or more. **Pins** are drawn over places as letters A–Z then a–z,
///   nearest first, and listed under the legend with their distance and compass point from me;
///   pins beyond the 52nd on the map are drawn `*`. Me is drawn over everything.
/// - Places and pins **outside the frame are left out** of the picture (the frame is the whole
///   rectangle, so its corners show a little beyond the radius). The legend counts them (shown
///   / total), and pins off the map are summed up in one line with the nearest one.
/// - Labels appear only in the lines under the frame, never inside it, sanitised (no control
///   or bidi characters) and cut by display width, so no label can break the frame.
/// - Every line has the same display width, ``width``. With `colour`, places are dim, pins
///   bold bright yellow and me bold; the layout is identical without colour.
///
/// ## Clamping
///
/// Nothing traps on odd input: ``width`` is clamped to ``minimumWidth``…``maximumWidth``,
/// ``height`` to ``minimumHeight``…``maximumHeight``, ``radius`` to ``minimumRadius`` (10 m;
/// 0, negative and NaN give this) … ``maximumRadius`` (half the Earth's circumference, where
/// the antipode is; +∞ gives this), the centre's latitude to −90…90 and its longitude wrapped
/// into −180…180 (NaN gives 0), ``cellAspect`` to 0.5…4. Markers with invalid coordinates are
/// never shown but are counted in the totals.
///
/// This type is a value and is thread-safe.
public struct MapView: Sendable {
    /// Something to show on the map: a place or a pin, by name.
    ///
    /// Whether a marker is a place or a pin is the argument it is passed in; the same position
    /// may be both.
    public struct Marker: Sendable, Hashable {
        /// Where it is.
        public var coordinate: Coordinate
        /// Its name, as given (the map sanitises it for display).
        public var label: String

        /// Creates a marker.
        /// - Parameters:
        ///   - label: Its name.
        ///   - coordinate: Where it is.
        public init(_ label: String, at coordinate: Coordinate) {
            self.label = label
            self.coordinate = coordinate
        }

        /// A marker for a place from a data set, named by its display name.
        /// - Parameter place: The place.
        public init(_ place: Place) {
            self.init(place.displayName, at: place.coordinate)
        }
    }

    /// The narrowest picture, in cells (room for the scale bar and its label in the bottom edge).
    public static let minimumWidth = 24
    /// The shortest picture, in cells (frame plus five rows).
    public static let minimumHeight = 7
    /// The widest picture, in cells.
    public static let maximumWidth = 1000
    /// The tallest picture's frame, in cells.
    public static let maximumHeight = 500
    /// The smallest radius: 10 m, about the precision of a phone's position.
    public static let minimumRadius = Distance(metres: 10)
    /// The largest radius: half the Earth's circumference (π R), the distance to the antipode,
    /// beyond which an azimuthal map has nothing more to show.
    public static let maximumRadius = Distance(metres: .pi * Geodesy.earthRadius)

    /// The centre: my position, normalised (latitude clamped, longitude wrapped).
    public let centre: Coordinate
    /// The radius that fits in the frame, clamped to ``minimumRadius`` … ``maximumRadius``.
    public let radius: Distance
    /// The frame's width in cells, clamped to ``minimumWidth`` … ``maximumWidth``; every line of
    /// the picture is this wide.
    public let width: Int
    /// The frame's height in cells, clamped to ``minimumHeight`` … ``maximumHeight``; the legend
    /// lines follow it.
    public let height: Int
    /// A terminal cell's height over its width, clamped to 0.5 … 4.
    public let cellAspect: Double
    /// Metres per cell and the scale bar.
    public let scale: MapScale
    /// Where positions fall.
    let projection: MapProjection

    /// Creates a map.
    /// - Parameters:
    ///   - centre: My position.
    ///   - radius: How far around me to show; the circle of this radius fits the frame.
    ///   - width: The picture's width in terminal cells (the terminal's columns, say).
    ///   - height: The frame's height in terminal cells; the legend adds lines below it.
    ///   - cellAspect: A terminal cell's height over its width (2 for most fonts).
    public init(centre: Coordinate, radius: Distance, width: Int, height: Int, cellAspect: Double = 2) {
        self.centre = Self.normalised(centre)
        self.radius = Distance(metres: Self.clamp(radius.metres, Self.minimumRadius.metres, Self.maximumRadius.metres, nan: Self.minimumRadius.metres))
        self.width = min(max(width, Self.minimumWidth), Self.maximumWidth)
        self.height = min(max(height, Self.minimumHeight), Self.maximumHeight)
        self.cellAspect = Self.clamp(cellAspect, 0.5, 4, nan: 2)
        let columns = self.width - 2
        let rows = self.height - 2
        // The bar and its label ("├────┤ 10000 km") must fit in the bottom edge between "└─ " and " ─┘".
        let longestBar = max(2, min(columns / 3, self.width - 16))
        let shortestBar = min(max(2, columns / 6), longestBar)
        self.scale = MapScale.fitting(
            radius: self.radius.metres,
            halfColumns: MapProjection.halfColumns(columns),
            halfRows: MapProjection.halfRows(rows),
            aspect: self.cellAspect,
            barCells: shortestBar...longestBar
        )
        self.projection = MapProjection(centre: self.centre, scale: scale, columns: columns, rows: rows)
    }

    private static func clamp(_ value: Double, _ low: Double, _ high: Double, nan: Double) -> Double {
        value.isNaN ? nan : min(max(value, low), high)
    }

    private static func normalised(_ c: Coordinate) -> Coordinate {
        let latitude = clamp(c.latitude, -90, 90, nan: 0)
        var longitude = c.longitude.isFinite ? c.longitude : 0
        if longitude < -180 || longitude > 180 {
            longitude = (longitude + 180).truncatingRemainder(dividingBy: 360)
            if longitude < 0 { longitude += 360 }
            longitude -= 180
        }
        return Coordinate(latitude: latitude, longitude: longitude)
    }
}

extension MapView {
    /// The farthest distance from the centre that the frame shows (its corners): fetch markers
    /// within this to fill the whole picture.
    public var reach: Distance {
        let columns = Double(width - 2) / 2 + 1, rows = Double(height - 2) / 2 + 1
        return .metres(((columns * scale.metresPerColumn) * (columns * scale.metresPerColumn)
            + (rows * scale.metresPerRow) * (rows * scale.metresPerRow)).squareRoot())
    }
}

extension MapView {
    /// The frame for a terminal of `columns` × `rows` cells: at most 120 wide, 10 to 40 high,
    /// four rows less than the terminal (the legend's first lines, the status and input rows).
    /// - Parameter screen: the terminal's size.
    /// - Returns: the frame's width and height.
    public static func size(forScreen screen: (columns: Int, rows: Int)) -> (width: Int, height: Int) {
        (width: min(max(screen.columns, 1), 120), height: min(max(screen.rows - 4, 10), 40))
    }

    /// The picture for a terminal of `screen` cells: the frame of ``size(forScreen:)``, made
    /// lower (down to ``minimumHeight``) until frame and legend fit above the status and input
    /// rows, so that the top of the map stays on the screen whatever the legend holds (on a
    /// terminal too low even for the lowest frame, the legend's last lines give way to a line
    /// that counts them).
    /// - Parameters:
    ///   - centre: the map's centre.
    ///   - radius: the radius it shows.
    ///   - screen: the terminal's size now.
    ///   - picture: draws a view (its markers may depend on the view's reach).
    /// - Returns: the lines.
    public static func fitting(centre: Coordinate, radius: Distance, screen: (columns: Int, rows: Int),
                               picture: (MapView) async throws -> [String]) async rethrows -> [String] {
        let size = size(forScreen: screen)
        let room = screen.rows - 2
        var height = size.height
        while true {
            let view = MapView(centre: centre, radius: radius, width: size.width, height: height)
            let lines = try await picture(view)
            // Each try takes the overflow off the frame; a smaller frame may letter fewer pins, so try again.
            guard lines.count > room else { return lines }
            guard view.height > minimumHeight else {
                // Even the lowest frame leaves no room for the whole legend: its last lines give way.
                let kept = max(room - 1, view.height)
                guard lines.count > kept + 1 else { return lines }
                let cut = lines.count - kept
                return Array(lines.prefix(kept)) + [TerminalText.truncated("… \(cut) more legend lines: a taller terminal shows them", toWidth: view.width, ellipsis: "…")]
            }
            height = max(min(view.height - (lines.count - room), view.height - 1), minimumHeight)
        }
    }
}
