import Foundation
import Logging
import MeshLink
@testable import MeshPlaces
import MeshSession
import MeshStore
import SwiftProtobuf
import Places
import Testing

/// `PlaceService.handle` with hand-made channel 3 messages: hostile and misdirected places messages are
/// dropped without an event, valid pins are stored once, only authors withdraw, a catch-up replaces.
/// (A session that never starts: nothing here sends.)
@Suite("places service input")
struct PlaceServiceInputTests {
    let store: MessageStore
    let service: PlaceService
    let bob = try! PeerID(id: .random(), displayName: "bob")
    let carol = try! PeerID(id: .random(), displayName: "carol")

    init() throws {
        store = try MessageStore.inMemory()
        let me = try LocalPeer(displayName: "alice", identity: try LocalIdentity.generate())
        let session = Session(peer: me, configuration: .init(), logger: Logger(label: "test"))
        service = try PlaceService(session: session, store: store, local: LocalPlaces(), logger: Logger(label: "test"))
    }

    func pinMessage(label: String = "Meet here", id: NodeID = .random(), life: Int64 = 3_600_000) -> PlacesPayload {
        var pin = PinPayload()
        pin.pinID = Data(id.bytes)
        pin.latitude = 51.5
        pin.longitude = -0.12
        pin.label = label
        pin.createdAtMs = Int64(Date().timeIntervalSince1970 * 1000)
        pin.expiresAtMs = pin.createdAtMs + life
        var message = PlacesPayload()
        message.pin = pin
        return message
    }

    /// A channel 3 message carrying `message`, as the channel delivers it.
    func delivered(_ message: PlacesPayload, from sender: PeerID, sealed: Bool) -> ChannelMessage {
        ChannelMessage(sender: sender, payload: try! message.serializedData(), delivery: sealed ? .sealed : .broadcast, hops: 1, sentAt: Date())
    }

    @Test("a valid pin is stored and shown once; a copy, a sealed pin, a bad label or a 30-day life shows nothing")
    func pins() async throws {
        let id = NodeID.random()
        let events = await service.handle(delivered(pinMessage(id: id), from: bob, sealed: false))
        #expect(events.count == 1)
        guard case .pinAdded(let pin)? = events.first else { Issue.record("no pin"); return }
        #expect(pin.author == bob && pin.label == "Meet here")
        #expect(await service.handle(delivered(pinMessage(id: id), from: bob, sealed: false)).isEmpty)
        #expect(await service.handle(delivered(pinMessage(), from: bob, sealed: true)).isEmpty)
        #expect(await service.handle(delivered(pinMessage(label: String(repeating: "x", count: 65)), from: bob, sealed: false)).isEmpty)
        #expect(await service.handle(delivered(pinMessage(life: 30 * 86_400_000), from: bob, sealed: false)).isEmpty)
        #expect(try store.pins(now: Date()).count == 1)
    }

    @Test("only the author's withdrawal removes a pin; a malformed id is dropped")
    func withdrawals() async throws {
        let id = NodeID.random()
        _ = await service.handle(delivered(pinMessage(id: id), from: bob, sealed: false))
        var unpin = PlacesPayload()
        unpin.unpin.pinID = Data(id.bytes)
        #expect(await service.handle(delivered(unpin, from: carol, sealed: false)).isEmpty)
        #expect(try store.pins(now: Date()).count == 1)
        var bad = PlacesPayload()
        bad.unpin.pinID = Data([1, 2])
        #expect(await service.handle(delivered(bad, from: bob, sealed: false)).isEmpty)
        let events = await service.handle(delivered(unpin, from: bob, sealed: false))
        guard case .pinWithdrawn(let pin)? = events.first else { Issue.record("not withdrawn"); return }
        #expect(pin.id == id.hex)
        #expect(try store.pins(now: Date()).isEmpty)
    }

    @Test("a catch-up from an author replaces that author's pins; over 64 pins, or one bad pin, drops the whole catch-up")
    func catchUp() async throws {
        let kept = NodeID.random(), dropped = NodeID.random()
        _ = await service.handle(delivered(pinMessage(id: kept), from: bob, sealed: false))
        _ = await service.handle(delivered(pinMessage(id: dropped), from: bob, sealed: false))
        var set = PlacesPayload()
        set.pins.pins = [pinMessage(id: kept).pin, pinMessage(label: "new").pin]
        let events = await service.handle(delivered(set, from: bob, sealed: true))
        #expect(events.count == 2)
        #expect(Set(try store.pins(now: Date()).map(\.label)) == ["Meet here", "new"])
        var tooMany = PlacesPayload()
        tooMany.pins.pins = (0..<65).map { _ in pinMessage().pin }
        #expect(await service.handle(delivered(tooMany, from: bob, sealed: true)).isEmpty)
        var poisoned = PlacesPayload()
        poisoned.pins.pins = [pinMessage(label: "").pin]
        #expect(await service.handle(delivered(poisoned, from: bob, sealed: true)).isEmpty)
        #expect(try store.pins(now: Date()).count == 2)
    }

    @Test("an answer to no lookup of ours, and a broadcast lookup, change nothing")
    func strayAnswers() async throws {
        var answer = PlacesPayload()
        answer.answer = PlaceAnswer(id: .random(), hits: [], total: 0).payload
        #expect(await service.handle(delivered(answer, from: bob, sealed: true)).isEmpty)
        var query = PlacesPayload()
        query.query = try PlaceLookup(centre: Coordinate(latitude: 0, longitude: 0), radius: .kilometres(1)).payload
        #expect(await service.handle(delivered(query, from: bob, sealed: false)).isEmpty)
        #expect(await service.handle(delivered(PlacesPayload(), from: bob, sealed: false)).isEmpty)
        #expect(await service.handle(ChannelMessage(sender: bob, payload: Data([0xff, 0xff]), delivery: .sealed, hops: 1, sentAt: Date())).isEmpty)
    }

    @Test("the location is remembered in the store")
    func here() async throws {
        #expect(try await service.here() == nil)
        try await service.setHere(Coordinate(latitude: 51.5, longitude: -0.12))
        #expect(try await service.here() == Coordinate(latitude: 51.5, longitude: -0.12))
        #expect(try store.setting(PlaceService.hereKey) == "51.5,-0.12")
    }
}
