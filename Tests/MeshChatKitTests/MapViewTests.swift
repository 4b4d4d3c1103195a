import Foundation
@testable import MeshChatKit
import Places
import Testing

/// `MapView`: the `/map` picture and its plain-text description. Pure, no terminal.
@Suite("map view")
struct MapViewTests {
    // MARK: Helpers

    static let london = Coordinate(latitude: 51.5074, longitude: -0.1278)

    /// The position `metres` from `start` along the great circle leaving it at `bearing` degrees
    /// (the spherical "direct" formula, independent of the code under test).
    static func destination(from start: Coordinate, metres: Double, bearing: Double) -> Coordinate {
        let delta = metres / Geodesy.earthRadius
        let theta = bearing * .pi / 180
        let phi1 = start.latitude * .pi / 180
        let lambda1 = start.longitude * .pi / 180
        let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
        let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
        var longitude = lambda2 * 180 / .pi
        if longitude > 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        return Coordinate(latitude: phi2 * 180 / .pi, longitude: longitude)
    }

    /// `count` places named `name 1`, `name 2`… at one position.
    static func places(_ count: Int, _ name: String, at coordinate: Coordinate) -> [MapView.Marker] {
        (1...count).map { MapView.Marker("\(name) \($0)", at: coordinate) }
    }

    /// The text with ANSI SGR sequences removed.
    static func stripped(_ line: String) -> String {
        line.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    /// Display width as a terminal draws the characters these tests use: CJK ideographs, kana
    /// and the emoji block take two cells, combining diacritics none, the rest one.
    static func cells(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            switch scalar.value {
            case 0x0300...0x036F: total
            case 0x3040...0x30FF, 0x4E00...0x9FFF, 0x1F300...0x1FAFF: total + 2
            default: total + 1
            }
        }
    }

    /// Where a character first appears inside the frame: (row, column) counted in characters,
    /// which are cells for the frame (all its glyphs are one cell wide).
    static func find(_ glyph: Character, in lines: [String], frameHeight: Int) -> (row: Int, column: Int)? {
        for (row, line) in lines.prefix(frameHeight).enumerated().dropFirst().dropLast() {
            let characters = Array(stripped(line))
            if let column = characters.dropFirst().dropLast().firstIndex(of: glyph) { return (row, column) }
        }
        return nil
    }

    /// The scale bar in the bottom edge: columns tick to tick, and its label in metres.
    static func scaleBar(_ bottomEdge: String, glyphs: MapGlyphs = .unicode) throws -> (cells: Int, metres: Double) {
        let characters = Array(stripped(bottomEdge))
        let left = try #require(characters.dropFirst().firstIndex(of: glyphs.barLeft))
        let right = try #require(characters[(left + 1)...].firstIndex(of: glyphs.barRight))
        let rest = String(characters[(right + 1)...]).split(separator: " ")
        let number = try #require(Double(rest[0]))
        let metres = rest[1] == "km" ? number * 1000 : number
        #expect(rest[1] == "km" || rest[1] == "m")
        return (right - left, metres)
    }

    // MARK: Direction and projection

    @Test("north is up, east is right, south is down, west is left")
    func directions() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let places = Self.places(1, "north", at: Self.destination(from: Self.london, metres: 600, bearing: 0))
            + Self.places(2, "east", at: Self.destination(from: Self.london, metres: 600, bearing: 90))
            + Self.places(3, "south", at: Self.destination(from: Self.london, metres: 600, bearing: 180))
            + Self.places(4, "west", at: Self.destination(from: Self.london, metres: 600, bearing: 270))
        let lines = map.render(places: places, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let north = try #require(Self.find("1", in: lines, frameHeight: map.height))
        let east = try #require(Self.find("2", in: lines, frameHeight: map.height))
        let south = try #require(Self.find("3", in: lines, frameHeight: map.height))
        let west = try #require(Self.find("4", in: lines, frameHeight: map.height))
        #expect(north.column == me.column && north.row < me.row)
        #expect(east.row == me.row && east.column > me.column)
        #expect(south.column == me.column && south.row > me.row)
        #expect(west.row == me.row && west.column < me.column)
        // Symmetric about me.
        #expect(me.row - north.row == south.row - me.row)
        #expect(east.column - me.column == me.column - west.column)
    }

    @Test("the radius circle is round on 2:1 cells and fills the frame's shorter side")
    func roundAndFilling() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let north = Self.places(1, "n", at: Self.destination(from: Self.london, metres: 1000, bearing: 0))
        let east = Self.places(2, "e", at: Self.destination(from: Self.london, metres: 1000, bearing: 90))
        let lines = map.render(places: north + east, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let n = try #require(Self.find("1", in: lines, frameHeight: map.height))
        let e = try #require(Self.find("2", in: lines, frameHeight: map.height))
        let up = me.row - n.row
        let right = e.column - me.column
        // 18 inner rows: 8 above the centre row, 9 below. At least 90 % of the way to the edge.
        #expect(up >= 8)
        #expect(abs(Double(right) - 2 * Double(up)) <= 1.5)
    }

    @Test("across the antimeridian: a centre at 179.9° E shows places at 179.9° W just east of it")
    func antimeridian() throws {
        let centre = Coordinate(latitude: 0, longitude: 179.9)
        let map = MapView(centre: centre, radius: .kilometres(50), width: 60, height: 20)
        let east = Self.places(1, "e", at: Coordinate(latitude: 0, longitude: -179.9))
        let west = Self.places(2, "w", at: Coordinate(latitude: 0, longitude: 179.5))
        let lines = map.render(places: east + west, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let e = try #require(Self.find("1", in: lines, frameHeight: map.height))
        let w = try #require(Self.find("2", in: lines, frameHeight: map.height))
        #expect(e.row == me.row && e.column > me.column)
        #expect(w.row == me.row && w.column < me.column)
        // 22.2 km east is about twice as close as 44.5 km west.
        #expect(abs(2 * (e.column - me.column) - (me.column - w.column)) <= 2)
        #expect(lines.contains { $0.hasPrefix("places 3/3 shown") })
    }

    @Test("at the North Pole places on opposite meridians are drawn on opposite sides of me")
    func pole() throws {
        let map = MapView(centre: Coordinate(latitude: 90, longitude: 0), radius: .kilometres(1000), width: 60, height: 20)
        let greenwich = Self.places(1, "g", at: Coordinate(latitude: 85, longitude: 0))
        let dateLine = Self.places(2, "d", at: Coordinate(latitude: 85, longitude: 180))
        let lines = map.render(places: greenwich + dateLine, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let g = try #require(Self.find("1", in: lines, frameHeight: map.height))
        let d = try #require(Self.find("2", in: lines, frameHeight: map.height))
        #expect(g.column == me.column && d.column == me.column)
        #expect((g.row - me.row) == -(d.row - me.row) && g.row != me.row)
    }

    // MARK: Scale bar

    struct ScaleCase: Sendable, CustomTestStringConvertible {
        var centre: Coordinate
        var radius: Double
        var width: Int
        var height: Int
        var testDescription: String { "\(width)×\(height), r \(radius) m at \(centre)" }
    }

    @Test("the scale bar is a round length, and a place that far east is that many columns right of me", arguments: [
        ScaleCase(centre: Coordinate(latitude: 0, longitude: 0), radius: 1000, width: 60, height: 20),
        ScaleCase(centre: Coordinate(latitude: 0, longitude: 0), radius: 5000, width: 80, height: 24),
        ScaleCase(centre: Coordinate(latitude: 60, longitude: 10), radius: 2000, width: 60, height: 20),
        ScaleCase(centre: Coordinate(latitude: -33.9, longitude: 151.2), radius: 300_000, width: 200, height: 60),
        ScaleCase(centre: Coordinate(latitude: 0, longitude: 0), radius: 10, width: 24, height: 7),
        ScaleCase(centre: Coordinate(latitude: 0, longitude: 0), radius: 5_000_000, width: 120, height: 40),
    ])
    func scaleBar(_ c: ScaleCase) throws {
        let map = MapView(centre: c.centre, radius: .metres(c.radius), width: c.width, height: c.height)
        let plain = map.render(places: [], pins: [], colour: false)
        let bar = try Self.scaleBar(plain[map.height - 1])
        let mantissa = bar.metres / pow(10, floor(log10(bar.metres)))
        #expect([1.0, 2.0, 5.0].contains { abs($0 - mantissa) < 1e-9 }, "bar \(bar.metres) m is not 1, 2 or 5 × 10ⁿ")
        #expect(bar.cells >= 2)
        let place = Self.places(1, "bar", at: Self.destination(from: c.centre, metres: bar.metres, bearing: 90))
        let lines = map.render(places: place, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let p = try #require(Self.find("1", in: lines, frameHeight: map.height))
        #expect(p.row == me.row)
        #expect(abs(p.column - me.column - bar.cells) <= 1, "bar \(bar.cells) cells, place \(p.column - me.column) cells")
        // And the same length north is half as many rows (cells are twice as tall as wide).
        let north = Self.places(1, "bar", at: Self.destination(from: c.centre, metres: bar.metres, bearing: 0))
        let northLines = map.render(places: north, pins: [], colour: false)
        let n = try #require(Self.find("1", in: northLines, frameHeight: map.height))
        #expect(abs(Double(me.row - n.row) - Double(bar.cells) / 2) <= 1)
        #expect(n.column == me.column)
    }

    // MARK: Clusters and pins

    @Test("places are counted per cell: 1-9 as digits, 10 or more as #, and the legend says so")
    func clusters() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let spot = Self.destination(from: Self.london, metres: 500, bearing: 45)
        let other = Self.destination(from: Self.london, metres: 500, bearing: 225)
        let far = Self.places(1, "far", at: Self.destination(from: Self.london, metres: 50_000, bearing: 0))
        let places = Self.places(12, "spot", at: spot) + Self.places(3, "other", at: other) + far
        let lines = map.render(places: places, pins: [], colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let many = try #require(Self.find("#", in: lines, frameHeight: map.height))
        let three = try #require(Self.find("3", in: lines, frameHeight: map.height))
        #expect(many.row < me.row && many.column > me.column)
        #expect(three.row > me.row && three.column < me.column)
        #expect(Self.find("1", in: lines, frameHeight: map.height) == nil, "the far place is off the map")
        let legend = lines[map.height...].joined(separator: "\n")
        #expect(legend.contains("places 15/16 shown"))
        #expect(legend.contains("# 10 or more"))
        #expect(legend.contains("1-9 places in a cell"))
        #expect(legend.contains("radius 1 km"))
        let text = map.describe(places: places, pins: [])
        #expect(text.contains("12 places: 500 m NE, nearest spot 1"))
        #expect(text.contains("3 places: 500 m SW, nearest other 1"))
        #expect(text[0].contains("15 of 16 places in 2 cells"))
    }

    @Test("55,000 places in a city render in bounded space")
    func manyPlaces() {
        var places: [MapView.Marker] = []
        for i in 0..<55_000 {
            let metres = Double(i % 1500)
            places.append(MapView.Marker("r\(i)", at: Self.destination(from: Self.london, metres: metres, bearing: Double(i % 360))))
        }
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let lines = map.render(places: places, pins: [], colour: false)
        #expect((22...24).contains(lines.count))
        #expect(lines.allSatisfy { $0.count == 60 })
        #expect(lines.prefix(20).joined().contains("#"))
    }

    @Test("pins are lettered nearest first, drawn over places and listed with distance and compass point")
    func pins() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let near = Self.destination(from: Self.london, metres: 250, bearing: 180)
        let far = Self.destination(from: Self.london, metres: 700, bearing: 45)
        let away = Self.destination(from: Self.london, metres: 35_000, bearing: 300)
        let pins = [
            MapView.Marker("Tate", at: far), MapView.Marker("Borough Market", at: near),
            MapView.Marker("Heathrow", at: away),
        ]
        let places = Self.places(5, "under", at: near)
        let lines = map.render(places: places, pins: pins, colour: false)
        let me = try #require(Self.find("@", in: lines, frameHeight: map.height))
        let a = try #require(Self.find("A", in: lines, frameHeight: map.height))
        let b = try #require(Self.find("B", in: lines, frameHeight: map.height))
        #expect(a.column == me.column && a.row > me.row)
        #expect(b.column > me.column && b.row < me.row)
        #expect(Self.find("5", in: lines, frameHeight: map.height) == nil, "pin A is drawn over the 5 places")
        #expect(Self.find("C", in: lines, frameHeight: map.height) == nil)
        let legend = lines[map.height...].map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(legend.contains("A     250 m S   Borough Market"))
        #expect(legend.contains("B     700 m NE  Tate"))
        #expect(legend.contains("1 pin off the map, nearest 35 km NW: Heathrow"))
        #expect(legend.contains { $0.hasPrefix("places 5/5 shown, pins 2/3 shown,") })
        #expect(legend.contains { $0.contains("A-B pins") })

        let text = map.describe(places: places, pins: pins)
        #expect(Array(text.dropFirst()) == [
            "pin A: 250 m S, Borough Market",
            "5 places: 250 m S, nearest under 1",
            "pin B: 700 m NE, Tate",
            "pin: 35 km NW, off the map, Heathrow",
        ])
    }

    @Test("what me hides in the centre cell is named in the key")
    func underMe() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let close = Self.destination(from: Self.london, metres: 5, bearing: 90)
        let lines = map.render(places: Self.places(2, "p", at: close), pins: [MapView.Marker("x", at: close)], colour: false)
        #expect(lines.contains { $0.hasPrefix("@ me, over 2 places and pin A  ") })
        #expect(Self.find("A", in: lines, frameHeight: map.height) == nil)
        #expect(lines.contains { $0.hasPrefix("A       5 m E   x") })
        let bare = map.render(places: [], pins: [], colour: false)
        #expect(bare.contains { $0.hasPrefix("@ me  ") })
    }

    @Test("more than 52 pins on the map: the rest are drawn * and summed up")
    func manyPins() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let pins = (0..<60).map { i in
            MapView.Marker("p\(i)", at: Self.destination(from: Self.london, metres: Double(100 + 10 * i), bearing: Double(i * 6)))
        }
        let lines = map.render(places: [], pins: pins, colour: false)
        let legend = lines[map.height...].map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(legend.contains { $0.contains("A-z pins") })
        #expect(legend.contains { $0.hasPrefix("z ") && $0.hasSuffix("p51") })
        #expect(legend.contains("* 8 more pins, nearest 620 m NW: p52"))
        #expect(Self.find("*", in: lines, frameHeight: map.height) != nil)
    }

    // MARK: Layout, colour and odd input

    static let awkwardLabels = [
        String(repeating: "東京タワー展望台の一番上の階にあるとても長い名前の喫茶店です", count: 2), "Cafe\u{301} Ne\u{301}ro", "🍣 Sushi",
        "evil\u{1B}[2J\u{1B}[31mred", "tab\there\nnewline", "\u{202E}reversed", "",
        String(repeating: "x", count: 300),
    ]

    @Test("every line has the same display width, colour or not, Unicode or ASCII, whatever the labels", arguments: [
        (60, 20), (24, 7), (100, 30),
    ])
    func equalWidths(width: Int, height: Int) {
        let map = MapView(centre: Self.london, radius: .kilometres(2), width: width, height: height)
        let pins = Self.awkwardLabels.enumerated().map { i, label in
            MapView.Marker(label, at: Self.destination(from: Self.london, metres: Double(200 * (i + 1)), bearing: Double(i * 40)))
        }
        let places = Self.awkwardLabels.map { MapView.Marker($0, at: Self.destination(from: Self.london, metres: 900, bearing: 10)) }
        for glyphs in [MapGlyphs.unicode, .ascii] {
            for colour in [false, true] {
                let lines = map.render(places: places, pins: pins, colour: colour, glyphs: glyphs)
                #expect(lines.count > height)
                for line in lines {
                    #expect(Self.cells(Self.stripped(line)) == width, "\(line)")
                }
            }
        }
        // The long CJK label is cut with an ellipsis, not allowed to run on.
        let lines = map.render(places: [], pins: pins, colour: false)
        #expect(lines.contains { $0.contains("東京") && $0.trimmingCharacters(in: .whitespaces).hasSuffix("…") })
    }

    @Test("without colour there are no escape bytes (labels' own are removed); with colour, only escapes are added")
    func colour() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(2), width: 60, height: 20)
        let pins = Self.awkwardLabels.enumerated().map { i, label in
            MapView.Marker(label, at: Self.destination(from: Self.london, metres: Double(250 * (i + 1)), bearing: Double(i * 40)))
        }
        let places = Self.places(3, "p", at: Self.destination(from: Self.london, metres: 1500, bearing: 160))
        let plain = map.render(places: places, pins: pins, colour: false)
        #expect(!plain.joined().utf8.contains(0x1B))
        #expect(!plain.joined().contains("\u{202E}"))
        #expect(!map.describe(places: places, pins: pins).joined().utf8.contains(0x1B))
        let coloured = map.render(places: places, pins: pins, colour: true)
        #expect(coloured.map(Self.stripped) == plain)
        let frame = coloured.prefix(map.height).joined()
        #expect(frame.contains("\u{1B}[1m@\u{1B}[0m"), "me bold")
        #expect(frame.contains("\u{1B}[2m3\u{1B}[0m"), "places dim")
        #expect(frame.contains("\u{1B}[1;93mA\u{1B}[0m"), "pins bright")
    }

    struct Degenerate: Sendable, CustomTestStringConvertible {
        var width: Int
        var height: Int
        var radius: Double
        var aspect: Double = 2
        var centre = Coordinate(latitude: 51.5, longitude: 0)
        var testDescription: String { "\(width)×\(height) r \(radius) aspect \(aspect) at \(centre)" }
    }

    @Test("degenerate sizes, radii and centres are clamped, never trap", arguments: [
        Degenerate(width: 0, height: 0, radius: 0),
        Degenerate(width: -5, height: -1, radius: -100),
        Degenerate(width: 1, height: 1, radius: .nan),
        Degenerate(width: 23, height: 6, radius: .infinity),
        Degenerate(width: 24, height: 7, radius: 1e12, aspect: 0.1),
        Degenerate(width: 2000, height: 900, radius: 10, aspect: .nan),
        Degenerate(width: 60, height: 20, radius: 1000, centre: Coordinate(latitude: .nan, longitude: .infinity)),
        Degenerate(width: 60, height: 20, radius: 1000, centre: Coordinate(latitude: -95, longitude: 540)),
        Degenerate(width: 40, height: 12, radius: 20_037_000, centre: Coordinate(latitude: -90, longitude: 0)),
    ])
    func degenerate(_ c: Degenerate) throws {
        let map = MapView(centre: c.centre, radius: .metres(c.radius), width: c.width, height: c.height, cellAspect: c.aspect)
        #expect((MapView.minimumWidth...MapView.maximumWidth).contains(map.width))
        #expect((MapView.minimumHeight...MapView.maximumHeight).contains(map.height))
        #expect(map.radius >= MapView.minimumRadius && map.radius <= MapView.maximumRadius)
        #expect(map.centre.isValid)
        let places = [
            MapView.Marker("here", at: map.centre), MapView.Marker("bad", at: Coordinate(latitude: .nan, longitude: 0)),
            MapView.Marker("antipode", at: Coordinate(latitude: -map.centre.latitude, longitude: map.centre.longitude + 180 > 180 ? map.centre.longitude - 180 : map.centre.longitude + 180)),
        ]
        let lines = map.render(places: places, pins: places, colour: false)
        #expect(lines.allSatisfy { Self.cells($0) == map.width })
        #expect(Self.find("@", in: lines, frameHeight: map.height) != nil)
        _ = try Self.scaleBar(lines[map.height - 1])
        #expect(map.describe(places: places, pins: places).count >= 1)
    }

    @Test("the clamps: 0 m becomes 10 m, beyond the antipode becomes half the circumference, sizes to their limits")
    func clamps() {
        #expect(MapView(centre: Self.london, radius: .metres(0), width: 1, height: 1).radius == .metres(10))
        let huge = MapView(centre: Self.london, radius: .kilometres(1e9), width: 5000, height: 5000)
        #expect(huge.radius.metres == .pi * Geodesy.earthRadius)
        #expect(huge.width == 1000 && huge.height == 500)
        let wrapped = MapView(centre: Coordinate(latitude: 10, longitude: 190), radius: .metres(100), width: 60, height: 20)
        #expect(abs(wrapped.centre.longitude - -170) < 1e-9)
    }

    @Test("no places and no pins: a map with me, the legend and a one-line description")
    func empty() throws {
        let map = MapView(centre: Self.london, radius: .kilometres(1), width: 60, height: 20)
        let lines = map.render(places: [], pins: [], colour: false)
        #expect(lines.count == 22)
        #expect(lines[0].hasPrefix("┌─ N ↑ ─") && lines[0].hasSuffix("┐"))
        #expect(lines[19].hasPrefix("└─ ├─") && lines[19].hasSuffix("┘"))
        #expect(lines[20].hasPrefix("places 0/0 shown, pins 0/0 shown, radius 1 km"))
        #expect(!lines[21].contains("pins"), "no pin key without pins")
        #expect(map.describe(places: [], pins: []) == [
            "map: 1 km around 51.50740 N, 0.12780 W; 0 of 0 places in 0 cells, 0 of 0 pins; a cell is 59 m wide and 118 m tall",
        ])
    }

    // MARK: Words and widths

    @Test("distances and compass points in words", arguments: [
        (0.0, 0.0, "here"), (12.4, 44.0, "12 m NE"), (999.4, 90, "999 m E"), (999.6, 135, "1 km SE"),
        (1234, 180, "1.2 km S"), (35_400, 225, "35 km SW"), (800, 270, "800 m W"), (800, 338, "800 m N"),
        (800, 337, "800 m NW"), (800, -10, "800 m N"),
    ])
    func wording(metres: Double, bearing: Double, expected: String) {
        #expect(MapWording.whereabouts(distance: metres, bearing: bearing) == expected)
    }

    @Test("display widths: wide, combining, emoji; cutting never splits a character")
    func widths() {
        #expect(TerminalText.displayWidth("東京") == 4)
        #expect(TerminalText.displayWidth("Cafe\u{301}") == 4)
        #expect(TerminalText.displayWidth("🍣") == 2)
        #expect(TerminalText.displayWidth("❤\u{FE0F}") == 2)
        #expect(TerminalText.truncated("東京タワー", toWidth: 6, ellipsis: "…") == "東京…")
        #expect(TerminalText.truncated("Cafe\u{301}s", toWidth: 4, ellipsis: "…") == "Caf…")
        #expect(TerminalText.sanitised(" a\u{1B}[31m\tb\u{202E}c\n ") == "a [31m bc")
    }

    @Test("a terminal of 60 x 20 with a long legend: the frame shrinks until frame and legend fit above the status and input rows")
    func fitsTheScreen() async {
        let size = MapView.size(forScreen: (columns: 60, rows: 20))
        #expect(size.width == 60 && size.height == 16)
        let pins = (0..<8).map { MapView.Marker("pin \($0)", at: Self.destination(from: Self.london, metres: 200 + 50 * Double($0), bearing: Double(40 * $0))) }
        let whole = MapView(centre: Self.london, radius: .kilometres(1), width: size.width, height: size.height)
        #expect(whole.render(places: [], pins: pins, colour: false).count > 18, "the legend should not fit beside a full-height frame")
        for screen in [(columns: 60, rows: 20), (columns: 40, rows: 14), (columns: 120, rows: 30)] {
            let lines = await MapView.fitting(centre: Self.london, radius: .kilometres(1), screen: screen) { view in
                view.render(places: [], pins: pins, colour: false)
            }
            #expect(lines.count <= screen.rows - 2, "\(screen): \(lines.count) lines")
            #expect(lines.allSatisfy { TerminalText.displayWidth($0) <= screen.columns }, "\(screen)")
            #expect(lines.first?.contains("N") == true, "the top edge with its north arrow comes first")
        }
        #expect(MapView.size(forScreen: (columns: 300, rows: 200)) == (width: 120, height: 40))
    }
}
