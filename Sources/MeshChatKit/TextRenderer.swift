import Foundation
import MeshChat
import MeshPlaces
import MeshSession
import MeshStore
import Places
import MeshFiles

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
                let source = hit.source.map { " [from \($0.shownName)]" } ?? ""
                lines.append("\(number). \(hit.name) — \(MapWording.whereabouts(distance: hit.distance.metres, bearing: hit.bearing))\(source)")
            }
        }
        for source in result.sources where source.peer != nil {
            let name = source.peer?.shownName ?? "you"
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
            case "connected": return "* \(peer.shown) connected\(at)"
            case "notConnected":
                // Only a goodbye the peer sent is "peer said"; a peer that vanished (killed, cut
                // off, silent) is lost, with what this node saw.
                guard let reason else { return "* \(peer.shown) disconnected" }
                if reason.isRemote { return "* \(peer.shown) disconnected: peer said \(reason.message) (\(reason.code))" }
                return "* \(peer.shown) lost: \(reason.message) (\(reason.code))"
            default: return "* \(peer.shown) \(state)\(at)"
            }
        case .message(_, let from, let text, _, let hops, let isPrivate, let room, _, let action):
            let via = hops > 1 ? " (\(hops) hops)" : ""
            if action { return Self.actionMarker(room: room, to: isPrivate ? "you" : nil) + "* \(from.shownName)\(via) \(text)" }
            if let room { return "<\(room) \(from.shownName)>\(via) \(text)" }
            return isPrivate ? "[\(from.shownName) → you]\(via) \(text)" : "<\(from.shownName)>\(via) \(text)"
        case .data(let from, let mode, let payload):
            return "* \(payload.count) bytes of \(mode) data from \(from.shown)"
        case .sent(let id, _, let to, let isPrivate, let status, _, _):
            if status == "queued" {
                let target = isPrivate ? to.first.map { "\($0.shownName) is reachable" } ?? "a route appears" : "a peer connects"
                return "* queued \(id.prefix(8)): it goes out when \(target)"
            }
            return isPrivate ? "✓ \(id.prefix(8)) sent to \(to.first?.shownName ?? "?")" : nil
        case .receipt(let id, let status, let to):
            switch status {
            case "delivered": return "✓✓ \(id.prefix(8)) delivered\(to.map { " to \($0.shownName)" } ?? "")"
            case "expired": return "! \(id.prefix(8)) expired undelivered\(to.map { " to \($0.shownName)" } ?? "")"
            default: return "✓ \(id.prefix(8)) \(status)\(to.map { " to \($0.shownName)" } ?? "")"
            }
        case .reachability(let peer, let hops, let via):
            guard let hops else { return "* \(peer.shown) is out of reach" }
            guard hops > 1 else { return nil }
            return "* \(peer.shown) is reachable in \(hops) hops\(via.map { " via \($0.shownName)" } ?? "")"
        case .route(let peer, let links):
            let path = links.map { "\($0.peer.shownName) (\(JSONRenderer.milliseconds($0.latency)) ms)" }.joined(separator: " → ")
            return "* route to \(peer.shown): you → \(path)"
        case .history(let lines):
            if lines.isEmpty { return "* no history yet" }
            return Self.historyText(lines)
        case .search(let text, let lines):
            if lines.isEmpty { return "* no stored line contains \"\(text)\"" }
            return "* \(lines.count) line\(lines.count == 1 ? "" : "s") with \"\(text)\":\n" + Self.historyText(lines)
        case .whois(let whois):
            return Self.whoisText(whois)
        case .away(let text):
            return text.map { "* you are away: \($0) (peers see it in /peers and /whois)" } ?? "* you are back: no away text"
        case .peers(let rows):
            if rows.isEmpty { return "* no peers found or connected" }
            return rows.map { row in
                let route = row.hops.map { hops in " \(hops) hop\(hops == 1 ? "" : "s")\(row.via.map { hops > 1 ? " via \($0.shownName)" : "" } ?? "")" } ?? ""
                return "* \(row.peer?.shownName ?? row.name) \(row.id.prefix(8)) \(row.state)\(route)\(row.address.map { " \($0)" } ?? "")"
                    + (row.away.map { " (away: \($0))" } ?? "")
            }
                .joined(separator: "\n")
        case .help(let text):
            return text
        case .code(let code):
            return "* your connection code (a peer connects with /connect CODE): \(code)"
        case .connectFailed(let address, let reason):
            return "! could not connect to \(address): \(reason)"
        case .found(let peer, let addresses, _, let isNew):
            return isNew ? "* found \(peer.shown)\(addresses.first.map { " at \($0)" } ?? "")" : nil
        case .lost(let peer):
            return "* lost \(peer.shown)"
        case .advertising(let name, let service):
            return "* announced as '\(name)' (service \(service))"
        case .invitation(let peer, let direction, _, let awaitsAnswer):
            if direction == "sent" { return "* inviting \(peer.shown)" }
            return awaitsAnswer
                ? "* \(peer.shown) invites you: /accept \(peer.displayName) or /decline \(peer.displayName)"
                : "* \(peer.shown) invites you; accepting"
        case .invitationFailed(let peer, let kind, let message):
            return "! invitation to \(peer.shown) failed (\(kind)): \(message)"
        case .invitationEnded(let peer, let reason):
            return "* invitation from \(peer.shown) ended: \(reason)"
        case .here(let point, let description):
            guard let point else { return "* your location is not set: /here LAT,LON" }
            return "* you are at \(MapWording.text(for: point))\(description.map { " (\($0))" } ?? "")"
        case .places(let result):
            return Self.places(result)
        case .pinned(let pin, let nobody):
            return "* pinned \"\(pin.label)\" at \(MapWording.text(for: pin.coordinate)) until \(Self.time(pin.expiresAt))"
                + (nobody ? "; nobody is connected: peers get it when they are reachable" : "")
        case .pin(let pin, let from):
            return "* \(pin.author.shownName) pinned \"\(pin.label)\"\(Self.away(pin, from))\(pin.note.isEmpty ? "" : ": \(pin.note)")"
        case .unpinned(let pin, let mine):
            return mine ? "* withdrew your pin \"\(pin.label)\"" : "* \(pin.author.shownName) withdrew the pin \"\(pin.label)\""
        case .pins(let pins, let from):
            if pins.isEmpty { return "* no pins" }
            return pins.enumerated().map { n, pin in
                "\(n + 1). \"\(pin.label)\" by \(pin.author.shownName)\(Self.away(pin, from)) until \(Self.time(pin.expiresAt))"
                    + (pin.note.isEmpty ? "" : " — \(pin.note)")
            }.joined(separator: "\n")
        case .exported(let file, let count):
            return "* wrote \(count) pin\(count == 1 ? "" : "s") to \(file)"
        case .map(let lines):
            return lines.joined(separator: "\n")
        case .mesh(let rows):
            return MeshGraphText.render(rows).joined(separator: "\n")
        case .pong(let peer, let roundTrip, let hops):
            guard let roundTrip else { return "! no pong from \(peer.shown) within 5 s (\(hops) hop\(hops == 1 ? "" : "s") away)" }
            return "* pong from \(peer.shownName): \(JSONRenderer.milliseconds(roundTrip)) ms (\(hops) hop\(hops == 1 ? "" : "s"))"
        case .verify(let peer, let number, let mine, let theirs):
            return "* safety number with \(peer.shownName) (\(peer.id.shortHex)): \(number.grouped)\n"
                + "  compare it with \(peer.shownName)'s screen; your key \(mine), \(peer.shownName)'s key \(theirs)"
        case .trust(let peer, let verified):
            return verified ? "* \(peer.shown) is verified: you compared the safety number (/untrust undoes it)"
                : "* \(peer.shown) is no longer marked verified"
        case .trusted(let peers):
            return peers.isEmpty ? "* nobody is verified yet (/verify @NAME, then /trust @NAME)" : "* verified: " + peers.map(\.shown).joined(separator: ", ")
        case .nameConflict(let peer, let holder):
            return "! \(peer.shown) claims the name of \(holder.shown), whom you knew first: it is another key, "
                + "so @\(holder.displayName) still means \(holder.id.shortHex); address the newcomer as @\(peer.id.shortHex)"
        case .keyRotated(let peer, let previous, let verified):
            return "* \(peer.displayName) changed keys (verified rotation, \(previous.shortHex) → \(peer.id.shortHex))\(verified ? "; still verified" : "")"
        case .keyDisputed(let previous, let first, let claimant, let unverified):
            return "* warning: key \(previous.shortHex) was handed on twice, to \(first.displayName) (\(first.id.shortHex)) and to "
                + "\(claimant.displayName) (\(claimant.id.shortHex)): its private key has leaked and either may be an impostor. "
                + (unverified ? "\(first.displayName) is no longer verified; " : "")
                + "compare safety numbers (/verify) before trusting either"
        case .blocked(let peers):
            return peers.isEmpty ? "* nobody is blocked" : "* blocked: " + peers.map(\.shown).joined(separator: ", ")
        case .nick(let peer, let previous, let isMe):
            return isMe ? "* you are now known as \(peer.shownName)" : "* \(previous) is now known as \(peer.shownName)"
        case .joined(let room):
            return "* joined \(room)\(room.hasPassword ? " (password: only those who know it can read it)" : ""); your lines go there now, /leave to go back"
        case .left(let room, let now):
            return "* left \(room); your lines go to \(now.map(\.description) ?? "everyone in the mesh")"
        case .rooms(let rooms, let active):
            if rooms.isEmpty { return "* you are in no room; your lines go to everyone in the mesh (/join #room)" }
            return "* rooms: " + rooms.map { $0 == active ? "\($0) (active)" : "\($0)" }.joined(separator: ", ")
                + (active == nil ? "; your lines go to everyone in the mesh" : "")
        case .file(let event):
            // Progress is the terminal's status row (TerminalIO) and JSON's fileProgress: no line of text.
            return FileOutput.text(event)
        case .files(let transfers):
            return FileOutput.text(transfers)
        case .error(let message):
            return "! \(message)"
        case .notice(let text):
            return "* \(text)"
        case .target, .buffers, .bell:
            return nil
        }
    }
}

extension TextRenderer {
    /// Stored lines, one a line (several for a multi-line text), each with its date, time, room or
    /// private marker and sender, so that an old line never looks like a live one:
    /// `2026-11-25 10:50 <#dev bob> hi`.
    static func historyText(_ lines: [ChatOutput.HistoryLine]) -> String {
        lines.map { line in
            if line.isAction {
                let to = line.with.map { line.isOutgoing ? $0.shownName : "you" }
                return "\(dated(line.sentAt)) \(actionMarker(room: line.room, to: to))* \(line.from.shownName) \(line.text)\(deliveryMark(line))"
            }
            let who = line.with.map { line.isOutgoing ? "[you → \($0.shownName)]" : "[\(line.from.shownName) → you]" }
                ?? line.room.map { "<\($0) \(line.from.shownName)>" } ?? "<\(line.from.shownName)>"
            return "\(dated(line.sentAt)) \(who) \(line.text)\(deliveryMark(line))"
        }.joined(separator: "\n")
    }

    private static func deliveryMark(_ line: ChatOutput.HistoryLine) -> String {
        line.isOutgoing ? (line.status == "delivered" ? " ✓✓" : line.status == "sent" ? " ✓" : " (\(line.status))") : ""
    }

    /// What goes before an action line's `* NAME TEXT`: its room (`<#dev> `), the other party
    /// of a private one (`[→ bob] `, `[→ you] `), or nothing for a line to everyone.
    /// - Parameters:
    ///   - room: the room of a room line.
    ///   - to: the shown name of a private line's recipient.
    /// - Returns: the marker with its trailing space, or "".
    static func actionMarker(room: RoomRef?, to: String?) -> String {
        if let room { return "<\(room)> " }
        if let to { return "[→ \(to)] " }
        return ""
    }

    /// `YYYY-MM-DD HH:MM` in a time zone (the system's by default).
    static func dated(_ date: Date, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(p.year ?? 0)-\(two(p.month))-\(two(p.day)) \(two(p.hour)):\(two(p.minute))"
    }

    /// The answer to `/whois` as lines.
    static func whoisText(_ whois: ChatOutput.Whois) -> String {
        var lines = ["* \(whois.peer.shown)", "  id: \(whois.peer.id.hex)"]
        lines.append("  key: " + (whois.fingerprint.map { "\($0)\(whois.verified ? " (verified ✓)" : " (not verified: /verify)")" }
                                 ?? "not known yet (its advert or a link brings it)"))
        if let hops = whois.hops {
            let path = (["you"] + whois.route.map(\.shownName)).joined(separator: " → ")
            lines.append("  reachable in \(hops) hop\(hops == 1 ? "" : "s"): \(path)")
        } else {
            lines.append("  out of reach")
        }
        if let address = whois.address { lines.append("  address: \(address)") }
        if let suite = whois.suite { lines.append("  link: \(suite.noiseProtocol)") }
        lines.append("  data sets: " + (whois.dataSets.isEmpty ? "none" : whois.dataSets.joined(separator: ", ")))
        lines.append("  away: " + (whois.away ?? "no"))
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
