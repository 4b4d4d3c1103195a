import Foundation
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import Places
import MeshFiles

/// Renders ``ChatOutput`` as one JSON object per line (`--json`); the README documents each event.
/// Every object starts with its `"event"` key.
public struct JSONRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The JSON line for an output, or `nil` for outputs that are text-only (notices).
    /// - Parameter output: what to show.
    /// - Returns: one line of JSON without a newline.
    public func render(_ output: ChatOutput) -> String? {
        value(output)?.serialized
    }

    /// The JSON value for an output, or `nil` for text-only outputs.
    /// - Parameter output: what to show.
    /// - Returns: the value.
    public func value(_ output: ChatOutput) -> JSONValue? {
        switch output {
        case .ready(let id, let name, let port):
            return .object([("event", "ready"), ("id", .string(id)), ("name", .string(name)), ("port", .int(port))])
        case .peer(let peer, let state, let address, let reason):
            var members: [(String, JSONValue)] = [("event", "peer"), ("peer", Self.peer(peer)), ("state", .string(state))]
            if let address { members.append(("address", .string(address))) }
            if let reason {
                members.append(("reason", .object([
                    ("code", .string(reason.code)), ("message", .string(reason.message)), ("remote", .bool(reason.isRemote)),
                ])))
            }
            return .object(members)
        case .message(let id, let from, let text, let sentAt, let hops, let isPrivate, let room, let mention, let action):
            var members: [(String, JSONValue)] = [("event", "message"), ("id", .string(id)), ("from", Self.peer(from)),
                                                  ("text", .string(text)), ("sent_at", .string(Self.iso8601(sentAt))),
                                                  ("hops", .int(hops)), ("private", .bool(isPrivate))]
            if let room { members += Self.room(room) }
            // Only where it applies (additive: scripts that do not know it see the same events).
            if mention { members.append(("mention", .bool(true))) }
            if action { members.append(("action", .bool(true))) }
            return .object(members)
        case .data(let from, let mode, let payload):
            return .object([("event", "data"), ("from", Self.peer(from)), ("mode", .string("\(mode)")),
                            ("bytes", .int(payload.count)), ("base64", .string(payload.base64EncodedString()))])
        case .sent(let id, let text, let to, let isPrivate, let status, let room, let action):
            var members: [(String, JSONValue)] = [("event", "sent"), ("id", .string(id)), ("text", .string(text)), ("to", .array(to.map(Self.peer))),
                                                  ("private", .bool(isPrivate)), ("status", .string(status))]
            // Where the line went, always: a room (with whether it has a password) or none.
            members += room.map(Self.room) ?? [("room", .null)]
            if action { members.append(("action", .bool(true))) }
            return .object(members)
        case .receipt(let id, let status, let to):
            var members: [(String, JSONValue)] = [("event", "receipt"), ("id", .string(id)), ("status", .string(status))]
            if let to { members.append(("to", Self.peer(to))) }
            return .object(members)
        case .reachability(let peer, let hops, let via):
            guard let hops else { return .object([("event", "unreachable"), ("peer", Self.peer(peer))]) }
            var members: [(String, JSONValue)] = [("event", "reachable"), ("peer", Self.peer(peer)), ("hops", .int(hops))]
            if let via { members.append(("via", Self.peer(via))) }
            return .object(members)
        case .route(let peer, let links):
            return .object([("event", "route"), ("peer", Self.peer(peer)), ("hops", .array(links.map { link in
                .object([("id", .string(link.peer.id.hex)), ("name", .string(link.peer.displayName)),
                         ("latency_ms", .double(Self.milliseconds(link.latency)))])
            }))])
        case .history(let lines):
            return .object([("event", "history"), ("messages", .array(lines.map(Self.historyLine)))])
        case .search(let text, let lines):
            return .object([("event", "search"), ("text", .string(text)), ("messages", .array(lines.map(Self.historyLine)))])
        case .whois(let whois):
            return Self.whois(whois)
        case .away(let text):
            return .object([("event", "away"), ("text", text.map { .string($0) } ?? .null)])
        case .peers(let rows):
            return .object([("event", "peers"), ("peers", .array(rows.map { row in
                var members: [(String, JSONValue)] = [("id", .string(row.id)), ("name", .string(row.name)), ("state", .string(row.state))]
                if let address = row.address { members.append(("address", .string(address))) }
                if let hops = row.hops { members.append(("hops", .int(hops))) }
                if let via = row.via { members.append(("via", Self.peer(via))) }
                if let away = row.away { members.append(("away", .string(away))) }
                if let peer = row.peer { members += PeerMarks.jsonMembers(peer) }
                return .object(members)
            }))])
        case .help(let text):
            return .object([("event", "help"), ("text", .string(text))])
        case .code(let code):
            return .object([("event", "code"), ("code", .string(code))])
        case .connectFailed(let address, let reason):
            return .object([("event", "connectFailed"), ("address", .string(address)), ("reason", .string(reason))])
        case .found(let peer, let addresses, let info, _):
            return .object([("event", "found"), ("peer", Self.peer(peer)), ("addresses", .array(addresses.map { .string($0) })),
                            ("info", .object(info.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))])
        case .lost(let peer):
            return .object([("event", "lost"), ("peer", Self.peer(peer))])
        case .advertising(let name, let service):
            return .object([("event", "advertising"), ("name", .string(name)), ("service", .string(service))])
        case .invitation(let peer, let direction, let contextBytes, _):
            return .object([("event", "invitation"), ("peer", Self.peer(peer)), ("direction", .string(direction)),
                            ("context_bytes", .int(contextBytes))])
        case .invitationFailed(let peer, let kind, let message):
            return .object([("event", "invitationFailed"), ("peer", Self.peer(peer)), ("kind", .string(kind)), ("message", .string(message))])
        case .invitationEnded(let peer, let reason):
            return .object([("event", "invitationEnded"), ("peer", Self.peer(peer)), ("reason", .string(reason))])
        case .here(let point, let description):
            guard let point else { return .object([("event", "here"), ("set", .bool(false))]) }
            var members: [(String, JSONValue)] = [("event", "here"), ("set", .bool(true)), ("lat", .double(point.latitude)),
                                                  ("lon", .double(point.longitude))]
            if let description { members.append(("description", .string(description))) }
            return .object(members)
        case .places(let result):
            return Self.places(result)
        case .pinned(let pin, let nobody):
            return .object([("event", "pinned"), ("pin", Self.pin(pin, from: nil)), ("queued", .bool(nobody))])
        case .pin(let pin, let from):
            return .object([("event", "pin"), ("pin", Self.pin(pin, from: from))])
        case .unpinned(let pin, let mine):
            return .object([("event", "unpinned"), ("pin", Self.pin(pin, from: nil)), ("mine", .bool(mine))])
        case .pins(let pins, let from):
            return .object([("event", "pins"), ("pins", .array(pins.map { Self.pin($0, from: from) }))])
        case .exported(let file, let count):
            return .object([("event", "exported"), ("file", .string(file)), ("count", .int(count))])
        case .map(let lines):
            return .object([("event", "map"), ("lines", .array(lines.map { .string($0) }))])
        case .mesh(let rows):
            return .object([("event", "mesh"), ("nodes", .array(rows.map { row in
                .object([("id", .string(row.peer.id.hex)), ("name", .string(row.peer.displayName)),
                         ("hops", row.hops.map { .int($0) } ?? .null),
                         ("links", .array(row.links.map { link in
                             .object([("id", .string(link.peer.id.hex)), ("name", .string(link.peer.displayName)),
                                      ("latency_ms", .double(Self.milliseconds(link.latency)))])
                         }))])
            }))])
        case .pong(let peer, let roundTrip, let hops):
            return .object([("event", "pong"), ("peer", Self.peer(peer)), ("hops", .int(hops)),
                            ("rtt_ms", roundTrip.map { .double(Self.milliseconds($0)) } ?? .null)])
        case .verify(let peer, let number, let mine, let theirs):
            return .object([("event", "verify"), ("peer", Self.peer(peer)), ("safetyNumber", .string(number.digits)),
                            ("fingerprints", .object([("mine", .string(mine)), ("theirs", .string(theirs))]))])
        case .trust(let peer, let verified):
            return .object([("event", "trust"), ("peer", Self.peer(peer)), ("verified", .bool(verified))])
        case .trusted(let peers):
            return .object([("event", "trusted"), ("peers", .array(peers.map(Self.peer)))])
        case .nameConflict(let peer, let holder):
            return .object([("event", "nameConflict"), ("peer", Self.peer(peer)), ("holder", Self.peer(holder))])
        case .keyRotated(let peer, let previous, _):
            return .object([("event", "keyRotated"), ("old", .string(previous.hex)), ("new", .string(peer.id.hex)), ("peer", Self.peer(peer))])
        case .keyDisputed(let previous, let first, let claimant, let unverified):
            return .object([("event", "keyDisputed"), ("old", .string(previous.hex)), ("first", Self.peer(first)),
                            ("claimant", Self.peer(claimant)), ("unverified", .bool(unverified))])
        case .blocked(let peers):
            return .object([("event", "blocked"), ("peers", .array(peers.map(Self.peer)))])
        case .nick(let peer, let previous, let isMe):
            return .object([("event", "nick"), ("peer", Self.peer(peer)), ("previous", .string(previous)), ("me", .bool(isMe))])
        case .joined(let room):
            return .object([("event", "joined")] + Self.room(room))
        case .left(let room, let now):
            return .object([("event", "left")] + Self.room(room) + [("now", now.map { .object(Self.room($0)) } ?? .null)])
        case .rooms(let rooms, let active):
            return .object([("event", "rooms"), ("rooms", .array(rooms.map { .object(Self.room($0)) })),
                            ("active", active.map { .object(Self.room($0)) } ?? .null)])
        case .file(let event):
            return FileOutput.json(event)
        case .files(let transfers):
            return FileOutput.json(transfers)
        case .error(let message):
            return .object([("event", "error"), ("message", .string(message))])
        case .notice, .target, .buffers, .bell:
            return nil
        }
    }

    private static func places(_ result: LookupResult) -> JSONValue {
        let lookup = result.lookup
        let query: JSONValue = .object([("lat", .double(lookup.centre.latitude)), ("lon", .double(lookup.centre.longitude)),
                                        ("radius_m", .double(lookup.radius.metres)), ("text", .string(lookup.text)),
                                        ("limit", .int(lookup.limit))])
        let hits: [JSONValue] = result.hits.enumerated().map { n, hit in
            var members: [(String, JSONValue)] = [("n", .int(n + 1)), ("name", .string(hit.name)), ("lat", .double(hit.coordinate.latitude)),
                                                  ("lon", .double(hit.coordinate.longitude)),
                                                  ("distance_m", .double((hit.distance.metres * 10).rounded() / 10)),
                                                  ("bearing_deg", .double(Geodesy.roundedBearing(hit.bearing, fractionDigits: 1))),
                                                  ("compass", .string(CompassPoint(bearing: hit.bearing).abbreviation)), ("place_set", .string(hit.placeSet))]
            members.append(("source", hit.source.map(Self.peer) ?? .string("me")))
            return .object(members)
        }
        let sources: [JSONValue] = result.sources.map { source in
            var members: [(String, JSONValue)] = [("peer", source.peer.map(Self.peer) ?? .string("me")), ("hops", .int(source.hops))]
            switch source.outcome {
            case .answered(let count, let total):
                members += [("status", "answered"), ("count", .int(count)), ("total", .int(total))]
            case .refused(let why):
                members += [("status", "refused"), ("reason", .string(why))]
            case .noAnswer:
                members += [("status", "noAnswer")]
            case .unreachable(let why):
                members += [("status", "unreachable"), ("reason", .string(why))]
            }
            return .object(members)
        }
        return .object([("event", "places"), ("query", query), ("results", .array(hits)), ("total", .int(result.total)),
                        ("sources", .array(sources)), ("covered", .bool(!result.nobodyCovers))])
    }

    private static func pin(_ pin: SharedPin, from: Coordinate?) -> JSONValue {
        var members: [(String, JSONValue)] = [("id", .string(pin.id)), ("author", Self.peer(pin.author)),
                                              ("lat", .double(pin.coordinate.latitude)), ("lon", .double(pin.coordinate.longitude)),
                                              ("label", .string(pin.label)), ("note", .string(pin.note)),
                                              ("created_at", .string(Self.iso8601(pin.createdAt))),
                                              ("expires_at", .string(Self.iso8601(pin.expiresAt)))]
        if let from {
            members.append(("distance_m", .double((Geodesy.distance(from: from, to: pin.coordinate) * 10).rounded() / 10)))
            members.append(("bearing_deg", .double(Geodesy.roundedBearing(Geodesy.bearing(from: from, to: pin.coordinate), fractionDigits: 1))))
        }
        return .object(members)
    }

    /// One stored line of `/history` or `/search`.
    private static func historyLine(_ line: ChatOutput.HistoryLine) -> JSONValue {
        var members: [(String, JSONValue)] = [("id", .string(line.id)), ("from", Self.peer(line.from))]
        if let with = line.with { members.append(("with", Self.peer(with))) }
        members += [("text", .string(line.text)), ("sent_at", .string(Self.iso8601(line.sentAt))),
                    ("private", .bool(line.with != nil)), ("outgoing", .bool(line.isOutgoing)), ("status", .string(line.status))]
        if let hops = line.hops { members.append(("hops", .int(hops))) }
        if let room = line.room { members += Self.room(room) }
        if line.isAction { members.append(("action", .bool(true))) }
        return .object(members)
    }

    /// The answer to `/whois`.
    private static func whois(_ whois: ChatOutput.Whois) -> JSONValue {
        var members: [(String, JSONValue)] = [("event", "whois"), ("peer", Self.peer(whois.peer)),
                                              ("fingerprint", whois.fingerprint.map { .string($0) } ?? .null),
                                              ("verified", .bool(whois.verified)), ("hops", whois.hops.map { .int($0) } ?? .null),
                                              ("route", .array(whois.route.map(Self.peer))),
                                              ("data_sets", .array(whois.dataSets.map { .string($0) })),
                                              ("away", whois.away.map { .string($0) } ?? .null)]
        if let address = whois.address { members.insert(("address", .string(address)), at: 6) }
        if let suite = whois.suite { members.insert(("suite", .string(suite.description)), at: whois.address == nil ? 6 : 7) }
        return .object(members)
    }

    /// A peer's object: `id`, `name`, and its standing in the name book (``PeerMarks``):
    /// `verified`, and `newKey`/`nameHolder` for a key claiming a name another key holds.
    static func peer(_ peer: PeerID) -> JSONValue {
        .object([("id", .string(peer.id.hex)), ("name", .string(peer.displayName))] + PeerMarks.jsonMembers(peer))
    }

    /// A room's members: `room` (its name) and `password` (whether it is the password room of
    /// that name; the public one of the same name is another room).
    static func room(_ room: RoomRef) -> [(String, JSONValue)] {
        [("room", .string(room.name)), ("password", .bool(room.hasPassword))]
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (value * 1000).rounded() / 1000
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
