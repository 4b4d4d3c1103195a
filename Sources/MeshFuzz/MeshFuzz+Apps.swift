import struct Foundation.Data
import struct Foundation.Date
import MeshLink
import MeshChat
import MeshFiles
import MeshPlaces
import MeshRooms
import MeshSession
import MeshWire
import Places

extension MeshFuzz {
    /// A places message (§14) as the places service validates it. A valid lookup is answered from a
    /// small data set, and that answer validates; every validated value survives a round trip. The
    /// same bytes as a channel 3 attachment (§14.1): at most 8 sets are read, and re-advertising
    /// them gives them back within the attachment limit.
    @Sendable static func fuzzPlaces(_ bytes: [UInt8]) {
        let sets = PlaceSetInfo.sets(fromAttachment: Data(bytes))
        precondition(sets.count <= PlacesLimits.maxPlaceSets, "more place sets than the limit")
        if let again = PlaceSetInfo.attachment(sets, logger: FuzzKeys.logger) {
            precondition(again.count <= Session.maxChannelAttachment, "an attachment over the limit")
            precondition(PlaceSetInfo.sets(fromAttachment: again) == sets, "place sets do not survive re-advertising")
        }
        guard let message = try? PlacesPayload(decoding: Data(bytes), what: "places") else { return }
        switch message.body {
        case .query(let query):
            guard let lookup = try? PlaceLookup(validating: query) else { return }
            precondition((try? PlaceLookup(validating: lookup.payload)) == lookup, "a lookup does not survive a round trip")
            let answer = FuzzKeys.places.answer(lookup)
            precondition((try? PlaceAnswer(validating: answer.payload)) != nil, "our own answer does not validate")
        case .answer(let payload):
            guard let answer = try? PlaceAnswer(validating: payload) else { return }
            precondition((try? PlaceAnswer(validating: answer.payload)) == answer, "an answer does not survive a round trip")
        case .pin(let pin):
            checkPin(pin)
        case .unpin(let unpin):
            _ = try? NodeID(bytes: unpin.pinID)
        case .pins(let set):
            for pin in set.pins.prefix(PlacesLimits.maxPinsPerSet + 1) { checkPin(pin) }
        case nil:
            return
        }
    }

    /// One pin (§14.4), validated; a valid pin survives a round trip.
    @Sendable static func fuzzPins(_ bytes: [UInt8]) {
        guard let pin = try? PinPayload(decoding: Data(bytes), what: "pin") else { return }
        checkPin(pin)
    }

    private static func checkPin(_ payload: PinPayload) {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        guard let pin = try? SharedPin(validating: payload, author: FuzzKeys.neighbour.peerID, now: now) else { return }
        // Milliseconds beyond 2^50 do not survive Double seconds exactly; such pins fail validation anyway.
        guard payload.createdAtMs.magnitude < 1 << 50, payload.expiresAtMs.magnitude < 1 << 50 else { return }
        precondition((try? SharedPin(validating: pin.payload, author: FuzzKeys.neighbour.peerID, now: now)) == pin,
                     "a pin does not survive a round trip")
    }

    /// A resource message (§16, channel 17; the file corpus: same field numbers) against a receiver
    /// of a valid offer, a receiver restored from a partial state, and a sender of one (whose
    /// receiver restarted once); a hostile offer is validated and, when valid, accepted.
    @Sendable static func fuzzFiles(_ bytes: [UInt8]) {
        let plain = ResourceWire.plainChunk(in: Data(bytes))
        guard let message = try? ResourceMessagePayload(decoding: Data(bytes), what: "resource message") else {
            precondition(plain == nil, "a chunk read by hand that the decoder refuses")
            return
        }
        if let plain {
            precondition(message.transferID == plain.transferID && message.chunk.index == plain.index && message.chunk.data == plain.data,
                         "a chunk read by hand differs from the decoder's")
        }
        let id = ResourceID(bytes: message.transferID) ?? ResourceID.random()
        let offer = ResourceOffer(name: "a.bin", size: 100_000, sha256: Data(repeating: 1, count: 32), chunkSize: 1_024)
        let now = ContinuousClock.now
        var receiver = ResourceReceiveStateMachine(id: id, offer: offer, incarnation: 7, now: now)
        _ = receiver.accept()
        var restored = ResourceReceiveStateMachine(restoring: id, offer: offer, next: 40, stored: [41, 45, 200], incarnation: 9, now: now)
        _ = restored.resume()
        var sender = ResourceSendStateMachine(id: id, offer: offer)
        _ = sender.start(now: now)
        var first = ResourceAckPayload()
        first.next = 50
        first.incarnation = 1
        _ = sender.receivedAck(first, now: now)
        switch message.body {
        case .offer(let payload):
            guard let hostile = try? ResourceOffer(validating: payload) else { return }
            var machine = ResourceReceiveStateMachine(id: id, offer: hostile, incarnation: 3, now: now)
            _ = machine.accept()
            for index in [0, hostile.chunkCount - 1, hostile.chunkCount] {
                _ = machine.receivedChunk(index: index, length: index < hostile.chunkCount ? hostile.length(ofChunk: max(0, index)) : 0, now: now)
            }
        case .chunk(let chunk):
            _ = receiver.receivedChunk(index: Int(chunk.index), length: chunk.data.count, now: now)
            _ = receiver.receivedChunk(index: Int(chunk.index), length: chunk.data.count, now: now)
            _ = restored.receivedChunk(index: Int(chunk.index), length: chunk.data.count, now: now)
        case .ack(let ack):
            _ = sender.receivedAck(ack, now: now)
            _ = sender.receivedAck(ack, now: now)
        case .done(let done):
            _ = sender.receivedDone(done)
        case .cancel(let cancel):
            _ = sender.receivedCancel(cancel)
            _ = receiver.receivedCancel(cancel)
            _ = restored.receivedCancel(cancel)
        case nil:
            return
        }
        _ = sender.timerFired(now: now + .seconds(3600))
        _ = receiver.timerFired(now: now + .seconds(3600))
        _ = restored.timerFired(now: now + .seconds(3600))
    }

    /// Room lines (§15): a channel 2 message is a line or dropped; hostile ciphertext is refused; a
    /// room text for this room sealed and opened is itself; a room name is normalised or refused.
    @Sendable static func fuzzRooms(_ bytes: [UInt8]) {
        let origin = FuzzKeys.neighbour.identity.nodeID
        for delivery in [ChannelMessage.Delivery.broadcast, .sealed] {
            let message = ChannelMessage(sender: FuzzKeys.neighbour.peerID, payload: Data(bytes), delivery: delivery, hops: 1,
                                         sentAt: Date(timeIntervalSince1970: 1_800_000_000))
            let line = RoomChannel.line(message, logger: FuzzKeys.logger)
            precondition(delivery == .broadcast || line == nil, "a sealed room message was taken as a line")
        }
        if let chat = try? RoomChatPayload(decoding: Data(bytes), what: "room chat") {
            _ = try? roomKey.open(chat, origin: origin)
        }
        if var text = try? RoomTextPayload(decoding: Data(bytes), what: "room text") {
            text.room = roomKey.name  // a line naming another room is refused by design
            precondition((try? roomKey.open(roomKey.seal(text, origin: origin), origin: origin)) == text, "a room text does not survive sealing")
        }
        let name = String(decoding: bytes, as: UTF8.self)
        if let normalised = try? RoomKey.normalizedName(name) {
            precondition((try? RoomKey.normalizedName(normalised)) == normalised, "a normalised room name normalises to another")
        }
    }

    private static let roomKey = try! RoomKey(name: "#fuzz", key: Data(repeating: 9, count: 32), hasPassword: false)
}
