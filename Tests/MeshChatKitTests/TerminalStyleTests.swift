import Foundation
@testable import MeshChatKit
import MeshSession
import MeshTestSupport
import Testing

/// `TerminalStyle`, `StyledText`, `PeerPalette`, `ColourMode` and `CompletionNames`: how chat
/// lines look in a terminal, with and without colour.
@Suite("terminal style")
struct TerminalStyleTests {
    static let bob = RendererTests.bob
    static let carol = RendererTests.carol
    /// 10:50:48 UTC.
    static let now = RendererTests.sentAt
    static let utc = TimeZone(identifier: "UTC")!

    /// A style that knows I am alice.
    static func style() -> TerminalStyle {
        var style = TerminalStyle(timeZone: utc)
        _ = style.lines(for: .ready(id: "e42a812b69b8d03f50cb611027ce26f4", name: "alice", port: 7000), now: now)
        return style
    }

    static func plain(_ output: ChatOutput, _ style: inout TerminalStyle, at time: Date = now) -> [String] {
        style.lines(for: output, now: time).map(\.plain)
    }

    static func plain(_ output: ChatOutput) -> [String] {
        var style = Self.style()
        return plain(output, &style)
    }

    @Test("messages: HH:MM, <name> to everyone, [name → you] private, hops when relayed")
    func messages() {
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "hello", sentAt: Self.now)) == ["10:50 <bob> hello"])
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "psst", sentAt: Self.now, hops: 2, isPrivate: true))
            == ["10:50 [bob → you] (2 hops) psst"])
    }

    @Test("a line written long before it arrived says when it was written")
    func lateMessage() {
        let written = Self.now.addingTimeInterval(-3600)
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "old", sentAt: written)) == ["10:50 <bob> (written 09:50) old"])
        let yesterday = Self.now.addingTimeInterval(-86_400)
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "older", sentAt: yesterday))
            == ["10:50 <bob> (written 2026-11-21 10:50) older"])
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "fresh", sentAt: Self.now.addingTimeInterval(-60))) == ["10:50 <bob> fresh"])
    }

    @Test("my lines are echoed with my name and ✓ when sent, or what they wait for when queued")
    func myLines() {
        #expect(Self.plain(.sent(id: "a1", text: "hi all", to: [Self.bob])) == ["10:50 <alice> hi all ✓"])
        #expect(Self.plain(.sent(id: "a2", text: "secret", to: [Self.bob], isPrivate: true)) == ["10:50 [you → bob] secret ✓"])
        #expect(Self.plain(.sent(id: "a3", text: "anyone?", to: [], status: "queued")) == ["10:50 <alice> anyone? (queued until a peer connects)"])
        #expect(Self.plain(.sent(id: "a4", text: "later", to: [Self.bob], isPrivate: true, status: "queued"))
            == ["10:50 [you → bob] later (queued until bob is reachable)"])
    }

    @Test("receipts quote the line they confirm: ✓✓ delivered, ✓ sent once queued, ! expired")
    func receipts() {
        var style = Self.style()
        _ = Self.plain(.sent(id: "fd8095e0a793f5c2", text: "the secret plan, which is long enough to be cut off here", to: [Self.bob], isPrivate: true),
                       &style)
        #expect(Self.plain(.receipt(id: "fd8095e0a793f5c2", status: "delivered", to: Self.bob), &style)
            == ["10:50 ✓✓ delivered to bob: \"the secret plan, which is long enough t…\""])
        _ = Self.plain(.sent(id: "q1", text: "wait", to: [], status: "queued"), &style)
        #expect(Self.plain(.receipt(id: "q1", status: "sent", to: nil), &style) == ["10:50 ✓ sent: \"wait\""])
        #expect(Self.plain(.receipt(id: "0123456789abcdef", status: "expired", to: Self.bob), &style)
            == ["10:50 ! expired undelivered to bob: 01234567"])
        let expired = style.lines(for: .receipt(id: "q1", status: "expired", to: nil), now: Self.now)[0]
        #expect(expired.spans.dropFirst().allSatisfy { $0.role == .error })
    }

    @Test("notices start with *, errors with !, each time-stamped and in its role")
    func noticesAndErrors() throws {
        var style = Self.style()
        let error = try #require(style.lines(for: .error("unknown command /frob; type /help"), now: Self.now).first)
        #expect(error.plain == "10:50 ! unknown command /frob; type /help")
        #expect(error.spans.map(\.role) == [.timestamp, .error])
        let notice = try #require(style.lines(for: .peer(Self.bob, state: "connected", address: "127.0.0.1:5", reason: nil), now: Self.now).first)
        #expect(notice.plain == "10:50 * bob (4fc54bc2) connected at 127.0.0.1:5")
        #expect(notice.spans.contains { $0.role == .notice && $0.text == "*" })
        #expect(notice.spans.contains { $0.role == .peer(id: Self.bob.id.hex) && $0.text == "bob" })
        #expect(style.notice("press Ctrl-C again", now: Self.now).plain == "10:50 * press Ctrl-C again")
    }

    @Test("private lines, lines to everyone, notices and errors look different with colour")
    func distinctLooks() throws {
        var style = Self.style()
        func roles(_ output: ChatOutput) -> Set<TextRole> {
            Set(style.lines(for: output, now: Self.now).flatMap(\.spans).map(\.role))
        }
        let mesh = roles(.message(id: "m", from: Self.bob, text: "hi", sentAt: Self.now))
        let direct = roles(.message(id: "m", from: Self.bob, text: "hi", sentAt: Self.now, isPrivate: true))
        #expect(direct.contains(.privateMarker) && !mesh.contains(.privateMarker))
        #expect(roles(.notice("x")).contains(.notice))
        #expect(roles(.error("x")).contains(.error))
        let sgrs = [TextRole.privateMarker, .notice, .error, .peer(id: Self.bob.id.hex), .delivered, .pending, .timestamp]
            .map { $0.sgr(.extended) }
        #expect(Set(sgrs).count == sgrs.count)
    }

    @Test("text from peers cannot reach the terminal as control sequences")
    func untrustedText() throws {
        let evil = try PeerID(id: Self.bob.id, displayName: "b\u{1B}[2Job")
        let lines = Self.plain(.message(id: "m", from: evil, text: "\u{1B}]0;title\u{07}hi\u{202E}dlrow\u{9B}31m\tend", sentAt: Self.now))
        #expect(lines == ["10:50 <b^[[2Job> ^[]0;title^Ghidlrow\\u{9b}31m end"])
        var style = Self.style()
        let rendered = style.lines(for: .message(id: "m", from: evil, text: "\u{1B}[2J", sentAt: Self.now), now: Self.now)
            .map { $0.rendered(.extended) }.joined()
        #expect(!rendered.contains("\u{1B}[2J"))
    }

    @Test("a multi-line message continues under its first line")
    func multiLine() {
        #expect(Self.plain(.message(id: "m", from: Self.bob, text: "one\ntwo", sentAt: Self.now))
            == ["10:50 <bob> one", "            two"])
    }

    @Test("answers are shown as TextRenderer writes them; /history and /peers with names in colour")
    func answers() {
        #expect(Self.plain(.help("Type a line…\n  /peers  list")) == ["Type a line…", "  /peers  list"])
        #expect(Self.plain(.map(["\u{1B}[1m@\u{1B}[0m map"])) == ["\u{1B}[1m@\u{1B}[0m map"])
        let history = Self.plain(.history([
            .init(id: "1", from: Self.bob, with: nil, text: "hi", sentAt: Self.now, isOutgoing: false, status: "received", hops: 1),
            .init(id: "2", from: Self.carol, with: Self.bob, text: "yo", sentAt: Self.now, isOutgoing: true, status: "delivered", hops: nil),
        ]))
        #expect(history == ["2026-11-22 10:50 <bob> hi", "2026-11-22 10:50 [you → bob] yo ✓✓"])   // dated: not a live line
        var row = ChatOutput.PeerRow(id: Self.carol.id.hex, name: "carol", state: "reachable", address: nil)
        row.hops = 2
        row.via = Self.bob
        #expect(Self.plain(.peers([row])) == ["* carol 620da8ed reachable 2 hops via bob"])
    }

    @Test("every output: no escape sequence without colour, the same characters with colour", arguments: RendererTests.cases)
    func everyOutput(_ item: RendererTests.Case) {
        for mode in [ColourMode.basic, .extended] {
            var style = Self.style()
            for line in style.lines(for: item.output, now: Self.now) {
                let none = line.rendered(.none)
                #expect(none == line.plain)
                if case .map = item.output { continue }
                #expect(!none.contains("\u{1B}"), "\(item.label)")
                let coloured = line.rendered(mode)
                #expect(coloured.replacingOccurrences(of: #"\x1B\[[0-9;]*m"#, with: "", options: .regularExpression) == none)
            }
        }
    }

    @Test("colour only on a terminal, never with NO_COLOR set; 256 colours when the terminal says so")
    func colourMode() {
        #expect(ColourMode.detect(isTerminal: false, environment: ["TERM": "xterm-256color"]) == .none)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "xterm-256color", "NO_COLOR": "1"]) == .none)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "xterm", "NO_COLOR": ""]) == .basic)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "dumb"]) == .none)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "screen"]) == .basic)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "tmux-256color"]) == .extended)
        #expect(ColourMode.detect(isTerminal: true, environment: ["TERM": "xterm", "COLORTERM": "truecolor"]) == .extended)
        #expect(ColourMode.detect(isTerminal: true, environment: [:]) == .basic)
    }

    @Test("a peer's colour comes from its id: stable, spread over the palette, never red, the same under another name")
    func peerColours() throws {
        #expect(PeerPalette.sgr(forPeer: Self.bob.id.hex, mode: .extended) == "38;5;\(PeerPalette.extended[PeerPalette.slot(forPeer: Self.bob.id.hex, count: 12)])")
        // Frozen (FNV-1a of the hex id): a peer keeps its colour across versions and machines.
        #expect(PeerPalette.sgr(forPeer: "4fc54bc2369e9405ffb0174daced1b9c", mode: .extended) == "38;5;133")
        #expect(PeerPalette.sgr(forPeer: "4FC54BC2369E9405FFB0174DACED1B9C", mode: .basic) == "33")
        #expect(PeerPalette.sgr(forPeer: "620da8ed2398ab78558d6094fbe211c8", mode: .extended) == "38;5;173")
        #expect(PeerPalette.sgr(forPeer: Self.bob.id.hex, mode: .none) == nil)
        var generator = SplitMix64(seed: 1)
        var used = Set<String>()
        for _ in 0..<200 {
            let id = generator.bytes(16).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            used.insert(PeerPalette.sgr(forPeer: id, mode: .extended) ?? "")
            let basic = PeerPalette.sgr(forPeer: id, mode: .basic) ?? ""
            #expect(!["31", "91", "30", "37", "90", "97"].contains(basic))
        }
        #expect(used.count == PeerPalette.extended.count)
        #expect(!PeerPalette.extended.contains { [1, 9, 88, 124, 160, 196, 0, 15, 16, 231].contains($0) || (232...255).contains($0) })
        let renamed = try PeerID(id: Self.bob.id, displayName: "robert")
        var style = Self.style()
        let roles = style.lines(for: .message(id: "m", from: renamed, text: "hi", sentAt: Self.now), now: Self.now).flatMap(\.spans).map(\.role)
        #expect(roles.contains(.peer(id: Self.bob.id.hex)))
    }

    @Test("Tab completion learns peers' names from outputs, leaves me out, and uses id prefixes for names with spaces")
    func completionNames() {
        var names = CompletionNames()
        names.learn(from: .ready(id: "e42a812b69b8d03f50cb611027ce26f4", name: "alice", port: 1))
        let learnt = names.learn(from: .peer(Self.bob, state: "connected", address: nil, reason: nil))
        #expect(learnt)
        let again = names.learn(from: .message(id: "m", from: Self.bob, text: "hi", sentAt: Self.now))
        #expect(!again)
        names.learn(from: .message(id: "m", from: Self.carol, text: "hi", sentAt: Self.now))
        names.learn(from: .peers([.init(id: "e42a812b69b8d03f50cb611027ce26f4", name: "alice", state: "connected", address: nil)]))
        #expect(names.words == ["620da8ed", "bob"])
    }
}
