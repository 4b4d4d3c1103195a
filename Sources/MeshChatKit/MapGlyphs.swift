/// The characters a ``MapView`` picture is drawn with.
///
/// ``unicode`` uses box-drawing characters; ``ascii`` only printable ASCII, for terminals whose
/// fonts lack them or that draw East Asian Ambiguous characters (box drawing, `↑`, `·`, `…`) two
/// cells wide, where the Unicode frame would not line up. Every glyph must be one cell wide.
///
/// This type is a value and is thread-safe.
public struct MapGlyphs: Sendable, Hashable {
    /// The frame's top left corner.
    public var topLeft: Character
    /// The frame's top right corner.
    public var topRight: Character
    /// The frame's bottom left corner.
    public var bottomLeft: Character
    /// The frame's bottom right corner.
    public var bottomRight: Character
    /// The frame's top and bottom edges.
    public var horizontal: Character
    /// The frame's left and right edges.
    public var vertical: Character
    /// The scale bar's left tick (`├────┤`).
    public var barLeft: Character
    /// The scale bar's right tick.
    public var barRight: Character
    /// The scale bar between its ticks.
    public var barFill: Character
    /// The north arrow, written into the top edge near the left corner ("N ↑").
    public var north: String
    /// The circle of the map's radius.
    public var ring: Character
    /// My position, at the centre.
    public var me: Character
    /// A cell with ten or more places.
    public var manyPlaces: Character
    /// A pin beyond the 52 that get letters.
    public var extraPin: Character
    /// What ends a label cut to fit.
    public var ellipsis: String

    /// Creates a glyph set; each character must take one terminal cell.
    /// - Parameters:
    ///   - corners: The frame's corners: top left, top right, bottom left, bottom right.
    ///   - horizontal: Top and bottom edges.
    ///   - vertical: Left and right edges.
    ///   - barLeft: The scale bar's left tick.
    ///   - barRight: Its right tick.
    ///   - barFill: Its fill.
    ///   - north: The north arrow text.
    ///   - ring: The radius circle.
    ///   - me: My position.
    ///   - manyPlaces: Ten or more places in a cell.
    ///   - extraPin: A pin without a letter.
    ///   - ellipsis: The end of a cut label.
    public init(
        corners: (Character, Character, Character, Character), horizontal: Character, vertical: Character,
        barLeft: Character, barRight: Character, barFill: Character, north: String, ring: Character,
        me: Character, manyPlaces: Character, extraPin: Character, ellipsis: String
    ) {
        (topLeft, topRight, bottomLeft, bottomRight) = corners
        self.horizontal = horizontal
        self.vertical = vertical
        self.barLeft = barLeft
        self.barRight = barRight
        self.barFill = barFill
        self.north = north
        self.ring = ring
        self.me = me
        self.manyPlaces = manyPlaces
        self.extraPin = extraPin
        self.ellipsis = ellipsis
    }

    /// Box drawing: `┌─ N ↑ ──┐`, `│`, `└─ ├────┤ 500 m ──┘`, `·` for the radius, `…` for cuts.
    public static let unicode = MapGlyphs(
        corners: ("┌", "┐", "└", "┘"), horizontal: "─", vertical: "│",
        barLeft: "├", barRight: "┤", barFill: "─", north: "N ↑", ring: "·",
        me: "@", manyPlaces: "#", extraPin: "*", ellipsis: "…"
    )

    /// Printable ASCII only: `+- N ^ --+`, `|`, `+- |----| 500 m --+`, `.` for the radius.
    public static let ascii = MapGlyphs(
        corners: ("+", "+", "+", "+"), horizontal: "-", vertical: "|",
        barLeft: "|", barRight: "|", barFill: "-", north: "N ^", ring: ".",
        me: "@", manyPlaces: "#", extraPin: "*", ellipsis: "..."
    )
}
