import Foundation
import Logging
import MeshRooms
import MeshSession
import MeshTestSupport
import Testing

/// Rooms alone on the in-memory tier: A—B—C on an `InMemoryFabric` (no sockets, virtual time),
/// a ``RoomChannel`` on each; a line sealed to a room crosses two hops and opens only with its key.
@Suite("Rooms on the in-memory mesh")
struct RoomsInMemoryTests {
    static func text(_ key: RoomKey, _ line: String) -> RoomTextPayload {
        var text = RoomTextPayload()
        text.room = key.name
        text.messageID = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        text.text = line
        text.sentAtMs = 1
        return text
    }

    /// The next room line on a room channel (channel 2), skipping other messages.
    static func nextLine(_ channel: RoomChannel, in mesh: TestMesh) async throws -> RoomLine {
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        return try await mesh.next(channel.channel.messages) { RoomChannel.line($0, logger: logger) }
    }

    @Test("a line sealed to #lunch by A crosses B to C (2 hops) and opens with the room's key; B, in another room, and a wrong password cannot open it")
    func lineAcrossTwoHops() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob", "carol"])
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A reaches C") { a.session.route(to: c.peer)?.hops == 2 }
            let rooms = try nodes.map { try RoomChannel(session: $0.session, logger: $0.logs.logger(label: "\($0.name).rooms")) }
            let lunch = try RoomKey(name: "#lunch", password: "soup"), dinner = try RoomKey(name: "#dinner")

            let nobody = try await rooms[0].send(Self.text(lunch, "noon at the usual place"), key: lunch)
            #expect(!nobody)
            let atC = try await Self.nextLine(rooms[2], in: mesh)
            #expect(atC.sender.id == a.peer.id && atC.hops == 2)
            #expect(try lunch.open(atC.chat, origin: atC.sender.id).text == "noon at the usual place")
            #expect(throws: RoomError.self) { try lunch.open(atC.chat, origin: b.peer.id) }
            #expect(throws: RoomError.self) { try RoomKey(name: "#lunch", password: "stew").open(atC.chat, origin: atC.sender.id) }

            let atB = try await Self.nextLine(rooms[1], in: mesh)
            #expect(atB.hops == 1 && atB.chat == atC.chat, "the relay carries the same sealed line")
            #expect(atB.chat.roomID != dinner.id)
            #expect(throws: RoomError.self) { try dinner.open(atB.chat, origin: atB.sender.id) }
        }
    }
}
