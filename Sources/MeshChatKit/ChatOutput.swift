import Foundation
import MeshMessaging
import MeshPlaces
import MeshSession
import MeshStore
import Places

/// What the chat front shows, as values: the renderers turn each into a JSON line or text.
public enum ChatOutput: Sendable {
    /// The session is listening.
    case ready(id: String, name: String, port: Int)
    /// A peer's state changed.
    case peer(PeerID, state: String, address: String?, reason: DisconnectReason?)
    /// A chat line arrived: to the whole mesh, to a room (`room`), or private to this node; `hops` links travelled.
    case message(id: String, from: PeerID, text: String, sentAt: Date, hops: Int = 1, isPrivate: Bool = false, room: RoomRef? = nil)
    /// Opaque data arrived (from a library user's `send`).
    case data(from: PeerID, mode: SendMode, payload: Data)
    /// A typed line was accepted: stored on disk, then `sent` at once or `queued` until a route
    /// appears. `to` is the private line's peer, or the connected peers for a line to the mesh;
    /// `room` the room it went to (`nil`: everyone, or the private line's peer).
    case sent(id: String, text: String, to: [PeerID], isPrivate: Bool = false, status: String = "sent", room: RoomRef? = nil)
    /// One of my lines changed status: `sent`, `delivered` (receipt from the destination), `expired`.
    case receipt(id: String, status: String, to: PeerID?)
    /// A node became reachable across the mesh (`hops`, first link `via`), or not (`hops` nil).
    case reachability(PeerID, hops: Int?, via: PeerID?)
    /// The answer to `/route`: each link of the path with its advertised round trip.
    case route(PeerID, links: [RouteLink])
    /// The answer to `/history`.
    case history([HistoryLine])
    /// The answer to `/peers`.
    case peers([PeerRow])
    /// The answer to `/help`.
    case help(String)
    /// An outgoing connection failed.
    case connectFailed(address: String, reason: String)
    /// A peer was discovered (`isNew`), or its advertisement or addresses changed (text mode
    /// shows only the first).
    case found(PeerID, addresses: [String], info: [String: String], isNew: Bool = true)
    /// A discovered peer went away.
    case lost(PeerID)
    /// This node is announced on the network.
    case advertising(name: String, service: String)
    /// An invitation was sent to a peer (`sent`), or received from one (`received`);
    /// `awaitsAnswer` when the user must `/accept` or `/decline` it (`--manual`).
    case invitation(PeerID, direction: String, contextBytes: Int, awaitsAnswer: Bool = false)
    /// An invitation this node made did not connect.
    case invitationFailed(PeerID, kind: String, message: String)
    /// A received invitation ended without an answer taking effect (expired, withdrawn).
    case invitationEnded(PeerID, reason: String)
    /// The answer to `/here`: my location, if set, with where that is (the nearest place in my data).
    case here(Coordinate?, description: String?)
    /// The answer to `/near`: places with distance and bearing from the lookup's point, and
    /// where each came from.
    case places(LookupResult)
    /// My pin was stored and shared (`sentToNobody`: no peer is connected; nodes get it when
    /// they become reachable).
    case pinned(SharedPin, sentToNobody: Bool)
    /// Another node's pin arrived; `from` is my location, for distance and bearing.
    case pin(SharedPin, from: Coordinate?)
    /// A pin was withdrawn (mine by `/unpin`, or another's by its author).
    case unpinned(SharedPin, mine: Bool)
    /// The answer to `/pins`: live pins, numbered; `from` is my location.
    case pins([SharedPin], from: Coordinate?)
    /// `/pins --geojson FILE` wrote `count` pins.
    case exported(file: String, count: Int)
    /// The answer to `/map`: the picture (text) or the plain description (JSON, or not a terminal).
    case map([String])
    /// The answer to `/mesh`: every node this node knows with its advertised links; `hops` is
    /// `nil` for a node out of reach, 0 for me.
    case mesh([MeshNodeRow])
    /// The answer to `/ping`: the round trip across `hops` links, or `nil` when no pong came in time.
    case pong(PeerID, roundTrip: Duration?, hops: Int)
    /// The blocked peers, after `/block` or `/unblock` or when listed.
    case blocked([PeerID])
    /// A display name changed: mine after `/nick` (`isMe`), or a peer's; `peer` has the new name.
    case nick(PeerID, previous: String, isMe: Bool)
    /// I joined a room (`/join`); it is now where typed lines go.
    case joined(RoomRef)
    /// I left a room (`/leave`); typed lines go to `now` (`nil`: the whole mesh).
    case left(RoomRef, now: RoomRef?)
    /// The answer to `/rooms`: joined rooms, and the one typed lines go to.
    case rooms([RoomRef], active: RoomRef?)
    /// A file transfer began, progressed, or ended (`/send`, or a file from a peer; PROTOCOL.md §16).
    case file(FileTransferEvent)
    /// The answer to `/files`: the transfers running now.
    case files([FileTransferProgress])
    /// Something went wrong; nothing was sent.
    case error(String)
    /// A notice for people (text mode only).
    case notice(String)
    /// Where typed lines go now: a room, or everyone in the mesh (`nil`). The terminal's prompt
    /// says it (``ChatFront/prompt(for:)``); no line of its own in JSON or text (`joined`, `left`
    /// and each `sent` say it there).
    case target(RoomRef?)

    /// One link of a route: the node it reaches and its latency.
    public struct RouteLink: Sendable, Hashable {
        /// The node at the end of the link.
        public let peer: PeerID
        /// Its advertised round trip.
        public let latency: Duration

        /// Creates a link.
        /// - Parameters:
        ///   - peer: the node reached.
        ///   - latency: the round trip.
        public init(peer: PeerID, latency: Duration) {
            self.peer = peer
            self.latency = latency
        }
    }

    /// One line of `/history`.
    public struct HistoryLine: Sendable, Hashable {
        /// Message id.
        public let id: String
        /// Its author.
        public let from: PeerID
        /// For a private line: the other party (the recipient of mine, me for theirs).
        public let with: PeerID?
        /// The text.
        public let text: String
        /// When the author wrote it.
        public let sentAt: Date
        /// Whether I wrote it.
        public let isOutgoing: Bool
        /// queued, sent, delivered, expired (mine) or received.
        public let status: String
        /// Links travelled (received lines).
        public let hops: Int?
        /// The room of a room line.
        public let room: RoomRef?

        /// Creates a line.
        public init(id: String, from: PeerID, with: PeerID?, text: String, sentAt: Date, isOutgoing: Bool, status: String, hops: Int?,
                    room: RoomRef? = nil) {
            self.room = room
            self.id = id
            self.from = from
            self.with = with
            self.text = text
            self.sentAt = sentAt
            self.isOutgoing = isOutgoing
            self.status = status
            self.hops = hops
        }
    }

    /// One node of `/mesh`.
    public struct MeshNodeRow: Sendable, Hashable {
        /// The node.
        public let peer: PeerID
        /// Links from me (0 for me), or `nil` when out of reach.
        public let hops: Int?
        /// Its advertised links: the node at the other end and the round trip.
        public let links: [RouteLink]

        /// Creates a row.
        /// - Parameters:
        ///   - peer: the node.
        ///   - hops: links from me, `nil` when out of reach.
        ///   - links: its links.
        public init(peer: PeerID, hops: Int?, links: [RouteLink]) {
            self.peer = peer
            self.hops = hops
            self.links = links
        }
    }

    /// One row of `/peers`.
    public struct PeerRow: Sendable {
        /// Node id.
        public let id: String
        /// Display name.
        public let name: String
        /// `connected`, …
        public let state: String
        /// Remote address, when known.
        public let address: String?
        /// Links to it across the mesh, when reachable.
        public var hops: Int?
        /// The neighbour its packets go to first, when reachable.
        public var via: PeerID?

        /// Creates a row.
        /// - Parameters:
        ///   - id: node id (hex).
        ///   - name: display name.
        ///   - state: the peer's state.
        ///   - address: remote address, when known.
        public init(id: String, name: String, state: String, address: String?) {
            self.id = id
            self.name = name
            self.state = state
            self.address = address
        }
    }
}

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
        case .message(let id, let from, let text, let sentAt, let hops, let isPrivate, let room):
            var members: [(String, JSONValue)] = [("event", "message"), ("id", .string(id)), ("from", Self.peer(from)),
                                                  ("text", .string(text)), ("sent_at", .string(Self.iso8601(sentAt))),
                                                  ("hops", .int(hops)), ("private", .bool(isPrivate))]
            if let room { members += Self.room(room) }
            return .object(members)
        case .data(let from, let mode, let payload):
            return .object([("event", "data"), ("from", Self.peer(from)), ("mode", .string("\(mode)")),
                            ("bytes", .int(payload.count)), ("base64", .string(payload.base64EncodedString()))])
        case .sent(let id, let text, let to, let isPrivate, let status, let room):
            var members: [(String, JSONValue)] = [("event", "sent"), ("id", .string(id)), ("text", .string(text)), ("to", .array(to.map(Self.peer))),
                                                  ("private", .bool(isPrivate)), ("status", .string(status))]
            // Where the line went, always: a room (with whether it has a password) or none.
            members += room.map(Self.room) ?? [("room", .null)]
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
            return .object([("event", "history"), ("messages", .array(lines.map { line in
                var members: [(String, JSONValue)] = [("id", .string(line.id)), ("from", Self.peer(line.from))]
                if let with = line.with { members.append(("with", Self.peer(with))) }
                members += [("text", .string(line.text)), ("sent_at", .string(Self.iso8601(line.sentAt))),
                            ("private", .bool(line.with != nil)), ("outgoing", .bool(line.isOutgoing)), ("status", .string(line.status))]
                if let hops = line.hops { members.append(("hops", .int(hops))) }
                if let room = line.room { members += Self.room(room) }
                return .object(members)
            }))])
        case .peers(let rows):
            return .object([("event", "peers"), ("peers", .array(rows.map { row in
                var members: [(String, JSONValue)] = [("id", .string(row.id)), ("name", .string(row.name)), ("state", .string(row.state))]
                if let address = row.address { members.append(("address", .string(address))) }
                if let hops = row.hops { members.append(("hops", .int(hops))) }
                if let via = row.via { members.append(("via", Self.peer(via))) }
                return .object(members)
            }))])
        case .help(let text):
            return .object([("event", "help"), ("text", .string(text))])
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
        case .notice, .target:
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
                                                  ("bearing_deg", .double((hit.bearing * 10).rounded() / 10)),
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
            members.append(("bearing_deg", .double((Geodesy.bearing(from: from, to: pin.coordinate) * 10).rounded() / 10)))
        }
        return .object(members)
    }

    static func peer(_ peer: PeerID) -> JSONValue {
        .object([("id", .string(peer.id.hex)), ("name", .string(peer.displayName))])
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

/// Renders ``ChatOutput`` as plain lines for people.
public struct TextRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    private static func time(_ date: Date) -> String { date.formatted(date: .abbreviated, time: .shortened) }

    private static func away(_ pin: SharedPin, _ from: Coordinate?) -> String {
        guard let from else { return " at \(MapWording.text(for: pin.coordinate))" }
        return ", \(MapWording.whereabouts(distance: Geodesy.distance(from: from, to: pin.coordinate), bearing: Geodesy.bearing(from: from, to: pin.coordinate)))"
    }

    private static func places(_ result: LookupResult) -> String {
        let lookup = result.lookup
        let what = lookup.text.isEmpty ? "places" : "\"\(lookup.text)\""
        let area = "within \(lookup.radius.formatted()) of \(MapWording.text(for: lookup.centre))"
        if result.nobodyCovers { return "! nobody within reach holds place data covering \(MapWording.text(for: lookup.centre))" }
        var lines: [String] = []
        if result.hits.isEmpty {
            lines.append("* no \(what) \(area)")
        } else {
            let more = result.total > result.hits.count ? " (nearest \(result.hits.count) of \(result.total))" : ""
            lines.append("* \(what) \(area)\(more):")
            let width = String(result.hits.count).count
            for (n, hit) in result.hits.enumerated() {
                let number = String(n + 1).leftPadded(to: width)
                let source = hit.source.map { " [from \($0.displayName)]" } ?? ""
                lines.append("\(number). \(hit.name) — \(MapWording.whereabouts(distance: hit.distance.metres, bearing: hit.bearing))\(source)")
            }
        }
        for source in result.sources where source.peer != nil {
            let name = source.peer?.displayName ?? "you"
            switch source.outcome {
            case .answered: continue
            case .refused(let why): lines.append("  \(name) refused: \(why)")
            case .noAnswer: lines.append("  \(name) did not answer in time")
            case .unreachable(let why): lines.append("  \(name) could not be asked: \(why)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The line(s) for an output.
    /// - Parameter output: what to show.
    /// - Returns: text without a trailing newline.
    public func render(_ output: ChatOutput) -> String? {
        switch output {
        case .ready(let id, let name, let port):
            return "* you are \(name) (\(id.prefix(8))), listening on port \(port); type /help for commands"
        case .peer(let peer, let state, let address, let reason):
            let at = address.map { " at \($0)" } ?? ""
            switch state {
            case "connected": return "* \(peer) connected\(at)"
            case "notConnected":
                // Only a goodbye the peer sent is "peer said"; a peer that vanished (killed, cut
                // off, silent) is lost, with what this node saw.
                guard let reason else { return "* \(peer) disconnected" }
                if reason.isRemote { return "* \(peer) disconnected: peer said \(reason.message) (\(reason.code))" }
                return "* \(peer) lost: \(reason.message) (\(reason.code))"
            default: return "* \(peer) \(state)\(at)"
            }
        case .message(_, let from, let text, _, let hops, let isPrivate, let room):
            let via = hops > 1 ? " (\(hops) hops)" : ""
            if let room { return "<\(room) \(from.displayName)>\(via) \(text)" }
            return isPrivate ? "[\(from.displayName) → you]\(via) \(text)" : "<\(from.displayName)>\(via) \(text)"
        case .data(let from, let mode, let payload):
            return "* \(payload.count) bytes of \(mode) data from \(from)"
        case .sent(let id, _, let to, let isPrivate, let status, _):
            if status == "queued" {
                let target = isPrivate ? to.first.map { "\($0.displayName) is reachable" } ?? "a route appears" : "a peer connects"
                return "* queued \(id.prefix(8)): it goes out when \(target)"
            }
            return isPrivate ? "✓ \(id.prefix(8)) sent to \(to.first?.displayName ?? "?")" : nil
        case .receipt(let id, let status, let to):
            switch status {
            case "delivered": return "✓✓ \(id.prefix(8)) delivered\(to.map { " to \($0.displayName)" } ?? "")"
            case "expired": return "! \(id.prefix(8)) expired undelivered\(to.map { " to \($0.displayName)" } ?? "")"
            default: return "✓ \(id.prefix(8)) \(status)\(to.map { " to \($0.displayName)" } ?? "")"
            }
        case .reachability(let peer, let hops, let via):
            guard let hops else { return "* \(peer) is out of reach" }
            guard hops > 1 else { return nil }
            return "* \(peer) is reachable in \(hops) hops\(via.map { " via \($0.displayName)" } ?? "")"
        case .route(let peer, let links):
            let path = links.map { "\($0.peer.displayName) (\(JSONRenderer.milliseconds($0.latency)) ms)" }.joined(separator: " → ")
            return "* route to \(peer): you → \(path)"
        case .history(let lines):
            if lines.isEmpty { return "* no history yet" }
            return lines.map { line in
                let time = line.sentAt.formatted(date: .omitted, time: .shortened)
                let who = line.with.map { line.isOutgoing ? "[you → \($0.displayName)]" : "[\(line.from.displayName) → you]" }
                    ?? line.room.map { "<\($0) \(line.from.displayName)>" } ?? "<\(line.from.displayName)>"
                let mark = line.isOutgoing ? (line.status == "delivered" ? " ✓✓" : line.status == "sent" ? " ✓" : " (\(line.status))") : ""
                return "\(time) \(who) \(line.text)\(mark)"
            }.joined(separator: "\n")
        case .peers(let rows):
            if rows.isEmpty { return "* no peers found or connected" }
            return rows.map { row in
                let route = row.hops.map { hops in " \(hops) hop\(hops == 1 ? "" : "s")\(row.via.map { hops > 1 ? " via \($0.displayName)" : "" } ?? "")" } ?? ""
                return "* \(row.name) \(row.id.prefix(8)) \(row.state)\(route)\(row.address.map { " \($0)" } ?? "")"
            }
                .joined(separator: "\n")
        case .help(let text):
            return text
        case .connectFailed(let address, let reason):
            return "! could not connect to \(address): \(reason)"
        case .found(let peer, let addresses, _, let isNew):
            return isNew ? "* found \(peer)\(addresses.first.map { " at \($0)" } ?? "")" : nil
        case .lost(let peer):
            return "* lost \(peer)"
        case .advertising(let name, let service):
            return "* announced as '\(name)' (service \(service))"
        case .invitation(let peer, let direction, _, let awaitsAnswer):
            if direction == "sent" { return "* inviting \(peer)" }
            return awaitsAnswer
                ? "* \(peer) invites you: /accept \(peer.displayName) or /decline \(peer.displayName)"
                : "* \(peer) invites you; accepting"
        case .invitationFailed(let peer, let kind, let message):
            return "! invitation to \(peer) failed (\(kind)): \(message)"
        case .invitationEnded(let peer, let reason):
            return "* invitation from \(peer) ended: \(reason)"
        case .here(let point, let description):
            guard let point else { return "* your location is not set: /here LAT,LON" }
            return "* you are at \(MapWording.text(for: point))\(description.map { " (\($0))" } ?? "")"
        case .places(let result):
            return Self.places(result)
        case .pinned(let pin, let nobody):
            return "* pinned \"\(pin.label)\" at \(MapWording.text(for: pin.coordinate)) until \(Self.time(pin.expiresAt))"
                + (nobody ? "; nobody is connected: peers get it when they are reachable" : "")
        case .pin(let pin, let from):
            return "* \(pin.author.displayName) pinned \"\(pin.label)\"\(Self.away(pin, from))\(pin.note.isEmpty ? "" : ": \(pin.note)")"
        case .unpinned(let pin, let mine):
            return mine ? "* withdrew your pin \"\(pin.label)\"" : "* \(pin.author.displayName) withdrew the pin \"\(pin.label)\""
        case .pins(let pins, let from):
            if pins.isEmpty { return "* no pins" }
            return pins.enumerated().map { n, pin in
                "\(n + 1). \"\(pin.label)\" by \(pin.author.displayName)\(Self.away(pin, from)) until \(Self.time(pin.expiresAt))"
                    + (pin.note.isEmpty ? "" : " — \(pin.note)")
            }.joined(separator: "\n")
        case .exported(let file, let count):
            return "* wrote \(count) pin\(count == 1 ? "" : "s") to \(file)"
        case .map(let lines):
            return lines.joined(separator: "\n")
        case .mesh(let rows):
            return MeshGraphText.render(rows).joined(separator: "\n")
        case .pong(let peer, let roundTrip, let hops):
            guard let roundTrip else { return "! no pong from \(peer) within 5 s (\(hops) hop\(hops == 1 ? "" : "s") away)" }
            return "* pong from \(peer.displayName): \(JSONRenderer.milliseconds(roundTrip)) ms (\(hops) hop\(hops == 1 ? "" : "s"))"
        case .blocked(let peers):
            return peers.isEmpty ? "* nobody is blocked" : "* blocked: " + peers.map(\.description).joined(separator: ", ")
        case .nick(let peer, let previous, let isMe):
            return isMe ? "* you are now known as \(peer.displayName)" : "* \(previous) is now known as \(peer.displayName)"
        case .joined(let room):
            return "* joined \(room)\(room.hasPassword ? " (password: only those who know it can read it)" : ""); your lines go there now, /leave to go back"
        case .left(let room, let now):
            return "* left \(room); your lines go to \(now.map(\.description) ?? "everyone in the mesh")"
        case .rooms(let rooms, let active):
            if rooms.isEmpty { return "* you are in no room; your lines go to everyone in the mesh (/join #room)" }
            return "* rooms: " + rooms.map { $0 == active ? "\($0) (active)" : "\($0)" }.joined(separator: ", ")
                + (active == nil ? "; your lines go to everyone in the mesh" : "")
        case .file(let event):
            return FileOutput.text(event)
        case .files(let transfers):
            return FileOutput.text(transfers)
        case .error(let message):
            return "! \(message)"
        case .notice(let text):
            return "* \(text)"
        case .target:
            return nil
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
