import MeshChatKit
import Places
import Testing

/// The places commands: `/here`, `/near`, `/pin`, `/pins`, `/unpin`, `/map`; pure parsing.
@Suite("places commands")
struct PlacesCommandTests {
    static func message(_ line: String) -> String? {
        do {
            _ = try ChatCommand.parse(line)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("/here sets or shows the location")
    func here() throws {
        #expect(try ChatCommand.parse("/here 51.5074,-0.1278") == .here(Coordinate(latitude: 51.5074, longitude: -0.1278)))
        #expect(try ChatCommand.parse("/here") == .here(nil))
        #expect(Self.message("/here 91,0")?.contains("latitude 91 in \"91,0\" is outside -90...90") == true)
        #expect(Self.message("/here london")?.contains("usage: /here [LAT,LON]") == true)
    }

    @Test("/near and /map: an optional radius in m, km, mi or ft (a bare number is metres), then the text")
    func near() throws {
        #expect(try ChatCommand.parse("/near") == .near(radius: nil, text: ""))
        #expect(try ChatCommand.parse("/near pizza hut") == .near(radius: nil, text: "pizza hut"))
        #expect(try ChatCommand.parse("/near 500m") == .near(radius: .metres(500), text: ""))
        #expect(try ChatCommand.parse("/near 5mi pizza") == .near(radius: .miles(5), text: "pizza"))
        #expect(try ChatCommand.parse("/near 250 cafe") == .near(radius: .metres(250), text: "cafe"))
        #expect(try ChatCommand.parse("/near more") == .nearMore(limit: 50))
        #expect(try ChatCommand.parse("/near More 35") == .nearMore(limit: 35))
        #expect(try ChatCommand.parse("/near 2km more") == .near(radius: .kilometres(2), text: "more"))
        #expect(try ChatCommand.parse("/near more pizza places") == .near(radius: nil, text: "more pizza places"))
        #expect(try ChatCommand.parse("/near more pizza") == .near(radius: nil, text: "more pizza"))
        #expect(Self.message("/near more 51")?.contains("from 1 to 50") == true)
        #expect(Self.message("/near more 0")?.contains("from 1 to 50") == true)
        #expect(Self.message("/near more 99999999999999999999")?.contains("from 1 to 50") == true)
        #expect(Self.message("/near 5parsecs")?.contains("unit \"parsecs\"") == true)
        #expect(Self.message("/near 101km")?.contains("out of range") == true)
        #expect(Self.message("/near 0.5m")?.contains("out of range") == true)
        #expect(try ChatCommand.parse("/map 3km") == .map(radius: .kilometres(3)))
        #expect(try ChatCommand.parse("/map") == .map(radius: nil))
        #expect(Self.message("/map big")?.contains("not a radius") == true)
    }

    @Test("/pin: a position with a label (quoted when it has spaces) and a note, or the Nth result")
    func pin() throws {
        let point = Coordinate(latitude: 51.501, longitude: -0.142)
        #expect(try ChatCommand.parse("/pin 51.501,-0.142 gates") == .pin(.point(point, label: "gates"), note: ""))
        #expect(try ChatCommand.parse("/pin 51.501,-0.142 gates at 8") == .pin(.point(point, label: "gates"), note: "at 8"))
        #expect(try ChatCommand.parse("/pin 51.501,-0.142 \"Meet here\" at 8") == .pin(.point(point, label: "Meet here"), note: "at 8"))
        #expect(try ChatCommand.parse("/pin 3") == .pin(.result(3), note: ""))
        #expect(try ChatCommand.parse("/pin 3 lunch?") == .pin(.result(3), note: "lunch?"))
        #expect(Self.message("/pin")?.contains("usage: /pin") == true)
        #expect(Self.message("/pin 0")?.contains("1 or more") == true)
        #expect(Self.message("/pin 51.5,-0.1")?.contains("a label is required") == true)
        #expect(Self.message("/pin 51.5,-0.1 \"open")?.contains("closing \" is missing") == true)
    }

    @Test("/pins, /pins --geojson FILE, /unpin [N|all]")
    func pinsAndUnpin() throws {
        #expect(try ChatCommand.parse("/pins") == .pins(geojson: nil))
        #expect(try ChatCommand.parse("/pins --geojson /tmp/p.geojson") == .pins(geojson: "/tmp/p.geojson"))
        #expect(Self.message("/pins --geojson")?.contains("needs a file name") == true)
        #expect(Self.message("/pins --kml x")?.contains("unknown option") == true)
        #expect(try ChatCommand.parse("/unpin") == .unpin(.only))
        #expect(try ChatCommand.parse("/unpin ALL") == .unpin(.all))
        #expect(try ChatCommand.parse("/unpin 2") == .unpin(.listed(2)))
        #expect(Self.message("/unpin two")?.contains("not a number") == true)
    }
}
