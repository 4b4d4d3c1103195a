@testable import MeshChatKit
import MeshSession
import Testing

/// `ChatCommand.parse` and `HostPort.parse`: pure, no I/O.
@Suite("chat commands")
struct ChatCommandTests {
    /// The error a line gives, or `nil` when it parses.
    static func parseError(_ line: String) -> ChatCommandError? {
        do {
            _ = try ChatCommand.parse(line)
            return nil
        } catch {
            return error
        }
    }

    @Test("a line that does not start with / is sent exactly as typed", arguments: [
        "hello", "  hello  ", "hello /peers", "a/b", "\tindented", "ünïcode ✓ 🙂", "x",
    ])
    func plainText(line: String) throws {
        #expect(try ChatCommand.parse(line) == .say(line))
    }

    @Test("// sends the rest with one leading /", arguments: [
        ("//x", "/x"), ("//peers", "/peers"), ("///", "//"), ("//help me", "/help me"),
    ])
    func doubleSlash(line: String, sent: String) throws {
        #expect(try ChatCommand.parse(line) == .say(sent))
    }

    @Test("empty and whitespace-only lines do nothing", arguments: ["", " ", "   ", "\t", " \t  "])
    func empty(line: String) throws {
        #expect(try ChatCommand.parse(line) == .empty)
    }

    @Test("/peers, /who and any capitalisation list peers", arguments: ["/peers", "/who", "/PEERS", "/Who", "/peers  "])
    func peers(line: String) throws {
        #expect(try ChatCommand.parse(line) == .peers)
    }

    @Test("a line is a command only when it starts with /; other lines are sent exactly as typed",
          arguments: ["  /peers", " //x", "\t/quit"])
    func leadingSpaceIsText(line: String) throws {
        #expect(try ChatCommand.parse(line) == .say(line))
    }

    @Test("aliases get their command's usage and help", arguments: [("who", "/peers"), ("exit", "/quit")])
    func aliasHelp(alias: String, usage: String) throws {
        #expect(ChatFront.helpText(alias).hasPrefix(usage))
        #expect {
            _ = try ChatCommand.parse("/\(alias) extra")
        } throws: { error in
            (error as? ChatCommandError)?.message.contains("usage: \(usage)") == true
        }
    }

    @Test("/msg @name text, /route @name and /history [n] parse; @ is optional")
    func meshCommands() throws {
        #expect(try ChatCommand.parse("/msg @carol hi there") == .privateMessage(to: "carol", text: "hi there"))
        #expect(try ChatCommand.parse("/msg 4fc5 hi") == .privateMessage(to: "4fc5", text: "hi"))
        #expect(try ChatCommand.parse("/route @carol") == .route("carol"))
        #expect(try ChatCommand.parse("/history") == .history(20))
        #expect(try ChatCommand.parse("/history 5") == .history(5))
        #expect(try ChatCommand.parse("/trust @bob") == .trust("bob"))
        #expect(try ChatCommand.parse("/trust") == .trust(""))
        #expect(try ChatCommand.parse("/untrust 4fc5") == .untrust("4fc5"))
        #expect(try ChatCommand.parse("/forget @bob") == .forget("bob"))
        #expect(try ChatCommand.parse("/forget Bob the Builder") == .forget("Bob the Builder"))
        #expect(throws: (any Error).self) { try ChatCommand.parse("/forget") }
    }

    @Test("mesh commands with a wrong argument give their usage", arguments: [
        ("/msg", "/msg @NAME TEXT"), ("/msg @carol", "/msg @NAME TEXT"), ("/msg @carol   ", "/msg @NAME TEXT"),
        ("/route", "/route @NAME"), ("/route @a @b", "/route @NAME"),
        ("/trust @a @b", "/trust @NAME"), ("/untrust", "/untrust @NAME"), ("/untrust @a @b", "/untrust @NAME"),
        ("/history 0", "/history [N]"), ("/history 1001", "/history [N]"), ("/history x", "/history [N]"),
    ])
    func meshCommandErrors(line: String, usage: String) {
        #expect(Self.parseError(line)?.message.contains("usage: \(usage)") == true, "\(line)")
    }

    @Test("/send @name FILE parses; @ is optional, the path keeps its spaces and loses surrounding quotes")
    func sendFile() throws {
        #expect(try ChatCommand.parse("/send @carol ~/report.pdf") == .sendFile(to: "carol", path: "~/report.pdf"))
        #expect(try ChatCommand.parse("/send carol holiday photos.zip") == .sendFile(to: "carol", path: "holiday photos.zip"))
        #expect(try ChatCommand.parse("/send @carol \"a b.txt\"") == .sendFile(to: "carol", path: "a b.txt"))
        #expect(try ChatCommand.parse("/SEND @4fc5 /tmp/x") == .sendFile(to: "4fc5", path: "/tmp/x"))
    }

    @Test("/join and /leave: a password, or --public / --password to say which of two rooms of one name")
    func roomChoices() throws {
        #expect(try ChatCommand.parse("/join #dev s3cret words") == .join(room: "#dev", password: "s3cret words"))
        #expect(try ChatCommand.parse("/join #dev") == .join(room: "#dev", password: nil))
        #expect(try ChatCommand.parse("/join #dev --password") == .join(room: "#dev", password: nil, choice: .passwordRoom))
        #expect(try ChatCommand.parse("/join #dev  --public ") == .join(room: "#dev", password: nil, choice: .publicRoom))
        #expect(try ChatCommand.parse("/join #dev --public x") == .join(room: "#dev", password: "--public x"))
        #expect(try ChatCommand.parse("/leave #dev --password") == .leave("#dev", choice: .passwordRoom))
        #expect(try ChatCommand.parse("/leave #dev") == .leave("#dev"))
        #expect(Self.parseError("/leave #dev secret")?.message.contains("is not one #room") == true)
        #expect(Self.parseError("/leave #a #b --public") != nil)
    }

    @Test("/files lists transfers and takes no argument")
    func files() throws {
        #expect(try ChatCommand.parse("/files") == .files)
        #expect(Self.parseError("/files now")?.message.contains("usage: /files") == true)
    }

    @Test("/cancel takes one transfer id or prefix in hex")
    func cancelFile() throws {
        #expect(try ChatCommand.parse("/cancel 5D1F0C2E") == .cancelFile("5d1f0c2e"))
        for line in ["/cancel", "/cancel xyz", "/cancel 5d 1f"] {
            #expect(Self.parseError(line)?.message.contains("usage: /cancel ID") == true, "\(line)")
        }
    }

    @Test("/send without a peer or a file gives its usage", arguments: ["/send", "/send @carol", "/send @carol   ", "/send @ file"])
    func sendFileErrors(line: String) {
        #expect(Self.parseError(line)?.message.contains("usage: /send @NAME FILE") == true, "\(line)")
    }

    @Test("/send resolves ~ and relative paths")
    func sendFileResolvesPaths() {
        #expect(ChatFront.resolve("~/a.txt", home: "/home/me", workingDirectory: "/w") == "/home/me/a.txt")
        #expect(ChatFront.resolve("~", home: "/home/me", workingDirectory: "/w") == "/home/me")
        #expect(ChatFront.resolve("docs/../a.txt", home: "/home/me", workingDirectory: "/w") == "/w/a.txt")
        #expect(ChatFront.resolve("/abs/b", home: "/home/me", workingDirectory: "/w") == "/abs/b")
    }

    @Test("a port must be digits only", arguments: ["a:+7000", "a:7000 ", "a:٣"])
    func portDigits(address: String) throws {
        #expect(throws: HostPort.ParseError.self) { _ = try HostPort.parse(address) }
    }

    @Test("/help with and without a topic; the topic loses its / and its case", arguments: [
        ("/help", nil), ("/HELP", nil), ("/help connect", "connect"), ("/help /connect", "connect"),
        ("/help CONNECT", "connect"), ("/help  peers ", "peers"),
    ] as [(String, String?)])
    func help(line: String, topic: String?) throws {
        #expect(try ChatCommand.parse(line) == .help(topic))
    }

    @Test("/quit and /exit leave", arguments: ["/quit", "/exit", "/QUIT"])
    func quit(line: String) throws {
        #expect(try ChatCommand.parse(line) == .quit)
    }

    @Test("/connect takes HOST:PORT, [IPV6]:PORT or a host name", arguments: [
        ("/connect 127.0.0.1:7000", "127.0.0.1", 7000),
        ("/connect [::1]:7000", "::1", 7000),
        ("/connect host.example:1", "host.example", 1),
        ("/CONNECT  10.0.0.2:65535 ", "10.0.0.2", 65535),
        ("/connect [fe80::1]:80", "fe80::1", 80),
    ])
    func connect(line: String, host: String, port: Int) throws {
        #expect(try ChatCommand.parse(line) == .connect(host: host, port: port))
    }

    /// The text of nearby connection data (PROTOCOL.md §4.10) for node `3fa2…` at 192.168.1.23 and loopback, port 7000.
    static let code = "meshchat:ae72fqoq4w3eu74itgvlxtg5537rwwacatakqaixar7qaaabdfqdiwi"

    @Test("/connect takes a connection code, in any case and with surrounding spaces; /disconnect CODE means its first address")
    func connectCode() throws {
        let data = try NearbyConnectionData(text: Self.code)
        #expect(data.addresses == ["192.168.1.23", "127.0.0.1"] && data.port == 7000)
        #expect(try ChatCommand.parse("/connect \(Self.code)") == .connectCode(data))
        #expect(try ChatCommand.parse("/connect  \(Self.code.uppercased())  ") == .connectCode(data))
        #expect(try ChatCommand.parse("/disconnect \(Self.code)") == .disconnect(host: "192.168.1.23", port: 7000))
        #expect(try ChatCommand.parse("/code") == .code)
        #expect(try PeerAddress.parse(Self.code) == .code(data))
        #expect(try PeerAddress.parse("[::1]:7000") == .hostPort(host: "::1", port: 7000))
        #expect(PeerAddress.code(data).kept.host == "192.168.1.23" && PeerAddress.code(data).kept.port == 7000)
    }

    @Test("a damaged connection code is refused with the reason, never dialled", arguments: [
        (String(ChatCommandTests.code.dropLast(1)) + "a", "check value does not match"),
        (ChatCommandTests.code + "1", "not base32"),
        ("meshchat:", "bytes; nearby connection data is 29–160 bytes"),
        ("MESHCHAT:aa", "bytes; nearby connection data is 29–160 bytes"),
        ("meshchat:" + String(repeating: "a", count: 400), "at most 300"),
    ])
    func badCode(code: String, problem: String) throws {
        let error = try #require(Self.parseError("/connect \(code)"), "\(code) parsed")
        #expect(error.message.contains("not a valid connection code") && error.message.contains(problem), "\(error.message)")
        #expect(error.message.contains("usage: /connect HOST:PORT | /connect CODE"))
        #expect(Self.parseError("/code now")?.message.contains("it takes no argument") == true)
    }

    @Test("a bad command or argument names the problem and gives the right usage", arguments: [
        ("/connect", "an address is required", "usage: /connect HOST:PORT"),
        ("/connect   ", "an address is required", "usage: /connect HOST:PORT"),
        ("/connect nohost", "\"nohost\" has no port", "usage: /connect HOST:PORT"),
        ("/connect ::1:7000", "write an IPv6 address in brackets", "usage: /connect HOST:PORT"),
        ("/connect [::1", "without \"]\"", "usage: /connect HOST:PORT"),
        ("/connect [::1]7000", "no :PORT", "usage: /connect HOST:PORT"),
        ("/connect :7000", "has no host", "usage: /connect HOST:PORT"),
        ("/connect a:0", "port \"0\" is not a number from 1 to 65535", "usage: /connect HOST:PORT"),
        ("/connect a:65536", "port \"65536\" is not a number from 1 to 65535", "usage: /connect HOST:PORT"),
        ("/connect a:x", "port \"x\" is not a number from 1 to 65535", "usage: /connect HOST:PORT"),
        ("/peers extra", "/peers: it takes no argument", "usage: /peers"),
        ("/quit now", "/quit: it takes no argument", "usage: /quit"),
        ("/frobnicate", "unknown command /frobnicate", "type /help"),
        ("/Frobnicate now", "unknown command /frobnicate; type /help", "type /help"),
        ("/whoiz @bob", "unknown command /whoiz (did you mean /whois?)", "type /help"),
        ("/HLEP", "unknown command /hlep (did you mean /help?)", "type /help"),
        ("/qery @bob", "(did you mean /query?)", "type /help"),
        ("/xy", "unknown command /xy; type /help", "type /help"),
        ("/" + String(repeating: "w", count: 5000), "unknown command /www", "type /help"),
    ])
    func errors(line: String, problem: String, usage: String) throws {
        let error = try #require(Self.parseError(line), "\(line) parsed without an error")
        #expect(error.message.contains(problem), "\(error.message)")
        #expect(error.message.contains(usage), "\(error.message)")
        #expect(error.description == error.message)
    }

    @Test("HostPort.parse splits host and port and strips IPv6 brackets")
    func hostPort() throws {
        #expect(try HostPort.parse("192.0.2.7:7000") == ("192.0.2.7", 7000))
        #expect(try HostPort.parse("[::1]:1") == ("::1", 1))
        #expect(try HostPort.parse("localhost:65535") == ("localhost", 65535))
        #expect(throws: HostPort.ParseError.self) { try HostPort.parse("[]:7000") }
        #expect(throws: HostPort.ParseError.self) { try HostPort.parse("host:") }
        #expect(throws: HostPort.ParseError.self) { try HostPort.parse("") }
    }
}

/// `/nick`: the new name is the rest of the line; a bad one is refused with the usage.
@Suite("chat commands: /nick")
struct NickCommandTests {
    @Test("/nick NAME takes the rest of the line, spaces and all, up to 63 bytes")
    func names() throws {
        #expect(try ChatCommand.parse("/nick alicia") == .nick("alicia"))
        #expect(try ChatCommand.parse("/NICK  Alice Liddell ") == .nick("Alice Liddell"))
        #expect(try ChatCommand.parse("/nick " + String(repeating: "é", count: 31)) == .nick(String(repeating: "é", count: 31)))
        #expect(try ChatCommand.parse("/nick " + String(repeating: "x", count: 63)) == .nick(String(repeating: "x", count: 63)))
    }

    @Test("a missing, too long or control-character name is an error with the usage", arguments: [
        ("/nick", "a new name is required"),
        ("/nick    ", "a new name is required"),
        ("/nick " + String(repeating: "x", count: 64), "64 bytes; a name has 1 to 63"),
        ("/nick " + String(repeating: "é", count: 32), "64 bytes; a name has 1 to 63"),
        ("/nick bad\u{1b}[31mname", "control characters"),
    ])
    func refused(line: String, why: String) {
        let message = ChatCommandTests.parseError(line)?.message ?? ""
        #expect(message.contains(why))
        #expect(message.hasSuffix("usage: /nick NAME"))
    }
}

extension ChatCommandTests {
    @Test("the commands of conversations and attention parse to their cases", arguments: [
        ("/query @bob", ChatCommand.query("bob")), ("/query bob", .query("bob")), ("/query", .query(nil)),
        ("/window 3", .window(3)), ("/win 1", .window(1)), ("/window", .window(nil)), ("/window 32", .window(32)),
        ("/switch #dev", .switchTo("#dev")), ("/switch @bob", .switchTo("@bob")), ("/switch mesh", .switchTo("mesh")),
        ("/switch #dev 🔒", .switchTo("#dev 🔒")),
        ("/search pizza place", .search("pizza place")), ("/away at lunch", .away("at lunch")), ("/away", .away(nil)),
        ("/whois @bob", .whois("bob")), ("/WHOIS bob", .whois("bob")),
    ])
    func conversationCommands(_ line: String, _ command: ChatCommand) throws {
        #expect(try ChatCommand.parse(line) == command)
    }

    @Test("their bad arguments are one-line errors with the usage", arguments: [
        ("/window 0", "/window: \"0\" is not a number from 1 to 32; usage: /window [N]"),
        ("/window 33", "not a number from 1 to 32"), ("/window -1", "not a number"), ("/window 99999999999999999999", "not a number"),
        ("/window ٣", "not a number"), ("/window two", "not a number"),
        ("/query @bob @carol", "/query: one peer is required"), ("/switch", "/switch: one #room, @peer or mesh is required"),
        ("/switch bob carol", "one #room, @peer or mesh"),
        ("/search", "/search: the text to look for is missing"),
        ("/search " + String(repeating: "s", count: 257), "the text is 257 characters, at most 256"),
        ("/away " + String(repeating: "a", count: 257), "/away: the away text is 257 bytes, at most 256; usage: /away [TEXT]"),
        ("/whois", "/whois: one peer is required"), ("/whois a b", "one peer is required"),
    ])
    func conversationErrors(_ line: String, _ fragment: String) throws {
        let error = try #require(Self.parseError(line))
        #expect(error.message.contains(fragment), "\(error.message)")
    }
}

/// `/me`: an action line where typed lines go.
@Suite("chat commands: /me")
struct ActionCommandTests {
    @Test("/me TEXT is an action with the text as typed after the command; /me alone asks for the text")
    func me() throws {
        #expect(try ChatCommand.parse("/me waves") == .me("waves"))
        #expect(try ChatCommand.parse("/ME  waves at bob  ") == .me("waves at bob"))
        #expect(ChatCommandTests.parseError("/me")?.message.contains("the text is missing") == true)
        #expect(ChatCommandTests.parseError("/me   ")?.message.contains("the text is missing") == true)
        #expect(try ChatCommand.parse("//me waves") == .say("/me waves"))
    }
}
