import Foundation
@testable import MeshChatKit
import MeshFiles
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import Places
import Testing

/// `JSONRenderer` against README.md's table of JSON events, and `TextRenderer` for people.
@Suite("renderers")
struct RendererTests {
    static let bob = try! PeerID(id: NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c"), displayName: "bob")
    static let carol = try! PeerID(id: NodeID(hex: "620da8ed2398ab78558d6094fbe211c8"), displayName: "carol \"c\"")
    /// 2026-11-22T10:50:48.250Z.
    static let sentAt = Date(timeIntervalSince1970: 1_795_344_648.25)

    /// One output with the event name and the keys README.md documents for it, in order.
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var output: ChatOutput
        var keys: [String]
        /// Keys of nested objects (an array's first element for arrays).
        var nested: [String: [String]] = [:]
        var testDescription: String { label }
    }

    /// The event name of an output; an exhaustive switch, so a new case must be added here.
    static func eventName(_ output: ChatOutput) -> String? {
        switch output {
        case .ready: "ready"
        case .peer: "peer"
        case .message: "message"
        case .data: "data"
        case .sent: "sent"
        case .peers: "peers"
        case .help: "help"
        case .code: "code"
        case .connectFailed: "connectFailed"
        case .found: "found"
        case .lost: "lost"
        case .advertising: "advertising"
        case .invitation: "invitation"
        case .invitationFailed: "invitationFailed"
        case .invitationEnded: "invitationEnded"
        case .error: "error"
        case .receipt: "receipt"
        case .reachability(_, let hops, _): hops == nil ? "unreachable" : "reachable"
        case .route: "route"
        case .history: "history"
        case .here: "here"
        case .places: "places"
        case .pinned: "pinned"
        case .pin: "pin"
        case .unpinned: "unpinned"
        case .pins: "pins"
        case .exported: "exported"
        case .map: "map"
        case .mesh: "mesh"
        case .blocked: "blocked"
        case .trust: "trust"
        case .trusted: "trusted"
        case .nameConflict: "nameConflict"
        case .keyRotated: "keyRotated"
        case .keyDisputed: "keyDisputed"
        case .nick: "nick"
        case .pong: "pong"
        case .verify: "verify"
        case .joined: "joined"
        case .left: "left"
        case .rooms: "rooms"
        case .file(let event):
            switch event {
            case .offered: "fileOffered"
            case .progress: "fileProgress"
            case .paused: "filePaused"
            case .resumed: "fileResumed"
            case .sent: "fileSent"
            case .received: "fileReceived"
            case .failed: "fileFailed"
            }
        case .files: "files"
        case .search: "search"
        case .whois: "whois"
        case .away: "away"
        case .notice, .target, .buffers, .bell: nil
        }
    }

    static let peerKeys = ["id", "name", "verified"]
    static let london = Coordinate(latitude: 51.5074, longitude: -0.1278)
    static let pin = try! SharedPin(id: "620da8ed2398ab78558d6094fbe211c8", author: bob, coordinate: Coordinate(latitude: 51.501, longitude: -0.142),
                                    label: "Meet here", note: "by the gates", createdAt: sentAt)
    static let pinKeys = ["id", "author", "lat", "lon", "label", "note", "created_at", "expires_at"]
    static let lookup = try! PlaceLookup(id: NodeID(hex: "94c37e7313876e15166fe569eac5eac7"), centre: london, radius: .kilometres(2), text: "pizza")
    static let result = LookupResult(
        lookup: lookup,
        hits: [.init(name: "Pizza Express", coordinate: Coordinate(latitude: 51.508, longitude: -0.128), distance: .metres(67.3),
                     bearing: 353.1, placeSet: "london.geojson", source: carol)],
        sources: [.init(peer: carol, hops: 2, outcome: .answered(count: 1, total: 1)), .init(peer: bob, hops: 1, outcome: .refused("rate limited"))],
        total: 1)
    static let placeCases: [Case] = [
        Case(label: "here", output: .here(london, description: "120 m NE of Pizza Express"), keys: ["set", "lat", "lon", "description"]),
        Case(label: "here (not set)", output: .here(nil, description: nil), keys: ["set"]),
        Case(label: "places", output: .places(result), keys: ["query", "results", "total", "sources", "covered"],
             nested: ["query": ["lat", "lon", "radius_m", "text", "limit"],
                      "results": ["n", "name", "lat", "lon", "distance_m", "bearing_deg", "compass", "place_set", "source"],
                      "sources": ["peer", "hops", "status", "count", "total"]]),
        Case(label: "pinned", output: .pinned(pin, sentToNobody: false), keys: ["pin", "queued"], nested: ["pin": pinKeys]),
        Case(label: "pin", output: .pin(pin, from: london), keys: ["pin"], nested: ["pin": pinKeys + ["distance_m", "bearing_deg"]]),
        Case(label: "unpinned", output: .unpinned(pin, mine: false), keys: ["pin", "mine"], nested: ["pin": pinKeys]),
        Case(label: "pins", output: .pins([pin], from: nil), keys: ["pins"], nested: ["pins": pinKeys]),
        Case(label: "exported", output: .exported(file: "/tmp/pins.geojson", count: 1), keys: ["file", "count"]),
        Case(label: "map", output: .map(["map of 51.5074,-0.1278 within 2 km"]), keys: ["lines"]),
    ]
    static let roomCases: [Case] = [
        Case(label: "mesh", output: .mesh([.init(peer: bob, hops: 0, links: [.init(peer: carol, latency: .microseconds(400))]),
                                           .init(peer: carol, hops: nil, links: [])]),
             keys: ["nodes"], nested: ["nodes": ["id", "name", "hops", "links"]]),
        Case(label: "blocked", output: .blocked([carol]), keys: ["peers"], nested: ["peers": peerKeys]),
        Case(label: "trust", output: .trust(bob, verified: true), keys: ["peer", "verified"], nested: ["peer": peerKeys]),
        Case(label: "trusted", output: .trusted([bob]), keys: ["peers"], nested: ["peers": peerKeys]),
        Case(label: "nameConflict", output: .nameConflict(carol, holder: bob), keys: ["peer", "holder"],
             nested: ["peer": peerKeys, "holder": peerKeys]),
        Case(label: "keyRotated", output: .keyRotated(bob, previous: carol.id, verified: true), keys: ["old", "new", "peer"],
             nested: ["peer": peerKeys]),
        Case(label: "keyDisputed", output: .keyDisputed(previous: carol.id, first: bob, claimant: carol, unverified: true),
             keys: ["old", "first", "claimant", "unverified"], nested: ["first": peerKeys, "claimant": peerKeys]),
        Case(label: "nick", output: .nick(bob, previous: "robert", isMe: false), keys: ["peer", "previous", "me"], nested: ["peer": peerKeys]),
        Case(label: "pong", output: .pong(carol, roundTrip: .microseconds(812), hops: 2), keys: ["peer", "hops", "rtt_ms"], nested: ["peer": peerKeys]),
        Case(label: "verify", output: .verify(bob, SafetyNumber(digits: String(repeating: "0123456789", count: 6))!,
                                              mine: String(repeating: "012345", count: 5), theirs: String(repeating: "543210", count: 5)),
             keys: ["peer", "safetyNumber", "fingerprints"], nested: ["peer": peerKeys, "fingerprints": ["mine", "theirs"]]),
        Case(label: "joined", output: .joined(lunch), keys: ["room", "password"]),
        Case(label: "left", output: .left(lunch, now: nil), keys: ["room", "password", "now"]),
        Case(label: "left (to another room)", output: .left(lunch, now: RoomRef(name: "#lunch", hasPassword: false)), keys: ["room", "password", "now"],
             nested: ["now": ["room", "password"]]),
        Case(label: "rooms", output: .rooms([lunch, RoomRef(name: "#lunch", hasPassword: false)], active: lunch), keys: ["rooms", "active"],
             nested: ["rooms": ["room", "password"], "active": ["room", "password"]]),
        Case(label: "message (room)", output: .message(id: "94c37e7313876e15166fe569eac5eac7", from: bob, text: "noon?", sentAt: sentAt, hops: 2, room: lunch),
             keys: ["id", "from", "text", "sent_at", "hops", "private", "room", "password"], nested: ["from": peerKeys]),
        Case(label: "sent (room)", output: .sent(id: "fd8095e0a793f5c229f0b9d96f65b7d4", text: "noon?", to: [bob], room: lunch),
             keys: ["id", "text", "to", "private", "status", "room", "password"], nested: ["to": peerKeys]),
    ]
    static let lunch = RoomRef(name: "#lunch", hasPassword: true)
    static let file = FileTransferInfo(id: FileTransferID(bytes: Data(repeating: 0x5d, count: 16))!, direction: .outgoing, peer: carol,
                                       name: "report.pdf", size: 3_158_073, sha256: String(repeating: "9f", count: 32))
    static let fileCases: [Case] = [
        Case(label: "fileOffered", output: .file(.offered(file)), keys: ["id", "direction", "peer", "name", "size", "sha256"],
             nested: ["peer": peerKeys]),
        Case(label: "fileProgress", output: .file(.progress(file, bytes: 1_200_000)), keys: ["id", "direction", "peer", "name", "bytes", "size"],
             nested: ["peer": peerKeys]),
        Case(label: "filePaused", output: .file(.paused(file)), keys: ["id", "direction", "peer", "name"], nested: ["peer": peerKeys]),
        Case(label: "fileResumed", output: .file(.resumed(file)), keys: ["id", "direction", "peer", "name"], nested: ["peer": peerKeys]),
        Case(label: "fileSent", output: .file(.sent(file)), keys: ["id", "to", "name", "size", "sha256"], nested: ["to": peerKeys]),
        Case(label: "fileReceived", output: .file(.received(file, path: "/home/carol/Downloads/meshchat/report.pdf")),
             keys: ["id", "from", "name", "path", "size", "sha256"], nested: ["from": peerKeys]),
        Case(label: "fileFailed", output: .file(.failed(file, FileTransferFailure(.refused, "the receiver does not take files from you", byPeer: true))),
             keys: ["id", "direction", "peer", "name", "code", "reason", "by_peer"], nested: ["peer": peerKeys]),
        Case(label: "files", output: .files([FileTransferProgress(info: file, bytes: 600_000)]), keys: ["transfers"],
             nested: ["transfers": ["id", "direction", "peer", "name", "bytes", "size"]]),
        Case(label: "files (none)", output: .files([]), keys: ["transfers"]),
    ]
    static let cases: [Case] = placeCases + roomCases + fileCases + [
        Case(label: "ready", output: .ready(id: bob.id.hex, name: "bob", port: 47001), keys: ["id", "name", "port"]),
        Case(label: "peer connected", output: .peer(bob, state: "connected", address: "127.0.0.1:53296", reason: nil),
             keys: ["peer", "state", "address"], nested: ["peer": peerKeys]),
        Case(label: "peer notConnected with a reason",
             output: .peer(bob, state: "notConnected", address: nil,
                           reason: DisconnectReason(code: "keepaliveTimeout", message: "nothing received for 3.0 s", isRemote: false)),
             keys: ["peer", "state", "reason"], nested: ["peer": peerKeys, "reason": ["code", "message", "remote"]]),
        Case(label: "peer notConnected without a reason", output: .peer(bob, state: "notConnected", address: nil, reason: nil),
             keys: ["peer", "state"], nested: ["peer": peerKeys]),
        Case(label: "message", output: .message(id: "94c37e7313876e15166fe569eac5eac7", from: bob, text: "hello", sentAt: sentAt),
             keys: ["id", "from", "text", "sent_at", "hops", "private"], nested: ["from": peerKeys]),
        Case(label: "message (private, relayed)",
             output: .message(id: "94c37e7313876e15166fe569eac5eac7", from: bob, text: "psst", sentAt: sentAt, hops: 3, isPrivate: true),
             keys: ["id", "from", "text", "sent_at", "hops", "private"], nested: ["from": peerKeys]),
        Case(label: "sent", output: .sent(id: "fd8095e0a793f5c229f0b9d96f65b7d4", text: "hi bob", to: [bob, carol]),
             keys: ["id", "text", "to", "private", "status", "room"], nested: ["to": peerKeys]),
        Case(label: "sent (private, queued)",
             output: .sent(id: "fd8095e0a793f5c229f0b9d96f65b7d4", text: "later", to: [bob], isPrivate: true, status: "queued"),
             keys: ["id", "text", "to", "private", "status", "room"], nested: ["to": peerKeys]),
        Case(label: "receipt", output: .receipt(id: "fd8095e0a793f5c229f0b9d96f65b7d4", status: "delivered", to: bob),
             keys: ["id", "status", "to"], nested: ["to": peerKeys]),
        Case(label: "receipt (mesh line sent)", output: .receipt(id: "fd8095e0a793f5c229f0b9d96f65b7d4", status: "sent", to: nil),
             keys: ["id", "status"]),
        Case(label: "reachable", output: .reachability(carol, hops: 2, via: bob),
             keys: ["peer", "hops", "via"], nested: ["peer": peerKeys, "via": peerKeys]),
        Case(label: "unreachable", output: .reachability(carol, hops: nil, via: nil), keys: ["peer"], nested: ["peer": peerKeys]),
        Case(label: "route", output: .route(carol, links: [.init(peer: bob, latency: .microseconds(250)), .init(peer: carol, latency: .milliseconds(3))]),
             keys: ["peer", "hops"], nested: ["peer": peerKeys, "hops": ["id", "name", "latency_ms"]]),
        Case(label: "history", output: .history([.init(id: "fd8095e0a793f5c229f0b9d96f65b7d4", from: bob, with: carol, text: "hi",
                                                        sentAt: sentAt, isOutgoing: false, status: "received", hops: 2)]),
             keys: ["messages"], nested: ["messages": ["id", "from", "with", "text", "sent_at", "private", "outgoing", "status", "hops"]]),
        Case(label: "data", output: .data(from: bob, mode: .unreliable, payload: Data([0, 1, 2, 0xff])),
             keys: ["from", "mode", "bytes", "base64"], nested: ["from": peerKeys]),
        Case(label: "peers", output: .peers([.init(id: bob.id.hex, name: "bob", state: "connected", address: "127.0.0.1:53296")]),
             keys: ["peers"], nested: ["peers": ["id", "name", "state", "address", "verified"]]),
        Case(label: "peers (reachable)", output: .peers([{ var row = ChatOutput.PeerRow(id: carol.id.hex, name: "carol", state: "reachable", address: nil)
                                                          row.hops = 2; row.via = bob; return row }()]),
             keys: ["peers"], nested: ["peers": ["id", "name", "state", "hops", "via", "verified"]]),
        Case(label: "peers (none)", output: .peers([]), keys: ["peers"]),
        Case(label: "help", output: .help("Type a line…\n  /peers"), keys: ["text"]),
        Case(label: "code", output: .code("meshchat:ae72fqoq4w3eu74itgvlxtg5537rwwacatakqaixar7qaaabdfqdiwi"), keys: ["code"]),
        Case(label: "connectFailed", output: .connectFailed(address: "127.0.0.1:9", reason: "connection refused"),
             keys: ["address", "reason"]),
        Case(label: "error", output: .error("unknown command /frobnicate; type /help"), keys: ["message"]),
        Case(label: "found", output: .found(bob, addresses: ["192.0.2.11:54929"], info: ["room": "blue"]),
             keys: ["peer", "addresses", "info"], nested: ["peer": peerKeys, "info": ["room"]]),
        Case(label: "lost", output: .lost(bob), keys: ["peer"], nested: ["peer": peerKeys]),
        Case(label: "advertising", output: .advertising(name: "alice #2", service: "meshchat"), keys: ["name", "service"]),
        Case(label: "invitation", output: .invitation(bob, direction: "received", contextBytes: 0),
             keys: ["peer", "direction", "context_bytes"], nested: ["peer": peerKeys]),
        Case(label: "invitationFailed", output: .invitationFailed(bob, kind: "declined", message: "no"),
             keys: ["peer", "kind", "message"], nested: ["peer": peerKeys]),
        Case(label: "invitationEnded", output: .invitationEnded(bob, reason: "expired"),
             keys: ["peer", "reason"], nested: ["peer": peerKeys]),
        Case(label: "message (mention)", output: .message(id: "94c37e7313876e15166fe569eac5eac7", from: bob, text: "alice?", sentAt: sentAt, mention: true),
             keys: ["id", "from", "text", "sent_at", "hops", "private", "mention"], nested: ["from": peerKeys]),
        Case(label: "message (action)", output: .message(id: "94c37e7313876e15166fe569eac5eac7", from: bob, text: "waves", sentAt: sentAt, action: true),
             keys: ["id", "from", "text", "sent_at", "hops", "private", "action"], nested: ["from": peerKeys]),
        Case(label: "sent (action)", output: .sent(id: "94c37e7313876e15166fe569eac5eac7", text: "waves", to: [bob], action: true),
             keys: ["id", "text", "to", "private", "status", "room", "action"], nested: ["to": peerKeys]),
        Case(label: "history (action)", output: .history([.init(id: "fd8095e0a793f5c229f0b9d96f65b7d4", from: bob, with: nil, text: "waves",
                                                                sentAt: sentAt, isOutgoing: false, status: "received", hops: 1, isAction: true)]),
             keys: ["messages"], nested: ["messages": ["id", "from", "text", "sent_at", "private", "outgoing", "status", "hops", "action"]]),
        Case(label: "search", output: .search("pizza", [.init(id: "fd8095e0a793f5c229f0b9d96f65b7d4", from: bob, with: nil, text: "pizza?",
                                                               sentAt: sentAt, isOutgoing: false, status: "received", hops: 1, room: lunch)]),
             keys: ["text", "messages"], nested: ["messages": ["id", "from", "text", "sent_at", "private", "outgoing", "status", "hops", "room", "password"]]),
        Case(label: "whois", output: .whois({ var whois = ChatOutput.Whois(peer: carol)
                                               whois.fingerprint = String(repeating: "012345", count: 5); whois.hops = 1; whois.route = [carol]
                                               whois.address = "127.0.0.1:53296"; whois.suite = .aesGCM; whois.dataSets = ["london.geojson"]; whois.away = "lunch"
                                               return whois }()),
             keys: ["peer", "fingerprint", "verified", "hops", "route", "address", "suite", "data_sets", "away"], nested: ["peer": peerKeys, "route": peerKeys]),
        Case(label: "away", output: .away("back at 2"), keys: ["text"]),
        Case(label: "peers (away)", output: .peers([{ var row = ChatOutput.PeerRow(id: carol.id.hex, name: "carol", state: "connected", address: nil)
                                                     row.hops = 1; row.away = "lunch"; return row }()]),
             keys: ["peers"], nested: ["peers": ["id", "name", "state", "hops", "away", "verified"]]),
    ]

    /// The ordered keys of an object value.
    static func keys(_ value: JSONValue?) -> [String]? {
        guard case .object(let members) = value else { return nil }
        return members.map(\.0)
    }

    /// The member `key` of an object value (the first element when it is an array).
    static func member(_ value: JSONValue?, _ key: String) -> JSONValue? {
        guard case .object(let members) = value, let found = members.first(where: { $0.0 == key })?.1 else { return nil }
        if case .array(let items) = found { return items.first }
        return found
    }

    @Test("every JSON event is one line starting with its event key, with exactly README's fields", arguments: cases)
    func jsonEvent(_ item: Case) throws {
        let name = try #require(Self.eventName(item.output))
        let line = try #require(JSONRenderer().render(item.output))
        #expect(line.hasPrefix("{\"event\":\"\(name)\""))
        #expect(!line.contains("\n"))
        let value = JSONRenderer().value(item.output)
        #expect(value?.serialized == line)
        #expect(Self.keys(value) == ["event"] + item.keys)
        for (key, expected) in item.nested {
            #expect(Self.keys(Self.member(value, key)) == expected, "\(item.label).\(key)")
        }
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(parsed["event"] as? String == name)
        #expect(Set(parsed.keys) == Set(["event"] + item.keys))
    }

    @Test("JSON event values: numbers are numbers, booleans are booleans, times are ISO 8601 UTC")
    func jsonValues() throws {
        func parse(_ output: ChatOutput) throws -> [String: Any] {
            let line = try #require(JSONRenderer().render(output))
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(JSONRenderer().render(.ready(id: Self.bob.id.hex, name: "bob", port: 47001))
            == #"{"event":"ready","id":"4fc54bc2369e9405ffb0174daced1b9c","name":"bob","port":47001}"#)
        let message = try parse(.message(id: "94c37e7313876e15166fe569eac5eac7", from: Self.bob, text: "a\n\"b\"", sentAt: Self.sentAt))
        #expect(message["sent_at"] as? String == "2026-11-22T10:50:48.250Z")
        #expect(message["text"] as? String == "a\n\"b\"")
        #expect((message["from"] as? [String: Any])?["id"] as? String == "4fc54bc2369e9405ffb0174daced1b9c")
        let data = try parse(.data(from: Self.bob, mode: .unreliable, payload: Data([0, 1, 2, 0xff])))
        #expect(data["mode"] as? String == "unreliable")
        #expect(data["bytes"] as? Int == 4)
        #expect(data["base64"] as? String == "AAEC/w==")
        let reliable = try parse(.data(from: Self.bob, mode: .reliable, payload: Data()))
        #expect(reliable["mode"] as? String == "reliable")
        let gone = try parse(.peer(Self.bob, state: "notConnected", address: nil,
                                   reason: DisconnectReason(code: "normal", message: "bye", isRemote: true)))
        #expect((gone["reason"] as? [String: Any])?["remote"] as? Bool == true)
        #expect(gone["state"] as? String == "notConnected")
        let sent = try parse(.sent(id: "fd8095e0a793f5c229f0b9d96f65b7d4", text: "hi", to: [Self.bob, Self.carol]))
        #expect((sent["to"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["bob", "carol \"c\""])
        #expect(JSONRenderer().render(.peers([])) == #"{"event":"peers","peers":[]}"#)
        #expect(message["hops"] as? Int == 1)
        #expect(message["private"] as? Bool == false)
        let route = try parse(.route(Self.carol, links: [.init(peer: Self.bob, latency: .microseconds(250))]))
        #expect((route["hops"] as? [[String: Any]])?.first?["latency_ms"] as? Double == 0.25)
    }

    @Test("a notice is for people only: no JSON line")
    func noticeIsTextOnly() {
        #expect(JSONRenderer().render(.notice("connecting to 127.0.0.1:7000")) == nil)
        #expect(JSONRenderer().value(.notice("x")) == nil)
        #expect(TextRenderer().render(.notice("connecting to 127.0.0.1:7000")) == "* connecting to 127.0.0.1:7000")
    }

    @Test("text: a message shows as <name> text")
    func textMessage() {
        #expect(TextRenderer().render(.message(id: "94c37e7313876e15166fe569eac5eac7", from: Self.bob, text: "hello there", sentAt: Self.sentAt))
            == "<bob> hello there")
    }

    @Test("text: an action line (/me) shows as * name text, after its room or private marker; /history dates it")
    func textAction() {
        #expect(TextRenderer().render(.message(id: "x", from: Self.bob, text: "waves", sentAt: Self.sentAt, action: true)) == "* bob waves")
        #expect(TextRenderer().render(.message(id: "x", from: Self.bob, text: "waves", sentAt: Self.sentAt, room: RoomRef(name: "#dev", hasPassword: false),
                                               action: true)) == "<#dev> * bob waves")
        #expect(TextRenderer().render(.message(id: "x", from: Self.bob, text: "nods", sentAt: Self.sentAt, hops: 2, isPrivate: true,
                                               action: true)) == "[→ you] * bob (2 hops) nods")
        let history = TextRenderer.historyText([.init(id: "x", from: Self.bob, with: nil, text: "waves", sentAt: Self.sentAt, isOutgoing: false,
                                                      status: "received", hops: 1, isAction: true)])
        #expect(history.hasSuffix(" * bob waves") && history.hasPrefix("2026-11-2"))
    }

    @Test("text: private and relayed lines, delivery marks, reachability and routes")
    func textMesh() throws {
        #expect(TextRenderer().render(.message(id: "x", from: Self.bob, text: "psst", sentAt: Self.sentAt, hops: 2, isPrivate: true))
            == "[bob → you] (2 hops) psst")
        #expect(TextRenderer().render(.message(id: "x", from: Self.bob, text: "hi all", sentAt: Self.sentAt, hops: 3)) == "<bob> (3 hops) hi all")
        #expect(TextRenderer().render(.sent(id: "fd8095e0a793f5c2", text: "x", to: [Self.bob], isPrivate: true)) == "✓ fd8095e0 sent to bob")
        #expect(TextRenderer().render(.receipt(id: "fd8095e0a793f5c2", status: "delivered", to: Self.bob)) == "✓✓ fd8095e0 delivered to bob")
        let queued = try #require(TextRenderer().render(.sent(id: "fd8095e0a793f5c2", text: "x", to: [Self.bob], isPrivate: true, status: "queued")))
        #expect(queued.contains("queued fd8095e0") && queued.contains("bob is reachable"))
        #expect(TextRenderer().render(.reachability(Self.bob, hops: 1, via: Self.bob)) == nil)
        #expect(TextRenderer().render(.reachability(Self.bob, hops: 2, via: Self.carol))?.contains("reachable in 2 hops via carol") == true)
        #expect(TextRenderer().render(.reachability(Self.bob, hops: nil, via: nil))?.contains("out of reach") == true)
        let route = try #require(TextRenderer().render(.route(Self.bob, links: [.init(peer: Self.carol, latency: .microseconds(1500)),
                                                                                .init(peer: Self.bob, latency: .milliseconds(2))])))
        #expect(route.contains("you → carol \"c\" (1.5 ms) → bob (2.0 ms)"))
    }

    @Test("text: errors and failed connections start with \"! \"")
    func textErrors() throws {
        #expect(TextRenderer().render(.error("no peers connected; nothing was sent")) == "! no peers connected; nothing was sent")
        let failed = try #require(TextRenderer().render(.connectFailed(address: "127.0.0.1:9", reason: "connection refused")))
        #expect(failed.hasPrefix("! "))
        #expect(failed.contains("127.0.0.1:9") && failed.contains("connection refused"))
    }

    @Test("text: file transfers are notices with name, size and peer; progress has no line (the terminal's status row shows it); a failure starts with \"! \" and gives the reason; my own cancel is a plain notice")
    func textFiles() throws {
        let renderer = TextRenderer()
        var incoming = Self.file
        incoming.direction = .incoming
        #expect(renderer.render(.file(.offered(Self.file))) == "* offering report.pdf (3.0 MiB) to carol \"c\"…")
        #expect(renderer.render(.file(.offered(incoming))) == "* receiving report.pdf (3.0 MiB) from carol \"c\"…")
        #expect(renderer.render(.file(.progress(Self.file, bytes: 1_579_037))) == nil)
        let sent = try #require(renderer.render(.file(.sent(Self.file))))
        #expect(sent.hasPrefix("* sent report.pdf (3.0 MiB) to carol \"c\""))
        #expect(sent.contains("9f9f9f9f"))
        #expect(renderer.render(.file(.received(incoming, path: "/d/report.pdf")))?.hasSuffix(": /d/report.pdf") == true)
        let failed = try #require(renderer.render(.file(.failed(Self.file, FileTransferFailure(.refused, "the receiver does not take files from you", byPeer: true)))))
        #expect(failed == "! file report.pdf to carol \"c\" failed: the peer cancelled: the receiver does not take files from you")
        let mine = renderer.render(.file(.failed(Self.file, FileTransferFailure(.cancelled, "cancelled by the user", byPeer: false))))
        #expect(mine == "* you cancelled report.pdf to carol \"c\"")
        let theirs = renderer.render(.file(.failed(incoming, FileTransferFailure(.cancelled, "cancelled by the user", byPeer: true))))
        #expect(theirs?.hasPrefix("! file report.pdf from carol \"c\" failed: the peer cancelled") == true)
        #expect(renderer.render(.files([])) == "* no file transfers running")
        let list = try #require(renderer.render(.files([FileTransferProgress(info: Self.file, bytes: 789_519)])))
        #expect(list == "* file transfers:\n  5d5d5d5d report.pdf to carol \"c\": 25% (771.0 KiB of 3.0 MiB)")
    }

    @Test("text: ready names the port, peers and help are readable, a sent line is not echoed")
    func textOthers() throws {
        let ready = try #require(TextRenderer().render(.ready(id: Self.bob.id.hex, name: "bob", port: 47001)))
        #expect(ready.contains("listening on port 47001"))
        #expect(ready.contains("bob") && ready.contains("4fc54bc2"))
        #expect(TextRenderer().render(.peers([])) == "* no peers found or connected")
        let rows = try #require(TextRenderer().render(.peers([
            .init(id: Self.bob.id.hex, name: "bob", state: "connected", address: "127.0.0.1:1"),
            .init(id: Self.carol.id.hex, name: "carol", state: "connected", address: nil),
        ])))
        #expect(rows.split(separator: "\n").count == 2)
        #expect(rows.contains("bob 4fc54bc2 connected 127.0.0.1:1"))
        #expect(TextRenderer().render(.help("the help")) == "the help")
        #expect(TextRenderer().render(.sent(id: "x", text: "hi", to: [Self.bob])) == nil)
        let connected = try #require(TextRenderer().render(.peer(Self.bob, state: "connected", address: "127.0.0.1:5", reason: nil)))
        #expect(connected.contains("bob") && connected.contains("connected at 127.0.0.1:5"))
        let gone = try #require(TextRenderer().render(.peer(Self.bob, state: "notConnected", address: nil,
                                                            reason: DisconnectReason(code: "normal", message: "bye", isRemote: true))))
        #expect(gone.contains("disconnected") && gone.contains("peer said bye") && gone.contains("normal"))
        for (code, message) in [("connectionLost", "the connection ended without a goodbye"), ("keepaliveTimeout", "nothing received for 3.0 s")] {
            let lost = try #require(TextRenderer().render(.peer(Self.bob, state: "notConnected", address: nil,
                                                                reason: DisconnectReason(code: code, message: message, isRemote: false))))
            #expect(lost == "* \(Self.bob) lost: \(message) (\(code))")
            #expect(!lost.contains("peer said") && !lost.contains("normal"))
        }
        #expect(TextRenderer().render(.file(.paused(Self.file))) == "* file report.pdf to carol \"c\" paused: carol \"c\" is out of reach (waits up to 10 minutes)")
        #expect(TextRenderer().render(.file(.resumed(Self.file))) == "* file report.pdf to carol \"c\" resumed")
    }
}

/// README.md's JSON events section: every event in its table has an example line, and every
/// example is one JSON object whose event is in the table.
@Suite("README's JSON event examples")
struct ReadmeExampleTests {
    @Test("every documented event has an example; every example parses and names a documented event")
    func examples() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "### JSON events (`--json`)"))
        let section = text[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        let body = String(section[..<end])
        let documented = body.split(separator: "\n").compactMap { row -> String? in
            guard row.hasPrefix("| `"), let close = row.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(row[row.index(row.startIndex, offsetBy: 3)..<close])
        }
        #expect(documented.count >= 30)
        var examples: Set<String> = []
        for line in body.split(separator: "\n") where line.hasPrefix("{\"event\":") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let event = try #require(object["event"] as? String)
            #expect(documented.contains(event), "example of an undocumented event: \(line)")
            examples.insert(event)
        }
        for event in documented {
            #expect(examples.contains(event), "README has no example of \(event)")
        }
    }
}
