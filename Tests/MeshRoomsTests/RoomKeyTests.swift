import Foundation
@testable import MeshRooms
import MeshSession
import Testing

/// Room keys (PROTOCOL.md §15): names normalised, keys derived from the name or a password,
/// lines readable only with the right key and only as their true sender's.
@Suite("room keys")
struct RoomKeyTests {
    static let alice = try! NodeID(hex: "56475aa75463474c0285df5dbf2bcab7")
    static let bob = try! NodeID(hex: "68894d58f18f2c34d49eb2f4b110e042")

    static func line(_ room: String, _ text: String = "hello room") -> RoomTextPayload {
        var payload = RoomTextPayload()
        payload.room = room
        payload.messageID = Data(repeating: 7, count: 16)
        payload.text = text
        payload.sentAtMs = 1_790_000_000_000
        return payload
    }

    @Test("names: # optional, case folded, 1–32 of a-z 0-9 - _; anything else is refused by name")
    func names() throws {
        #expect(try RoomKey.normalizedName("Lunch") == "#lunch")
        #expect(try RoomKey.normalizedName("#team-a_2") == "#team-a_2")
        for bad in ["#", "", "#" + String(repeating: "a", count: 33), "#café", "#a b", "#a/b"] {
            #expect(throws: RoomError.self, "\(bad)") { try RoomKey.normalizedName(bad) }
        }
        #expect(throws: RoomError.self) { try RoomKey(name: "#x", password: String(repeating: "p", count: 257)) }
    }

    @Test("keys: the same name and password give the same key and id; another password, or none, another")
    func derivation() throws {
        let a = try RoomKey(name: "#lunch", password: "secret")
        let b = try RoomKey(name: "#LUNCH", password: "secret")
        let other = try RoomKey(name: "#lunch", password: "Secret")
        let open = try RoomKey(name: "#lunch")
        #expect(a.key == b.key && a.id == b.id && a.key.count == 32 && a.id.count == 16)
        #expect(a.key != other.key && a.id != other.id)
        #expect(open.key != a.key && !open.hasPassword && a.hasPassword)
        #expect(try RoomKey(name: "#dinner", password: "secret").key != a.key, "the name salts the password")
        let restored = try RoomKey(name: a.name, key: a.key, hasPassword: true)
        #expect(restored == a)
    }

    @Test("a line opens with the room's key as its sender's; another key, another sender, a flipped bit or another room's name are refused")
    func sealing() throws {
        let key = try RoomKey(name: "#lunch", password: "secret")
        let sealed = key.seal(Self.line("#lunch"), origin: Self.alice)
        #expect(sealed.roomID == key.id && sealed.nonce.count == 12)
        #expect(try key.open(sealed, origin: Self.alice).text == "hello room")
        #expect(!sealed.ciphertext.contains(Data("hello room".utf8)), "the text is not in clear")
        #expect(throws: RoomError.self) { try key.open(sealed, origin: Self.bob) }
        let wrong = try RoomKey(name: "#lunch", password: "guess")
        #expect(throws: RoomError.self) { try wrong.open(sealed, origin: Self.alice) }
        var forged = sealed
        forged.roomID = wrong.id
        #expect(throws: RoomError.self) { try wrong.open(forged, origin: Self.alice) }
        var flipped = sealed
        flipped.ciphertext[flipped.ciphertext.startIndex] ^= 1
        #expect(throws: RoomError.self) { try key.open(flipped, origin: Self.alice) }
        let misnamed = key.seal(Self.line("#dinner"), origin: Self.alice)
        #expect(throws: RoomError.self) { try key.open(misnamed, origin: Self.alice) }
        var short = sealed
        short.nonce = Data([1])
        #expect(throws: RoomError.self) { try key.open(short, origin: Self.alice) }
    }
}
