import Foundation
import MeshPlaces
import MeshSession
import MeshStore
import MeshFiles

/// How ``ChatOutput`` looks in an interactive terminal: time stamps, peers in their colours,
/// private lines, notices and errors set apart, and my own lines with delivery marks (pure;
/// the clock and the time zone are parameters).
///
/// ```
/// 10:50 * bob (4fc54bc2) connected at 127.0.0.1:53296
/// 10:50 <bob> hello
/// 10:51 <alice> hi bob ✓
/// 10:51 [you → carol] psst ✓
/// 10:51 ✓✓ delivered to carol: "psst"
/// 10:52 [carol → you] (2 hops) got it
/// 10:52 ! unknown command /frob; type /help
/// ```
///
/// - Messages and notices start with `HH:MM` (local time of display); a line that was written
///   more than five minutes before it arrived (it waited in an outbox) adds when it was written.
/// - Lines to everyone are `<name> text`, private lines `[name → you] text` and
///   `[you → name] text`; notices start with `*`, errors with `!`.
/// - My lines are echoed when the chat front reports them `sent` (✓: stored and on its way) or
///   queued; a receipt later prints ✓✓ with the start of the line it confirms.
/// - Text from peers is made safe: control characters show as `^X`, bidirectional overrides
///   are removed, so a peer cannot move the cursor or recolour the screen.
///
/// The plain-text form (pipes, files) is ``TextRenderer``'s and does not change; this style is
/// only for a terminal. With ``ColourMode/none`` the same characters are written without colour.
public struct TerminalStyle: Sendable {
    /// How long a line may travel before its own writing time is shown too.
    public static let lateAfter: TimeInterval = 5 * 60
    /// How many of my recent lines are remembered, to quote them in receipts.
    public static let rememberedLines = 256
    /// The most characters of a line quoted in a receipt.
    public static let quoteLength = 40

    /// The time zone of the time stamps.
    public var timeZone: TimeZone
    /// My id (hex) and name, learnt from ``ChatOutput/ready(id:name:port:)``.
    public private(set) var me: (id: String, name: String)?
    /// My recent lines by id (text, and the peer of a private line), oldest first in `order`.
    private var mine: [String: (text: String, to: String?)] = [:]
    private var order: [String] = []

    /// Creates a style.
    /// - Parameter timeZone: the zone of the time stamps (default: the system's).
    public init(timeZone: TimeZone = .current) {
        self.timeZone = timeZone
    }

    /// The terminal lines of one output.
    /// - Parameters:
    ///   - output: what the chat front shows.
    ///   - now: the time of display, for time stamps.
    /// - Returns: the lines, top first (none when the output shows nothing in a terminal).
    public mutating func lines(for output: ChatOutput, now: Date) -> [StyledText] {
        let stamp = StyledText(clock(now) + " ", .timestamp)
        switch output {
        case .ready(let id, let name, _):
            me = (id, name)
            return notices(TextRenderer().render(output), stamp: stamp)
        case .nick(let peer, _, let isMe):
            if isMe { me = (peer.id.hex, peer.displayName) }
            return notices(TextRenderer().render(output), stamp: stamp)
        case .message(_, let from, let text, let sentAt, let hops, let isPrivate, let room, let mention, let action):
            var line = stamp
            if action {
                line = actionHeader(stamp, room: room, to: isPrivate ? ("you", .me) : nil, author: from.shownName, .peer(id: from.id.hex))
            } else if let room {
                line.append("<", .detail)
                line.append(Self.safe(room.description) + " ", .room)
                line.append(Self.safe(from.shownName), .peer(id: from.id.hex))
                line.append(">", .detail)
            } else if isPrivate {
                line.append("[", .privateMarker)
                line.append(Self.safe(from.shownName), .peer(id: from.id.hex))
                line.append(" → ", .privateMarker)
                line.append("you", .me)
                line.append("]", .privateMarker)
            } else {
                line.append("<", .detail)
                line.append(Self.safe(from.shownName), .peer(id: from.id.hex))
                line.append(">", .detail)
            }
            if hops > 1 { line.append(" (\(hops) hops)", .detail) }
            if abs(now.timeIntervalSince(sentAt)) > Self.lateAfter {
                line.append(" (written \(writtenAt(sentAt, now: now)))", .detail)
            }
            // A line that calls me (a mention, a private line) is highlighted.
            return body(line, text, role: mention || isPrivate ? .mention : .plain)
        case .sent(let id, let text, let to, let isPrivate, let status, let room, let action):
            remember(id, text: text, to: isPrivate ? to.first.map { Self.safe($0.shownName) } : nil)
            var line = stamp
            if action {
                let peer = isPrivate ? to.first.map { ($0.shownName, TextRole.peer(id: $0.id.hex)) } : nil
                line = actionHeader(stamp, room: room, to: peer, author: me?.name ?? "you", .me)
            } else if let room {
                line.append("<", .detail)
                line.append(Self.safe(room.description) + " ", .room)
                line.append(Self.safe(me?.name ?? "you"), .me)
                line.append(">", .detail)
            } else if isPrivate, let peer = to.first {
                line.append("[", .privateMarker)
                line.append("you", .me)
                line.append(" → ", .privateMarker)
                line.append(Self.safe(peer.shownName), .peer(id: peer.id.hex))
                line.append("]", .privateMarker)
            } else {
                line.append("<", .detail)
                line.append(Self.safe(me?.name ?? "you"), .me)
                line.append(">", .detail)
            }
            var lines = body(line, text)
            if status == "queued" {
                let until = isPrivate ? to.first.map { "\(Self.safe($0.shownName)) is reachable" } ?? "a route appears" : "a peer connects"
                lines[lines.count - 1].append(" (queued until \(until))", .pending)
            } else {
                lines[lines.count - 1].append(" ✓", .delivered)
            }
            return lines
        case .receipt(let id, let status, let to):
            let remembered = mine[id]
            let quote = remembered.map { " \"\(Self.quoted($0.text))\"" } ?? " \(id.prefix(8))"
            var line = stamp
            switch status {
            case "delivered":
                line.append("✓✓", .delivered)
                line.append(" delivered")
                if let to {
                    line.append(" to ")
                    line.append(Self.safe(to.shownName), .peer(id: to.id.hex))
                }
                line.append(":\(quote)")
            case "expired":
                line.append("!", .error)
                line.append(" expired undelivered\(to.map { " to \(Self.safe($0.shownName))" } ?? ""):\(quote)", .error)
            default:
                line.append("✓", .delivered)
                line.append(" \(status)\(to.map { " to \(Self.safe($0.shownName))" } ?? ""):\(quote)")
            }
            return [line]
        case .history(let entries):
            if entries.isEmpty { return notices(TextRenderer().render(output), stamp: stamp) }
            return entries.flatMap(historyLines)
        case .search(_, let entries) where !entries.isEmpty:
            let count = TextRenderer().render(output)?.split(separator: "\n").first.map(String.init)
            return notices(count, stamp: stamp) + entries.flatMap(historyLines)
        case .peers(let rows):
            if rows.isEmpty { return notices(TextRenderer().render(output), stamp: stamp) }
            return rows.map(peerRow)
        case .help(let text):
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { StyledText(Self.safe(String($0))) }
        case .map(let lines):
            // Drawn by MapView from sanitised labels, with its own colour when colour is on.
            return lines.map { StyledText($0) }
        case .peer(let peer, _, _, _), .found(let peer, _, _, _), .lost(let peer), .reachability(let peer, _, _),
             .invitation(let peer, _, _, _), .invitationFailed(let peer, _, _), .invitationEnded(let peer, _),
             .route(let peer, _), .data(let peer, _, _):
            return notices(TextRenderer().render(output), stamp: stamp, peer: peer)
        case .pin(let pin, _), .unpinned(let pin, _):
            return notices(TextRenderer().render(output), stamp: stamp, peer: pin.author)
        case .file(let event):
            return notices(TextRenderer().render(output), stamp: stamp, peer: FileOutput.peer(event))
        default:
            return notices(TextRenderer().render(output), stamp: stamp)
        }
    }

    /// The styled line for a notice of my own (the terminal's hints, such as how to quit).
    /// - Parameters:
    ///   - text: the notice, without its `*`.
    ///   - now: the time of display.
    /// - Returns: the line.
    public func notice(_ text: String, now: Date) -> StyledText {
        StyledText(clock(now) + " ", .timestamp) + StyledText("*", .notice) + StyledText(" " + Self.safe(text))
    }

    // MARK: Pieces

    /// A message body after its header: the first line on the header's row, further lines of a
    /// multi-line text indented beneath it.
    /// The start of an action line: `<#dev> * alice`, `[→ bob] * alice`, `* alice` (then the text).
    private func actionHeader(_ start: StyledText, room: RoomRef?, to: (name: String, role: TextRole)?, author: String,
                              _ role: TextRole) -> StyledText {
        var line = start
        if let room {
            line.append("<", .detail)
            line.append(Self.safe(room.description), .room)
            line.append("> ", .detail)
        } else if let to {
            line.append("[→ ", .privateMarker)
            line.append(Self.safe(to.name), to.role)
            line.append("] ", .privateMarker)
        }
        line.append("*", .notice)
        line.append(" ")
        line.append(Self.safe(author), role)
        return line
    }

    private func body(_ header: StyledText, _ text: String, role: TextRole = .plain) -> [StyledText] {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.safe(String($0)) }
        let indent = String(repeating: " ", count: TerminalText.displayWidth(header.plain) + 1)
        return parts.enumerated().map { n, part in
            n == 0 ? header + StyledText(" ") + StyledText(part, role) : StyledText(indent) + StyledText(part, role)
        }
    }

    /// TextRenderer's lines, made safe, with `*` notices and `!` errors styled, the first one
    /// time-stamped, and the peer's name in its colour.
    private func notices(_ text: String?, stamp: StyledText, peer: PeerID? = nil) -> [StyledText] {
        guard let text else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { n, raw in
            let line = Self.safe(String(raw))
            var styled = n == 0 ? stamp : StyledText()
            if line.hasPrefix("! ") {
                styled.append(line, .error)
                return styled
            }
            var rest = Substring(line)
            if line.hasPrefix("* ") {
                styled.append("*", .notice)
                styled.append(" ")
                rest = rest.dropFirst(2)
            }
            if let peer, let range = rest.range(of: Self.safe(peer.shownName)) {
                styled.append(String(rest[..<range.lowerBound]))
                styled.append(String(rest[range]), .peer(id: peer.id.hex))
                styled.append(String(rest[range.upperBound...]))
            } else {
                styled.append(String(rest))
            }
            return styled
        }
    }

    private func historyLines(_ entry: ChatOutput.HistoryLine) -> [StyledText] {
        // The date too: an old line must not look like a live one.
        var line = StyledText(TextRenderer.dated(entry.sentAt, timeZone: timeZone) + " ", .timestamp)
        let author: TextRole = entry.isOutgoing ? .me : .peer(id: entry.from.id.hex)
        if entry.isAction {
            let to = entry.with.map { entry.isOutgoing ? ($0.shownName, TextRole.peer(id: $0.id.hex)) : ("you", .me) }
            line = actionHeader(line, room: entry.room, to: to, author: entry.from.shownName, author)
        } else if let with = entry.with {
            line.append("[", .privateMarker)
            if entry.isOutgoing {
                line.append("you", .me)
                line.append(" → ", .privateMarker)
                line.append(Self.safe(with.shownName), .peer(id: with.id.hex))
            } else {
                line.append(Self.safe(entry.from.shownName), author)
                line.append(" → ", .privateMarker)
                line.append("you", .me)
            }
            line.append("]", .privateMarker)
        } else {
            line.append("<", .detail)
            if let room = entry.room { line.append(Self.safe(room.description) + " ", .room) }
            line.append(Self.safe(entry.from.shownName), author)
            line.append(">", .detail)
        }
        var lines = body(line, entry.text)
        if entry.isOutgoing {
            switch entry.status {
            case "delivered": lines[lines.count - 1].append(" ✓✓", .delivered)
            case "sent": lines[lines.count - 1].append(" ✓", .delivered)
            case "expired": lines[lines.count - 1].append(" (expired)", .error)
            default: lines[lines.count - 1].append(" (\(entry.status))", .pending)
            }
        }
        return lines
    }

    private func peerRow(_ row: ChatOutput.PeerRow) -> StyledText {
        var line = StyledText("*", .notice)
        line.append(" ")
        line.append(Self.safe(row.name), .peer(id: row.id))
        line.append(" \(row.id.prefix(8))", .detail)
        line.append(" \(row.state)")
        if let hops = row.hops {
            line.append(" \(hops) hop\(hops == 1 ? "" : "s")")
            if let via = row.via, hops > 1 {
                line.append(" via ")
                line.append(Self.safe(via.shownName), .peer(id: via.id.hex))
            }
        }
        if let address = row.address { line.append(" \(Self.safe(address))", .detail) }
        if let away = row.away { line.append(" (away: \(Self.safe(away)))", .detail) }
        return line
    }

    private mutating func remember(_ id: String, text: String, to: String?) {
        if mine[id] == nil { order.append(id) }
        mine[id] = (text, to)
        while order.count > Self.rememberedLines { mine[order.removeFirst()] = nil }
    }

    // MARK: Text

    /// `HH:MM` in ``timeZone``.
    func clock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return Self.twoDigits(parts.hour ?? 0) + ":" + Self.twoDigits(parts.minute ?? 0)
    }

    /// When a late line was written: `HH:MM` on the same day, else `YYYY-MM-DD HH:MM`.
    private func writtenAt(_ date: Date, now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        if calendar.isDate(date, inSameDayAs: now) { return clock(date) }
        let day = calendar.dateComponents([.year, .month, .day], from: date)
        return "\(day.year ?? 0)-\(Self.twoDigits(day.month ?? 0))-\(Self.twoDigits(day.day ?? 0)) \(clock(date))"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// The start of a line for a receipt: one line, at most ``quoteLength`` characters.
    private static func quoted(_ text: String) -> String {
        let line = safe(text).replacingOccurrences(of: "\n", with: " ")
        return line.count > quoteLength ? line.prefix(quoteLength - 1) + "…" : line
    }

    /// Text from the network made safe to print: C0 and C1 control characters (except line
    /// feeds, which callers split on) shown in caret notation (`^[` for ESC) or as `\u{…}`, tabs
    /// as a space, bidirectional embeddings, overrides and isolates removed.
    /// - Parameter text: untrusted text.
    /// - Returns: printable text.
    public static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscaping($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            switch v {
            case 0x0A: out.append(scalar)
            case 0x09: out.append(" ")
            case 0x00...0x1F: out.append(contentsOf: "^\(Character(Unicode.Scalar(UInt8(v) + 0x40)))".unicodeScalars)
            case 0x7F: out.append(contentsOf: "^?".unicodeScalars)
            case 0x80...0x9F: out.append(contentsOf: "\\u{\(String(v, radix: 16))}".unicodeScalars)
            case 0x2028, 0x2029: out.append(" ")
            case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: break
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (v < 0x20 && v != 0x0A) || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
            || v == 0x200E || v == 0x200F || v == 0x061C || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
}
