import Foundation
@testable import MeshChatKit
import MeshSession
import MeshStore
import Testing

/// The conversations model (buffers, unread and mention counts, prompt, switching) and mention
/// matching, in the pure tier.
@Suite("conversations")
struct ConversationsTests {
    static let bob = try! PeerID(id: NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c"), displayName: "bob")
    static let carol = try! PeerID(id: NodeID(hex: "620da8ed2398ab78558d6094fbe211c8"), displayName: "carol")
    static let dev = RoomRef(name: "#dev", hasPassword: false)
    static let at = Date(timeIntervalSince1970: 1_795_344_648)

    static func line(_ text: String, from: PeerID = bob, isPrivate: Bool = false, room: RoomRef? = nil) -> ChatOutput {
        .message(id: UUID().uuidString, from: from, text: text, sentAt: at, isPrivate: isPrivate, room: room)
    }

    static func texts(_ entries: [Conversations.Entry]) -> [String] {
        entries.compactMap { entry in
            switch entry.output {
            case .message(_, _, let text, _, _, _, _, _, _): text
            case .sent(_, let text, _, _, _, _, _): text
            case .notice(let text): text
            default: nil
            }
        }
    }

    @Test("a resize draws a /map shown last again: only the last output of the buffer looked at is replaced, with its time; an action line is still a line")
    func replaceLastMap() {
        var model = Conversations()
        _ = model.record(.map(["old picture"]), mention: false, at: Self.at)
        #expect(model.showsMapLast)
        let replaced = model.replaceLastMap(with: ["new picture"])
        #expect(replaced)
        guard case .map(let lines) = model.scrollback.last?.output else { Issue.record("no map"); return }
        #expect(lines == ["new picture"] && model.scrollback.last?.at == Self.at && model.scrollback.count == 1)
        _ = model.record(.message(id: "x", from: Self.bob, text: "waves", sentAt: Self.at, action: true), mention: false, at: Self.at)
        #expect(!model.showsMapLast)
        let again = model.replaceLastMap(with: ["newer"])
        #expect(!again)
        #expect(Self.texts(model.scrollback) == ["waves"])
    }

    @Test("lines go to their conversation: the mesh, a room, a private conversation; notices to the one looked at")
    func routing() {
        var model = Conversations()
        var placed = Conversations.Placement.none
        placed = model.record(Self.line("to all"), mention: false, at: Self.at)
        #expect(placed == .shown)
        placed = model.record(Self.line("in dev", room: Self.dev), mention: false, at: Self.at)
        #expect(placed == .elsewhere(2))
        placed = model.record(Self.line("psst", isPrivate: true), mention: true, at: Self.at)
        #expect(placed == .elsewhere(3))
        placed = model.record(.sent(id: "1", text: "hi bob", to: [Self.bob], isPrivate: true), mention: false, at: Self.at)
        #expect(placed == .elsewhere(3))
        placed = model.record(.notice("a notice"), mention: false, at: Self.at)
        #expect(placed == .shown)
        placed = model.record(.target(.mesh), mention: false, at: Self.at)
        #expect(placed == Conversations.Placement.none)
        #expect(Self.texts(model.scrollback) == ["to all", "a notice"])
        #expect(model.status.map(\.label) == ["mesh", "#dev", "@bob"])
        // Only arrived lines count as unread (my own line is not); a private line counts as a mention.
        #expect(model.status.map(\.unread) == [0, 1, 1])
        #expect(model.status.map(\.mentions) == [0, 0, 1])
        #expect(model.statusLine == "[1:mesh] 2:#dev(1) 3:@bob(1!)")
    }

    @Test("switching shows that buffer's own lines, clears its counts and changes the prompt; other lines keep counting")
    func switching() {
        var model = Conversations()
        var placed = Conversations.Placement.none
        _ = model.record(Self.line("to all"), mention: false, at: Self.at)
        _ = model.record(Self.line("in dev", room: Self.dev), mention: false, at: Self.at)
        _ = model.record(Self.line("more dev", room: Self.dev), mention: false, at: Self.at)
        #expect(model.prompt == "[mesh] > ")
        let dev = model.select(.room(Self.dev))
        #expect(Self.texts(dev) == ["in dev", "more dev"])
        #expect(model.prompt == "[#dev] > ")
        #expect(model.active == .room(Self.dev))
        #expect(model.statusLine == "1:mesh [2:#dev]")
        placed = model.record(Self.line("again"), mention: false, at: Self.at)
        #expect(placed == .elsewhere(1))
        placed = model.record(Self.line("dev 3", room: Self.dev), mention: false, at: Self.at)
        #expect(placed == .shown)
        #expect(model.statusLine == "1:mesh(1) [2:#dev]")
        #expect(model.target(number: 1) == .mesh)
        #expect(model.target(number: 3) == nil)
        #expect(model.target(number: 0) == nil)
        let mesh = model.select(.mesh)
        #expect(Self.texts(mesh) == ["to all", "again"])
        #expect(model.statusLine == "[1:mesh] 2:#dev")
    }

    @Test("/query opens a private conversation: the prompt names the peer, a renamed peer keeps its buffer")
    func query() throws {
        var model = Conversations()
        var placed = Conversations.Placement.none
        let scrollback = model.select(.peer(Self.bob))
        #expect(scrollback.isEmpty)
        #expect(model.prompt == "[@bob] > ")
        let robert = try PeerID(id: Self.bob.id, displayName: "robert")
        placed = model.record(Self.line("new name", from: robert, isPrivate: true), mention: true, at: Self.at)
        #expect(placed == .shown)
        #expect(model.status.count == 2)
        #expect(model.prompt == "[@robert] > ")
        #expect(ChatTarget.of(.sent(id: "1", text: "x", to: [Self.carol], isPrivate: true)) == .peer(Self.carol))
    }

    @Test("a room left closes its buffer; looking at it, the mesh is looked at; the mesh's buffer never closes")
    func close() {
        var model = Conversations()
        _ = model.select(.room(Self.dev))
        let closedActive = model.close(.room(Self.dev))
        #expect(closedActive)
        #expect(model.active == .mesh)
        #expect(model.status.count == 1)
        let closedMesh = model.close(.mesh)
        #expect(!closedMesh)
    }

    @Test("scrollback and buffers are bounded: the oldest lines go, and the oldest buffer not looked at closes")
    func bounds() throws {
        var model = Conversations()
        for n in 0..<(Conversations.maxLines + 10) { _ = model.record(Self.line("\(n)"), mention: false, at: Self.at) }
        #expect(model.scrollback.count == Conversations.maxLines)
        #expect(Self.texts(model.scrollback).first == "10")
        _ = model.select(.room(Self.dev))
        for n in 0..<(Conversations.maxBuffers + 5) {
            let peer = try PeerID(id: NodeID(bytes: [UInt8(n + 1)] + Array(repeating: 0, count: 15)), displayName: "p\(n)")
            _ = model.record(Self.line("hi", from: peer, isPrivate: true), mention: true, at: Self.at)
        }
        #expect(model.status.count == Conversations.maxBuffers)
        #expect(model.status.first?.label == "mesh")
        #expect(model.active == .room(Self.dev))   // the one looked at stays
        #expect(model.status.last?.label == "@p\(Conversations.maxBuffers + 4)")
    }

    @Test("names in the prompt and status line are made printable and cut", arguments: [
        ("evil\u{1B}[2Jname", "@evil^[[2Jname"),
        ("\u{202E}gnp.exe", "@gnp.exe"),
        (String(repeating: "w", count: 60), "@" + String(repeating: "w", count: 22) + "…"),
    ])
    func hostileNames(_ name: String, _ label: String) throws {
        let peer = try PeerID(id: Self.bob.id, displayName: name)
        #expect(ChatTarget.peer(peer).label == label)
        #expect(!Conversations.prompt(for: .peer(peer)).contains("\u{1B}"))
    }

    @Test("a line that mentions me, or a private line, is highlighted in the terminal; a mention's JSON says mention: true, others say nothing")
    func highlight() {
        var style = TerminalStyle(timeZone: TimeZone(identifier: "UTC")!)
        let mentioned = style.lines(for: .message(id: "m", from: Self.bob, text: "hi alice", sentAt: Self.at, mention: true), now: Self.at)
        #expect(mentioned.first?.spans.contains { $0.role == .mention && $0.text == "hi alice" } == true)
        let privately = style.lines(for: Self.line("psst", isPrivate: true), now: Self.at)
        #expect(privately.first?.spans.contains { $0.role == .mention && $0.text == "psst" } == true)
        let plain = style.lines(for: Self.line("hi bob"), now: Self.at)
        #expect(plain.first?.spans.contains { $0.role == .mention } == false)
        #expect(JSONRenderer().render(.message(id: "m", from: Self.bob, text: "hi alice", sentAt: Self.at, mention: true))?
            .hasSuffix(",\"private\":false,\"mention\":true}") == true)
        #expect(JSONRenderer().render(Self.line("hi bob"))?.contains("mention") == false)
    }

    @Test("/search finds text literally and case-insensitively, the latest 50 matches oldest first")
    func search() {
        func stored(_ n: Int, _ text: String) -> StoredMessage {
            StoredMessage(id: "\(n)", conversation: .room(Self.dev), isOutgoing: false, author: Self.bob.id, authorName: "bob", text: text,
                          sentAt: Self.at, recordedAt: Self.at, hops: 1, status: .received, sequence: nil)
        }
        let lines = (0..<120).map { stored($0, $0 % 2 == 0 ? "Pizza at \($0)" : "nothing \($0)") } + [stored(200, "a.*b (x) [y] \\d")]
        let found = ChatFront.search(lines, for: "PIZZA")
        #expect(found.count == ChatFront.maxSearchResults)
        #expect(found.first?.id == "20" && found.last?.id == "118")
        #expect(ChatFront.search(lines, for: ".*").map(\.id) == ["200"])
        #expect(ChatFront.search(lines, for: "[y] \\d").map(\.id) == ["200"])
        #expect(ChatFront.search(lines, for: "nowhere").isEmpty)
    }

    @Test("a mention is a whole word, case-insensitive", arguments: [
        ("hi alice", true), ("Hi ALICE!", true), ("@alice: look", true), ("alice", true), ("(alice)", true),
        ("malice", false), ("alices", false), ("alice_", false), ("alice2", false), ("a l i c e", false), ("", false),
        ("ålice alice", true), ("alicé", false),
    ])
    func mentions(_ text: String, _ expected: Bool) {
        #expect(Attention.mentions(text, anyOf: ["alice"]) == expected)
    }

    @Test("mention words with punctuation or regex characters match literally; empty words and long ones are left out")
    func hostileWords() {
        #expect(Attention.mentions("ask c++ folks", anyOf: ["c++"]))
        #expect(!Attention.mentions("ask cxx folks", anyOf: ["c.."]))
        #expect(Attention.mentions("ping .* now", anyOf: [".*"]))
        #expect(!Attention.mentions("anything", anyOf: [""]))
        let attention = Attention(bell: true, words: ["", String(repeating: "x", count: 64), "oncall"] + Array(repeating: "w", count: 40))
        #expect(attention.words.count == Attention.maxWords)
        #expect(attention.words.first == "oncall")
        #expect(attention.calls("who is ONCALL?", isPrivate: false, myName: "alice"))
        #expect(attention.calls("no word", isPrivate: true, myName: "alice"))
        #expect(!attention.calls("no word", isPrivate: false, myName: "alice"))
        // A long line of near-misses is checked in linear passes, not backtracking.
        #expect(!Attention.mentions(String(repeating: "alic", count: 16_000), anyOf: ["alice"]))
    }

    @Test("/clear empties the scrollback of the buffer looked at only; /clear takes no argument")
    func clear() throws {
        var model = Conversations()
        _ = model.record(Self.line("to all"), mention: false, at: Self.at)
        _ = model.record(Self.line("in dev", room: Self.dev), mention: false, at: Self.at)
        #expect(model.clearScrollback() == .mesh)
        #expect(model.scrollback.isEmpty)
        #expect(Self.texts(model.select(.room(Self.dev))) == ["in dev"], "another buffer keeps its lines")
        #expect(try ChatCommand.parse("/clear") == .clear)
        #expect(throws: ChatCommandError.self) { try ChatCommand.parse("/clear all") }
    }
}
