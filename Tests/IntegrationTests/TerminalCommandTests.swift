import Foundation
import MeshTestSupport
import Testing

/// Every chat command typed in a real terminal (tmux), each with its happy path and an error path:
/// alice runs in tmux; bob and carol are `--json` processes. All three discover each other through
/// avahi-daemon in `--manual` mode, so alice's `/invite`, `/accept` and `/decline` have real
/// invitations to work on; then bob relays between alice and carol (alice—bob—carol) for the mesh
/// commands, and carol holds a small place data set for `/near`.
@Suite("every chat command in a terminal (tmux)", .serialized)
struct TerminalCommandTests {
    /// alice's terminal and the screen checks of one command at a time.
    struct Terminal {
        let tmux: TmuxSession

        /// Clears the screen (Ctrl-L), types `line` and Enter, and waits until rows containing
        /// every one of `expected` show (each in one row, in any order).
        @discardableResult
        func run(_ line: String, _ expected: String...) async throws -> [String] {
            try tmux.press("C-l")
            try await TerminalTests.waitForInput(tmux, ">")
            try tmux.type(line)
            try tmux.press("Enter")
            return try await tmux.waitForScreen { rows in
                expected.allSatisfy { fragment in rows.contains { $0.contains(fragment) } }
            }
        }

        /// Waits for a row containing every one of `fragments`.
        @discardableResult
        func waitFor(_ fragments: String...) async throws -> [String] {
            try await tmux.waitForScreen { rows in rows.contains { row in fragments.allSatisfy { row.contains($0) } } }
        }
    }

    @Test("each command's happy path and its error path (a one-line error with the usage; nothing sent)")
    func everyCommand() async throws {
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        let data = directory.appending("london.geojson")
        try Data(PlacesMeshTests.fixture.utf8).write(to: URL(fileURLWithPath: data))
        let meshchat = ChatProcess.binDirectory.appendingPathComponent("meshchat").path
        let exitFile = directory.appending("alice-exit.txt")
        let tmux = try TmuxSession([meshchat, "--manual", "--service", service, "--name", "alice", "--data-dir", directory.appending("alice")],
                                   width: TerminalTests.width, height: TerminalTests.height,
                                   environment: ["XDG_CONFIG_HOME": directory.appending("config")], unset: ["NO_COLOR"],
                                   directory: directory, shellSuffix: "; echo $? > \(exitFile)")
        let alice = Terminal(tmux: tmux)
        try await alice.waitFor("listening on port")
        let bob = try DiscoveryTests.peer("bob", service: service, directory, extra: ["--manual"])
        let carol = try DiscoveryTests.peer("carol", service: service, directory,
                                            extra: ["--manual", "--places", data, "--downloads", directory.appending("carol-downloads")])
        let carolPort = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"ready\""))?.int("port"))
        // Found together, they are one line ("carol and bob found nearby"); one alone, its own line.
        try await alice.tmux.waitForScreen { rows in ["bob", "carol"].allSatisfy { name in rows.contains { $0.contains("found") && $0.contains(name) } } }

        // /help
        try await alice.run("/help", "/help [COMMAND]", "/quit   ", "disconnect from every peer and exit")
        try await alice.run("/help msg", "/msg @NAME TEXT", "send a private line")
        try await alice.run("/help nosuch", "no command /nosuch; type /help for the list")
        try await alice.run("/frobnicate", "! unknown command /frobnicate; type /help")

        // /accept, /decline, /invite (manual mode: real invitations through discovery)
        try await alice.run("/accept", "! no invitation is waiting for an answer")
        try await bob.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"")
        bob.send("/invite alice")
        try await alice.waitFor("bob (", "invites you: /accept bob or /decline bob")
        try await alice.run("/accept bob", "bob (", "connected")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"name\":\"alice\"", "\"state\":\"connected\"")
        try await carol.waitForEvent("\"event\":\"found\"", "\"name\":\"alice\"")
        carol.send("/invite alice")
        try await alice.waitFor("carol (", "invites you")
        try await alice.run("/decline nobody", "! ")
        try await alice.run("/decline carol")
        try await carol.waitForEvent("\"event\":\"invitationFailed\"", "\"kind\":\"declined\"")
        try await alice.run("/invite nobody", "! ")
        try await alice.run("/invite", "! /invite: a peer name or id is required; usage: /invite PEER")
        try await alice.run("/invite carol", "inviting carol")
        try await carol.waitForEvent("\"event\":\"invitation\"", "\"name\":\"alice\"", "\"direction\":\"received\"")
        carol.send("/decline alice")
        try await alice.waitFor("invitation to carol", "declined")
        // bob links carol: alice—bob—carol.
        try await carol.waitForEvent("\"event\":\"found\"", "\"name\":\"bob\"")
        carol.send("/invite bob")
        try await bob.waitForEvent("\"event\":\"invitation\"", "\"name\":\"carol\"")
        bob.send("/accept carol")
        try await alice.waitFor("carol (", "reachable in 2 hops via bob")

        // /peers (/who)
        try await alice.run("/peers", "* bob ", "connected", "* carol ", "reachable 2 hops via bob")
        try await alice.run("/who now", "! /peers: it takes no argument; usage: /peers")

        // /nick
        try await alice.run("/nick", "! /nick: a new name is required; usage: /nick NAME")
        try await alice.run("/nick alicia", "* you are now known as alicia")
        try await carol.waitForEvent("\"event\":\"nick\"", "\"previous\":\"alice\"")

        // /msg and /reply
        try await alice.run("/msg @nobody hi", "! /msg: no peer is called \"nobody\"")
        try await alice.run("/msg @carol", "! /msg: the text is missing; usage: /msg @NAME TEXT")
        try await alice.run("/reply too early", "! /reply: nobody has sent you a private line yet")
        try await alice.run("/msg @carol hello carol", "[you → carol] hello carol")
        try await carol.waitForEvent("\"event\":\"message\"", "hello carol", "\"private\":true")
        try await alice.waitFor("✓✓ delivered to carol")
        carol.send("/msg @alicia hello alicia")
        // A private line waits in carol's buffer (opened by alice's line to her): /switch shows it.
        try await alice.waitFor("2:@carol(1!)")
        try await alice.run("/switch @carol", "[carol → you]", "hello alicia")
        try await alice.run("/reply back at you", "[you → carol] back at you")
        try await carol.waitForEvent("\"event\":\"message\"", "back at you")
        try await alice.run("/switch mesh", "1:mesh")

        // /route, /ping, /mesh
        try await alice.run("/route @carol", "* route to carol (", "you → bob (", "carol (")
        try await alice.run("/route", "! /route: one peer is required; usage: /route @NAME")
        try await alice.run("/ping @carol", "* pong from carol: ", "(2 hops)")
        try await alice.run("/ping @nobody", "! /ping: no reachable peer is called \"nobody\"")
        try await alice.run("/mesh", "alicia (you)", "bob", "carol")
        try await alice.run("/mesh all", "! /mesh: it takes no argument; usage: /mesh")

        // /history
        try await alice.run("/history 2", "[you → carol] back at you ✓")
        try await alice.run("/history many", "! /history: \"many\" is not a number from 1 to 1000")

        // /join, /rooms, /leave
        try await alice.run("/join lunch", "! /join: a room name starting with # is required")
        try await alice.run("/join #lunch", "* joined #lunch; your lines go there now")
        carol.send("/join #lunch")
        try await carol.waitForEvent("\"event\":\"joined\"")
        try await alice.run("noon at the usual place?", "<#lunch alicia> noon at the usual place?")
        try await carol.waitForEvent("\"event\":\"message\"", "noon at the usual place?", "\"room\":\"#lunch\"")
        try await alice.run("/rooms", "* rooms: #lunch (active)")
        try await alice.run("/rooms all", "! /rooms: it takes no argument; usage: /rooms")
        try await alice.run("/leave #a b", "! /leave: \"#a b\" is not one #room")
        try await alice.run("/leave", "* left #lunch; your lines go to everyone in the mesh")
        try await alice.tmux.waitForScreen { TerminalTests.inputLabel($0) == "[mesh]" }

        // The leak sequence: /join #dev s3cret, /join #lunch, /join #dev goes back to the password
        // #dev, and the prompt says so at each step; carol, who holds only the public #dev key,
        // never reads the line typed after it.
        carol.send("/join #dev")
        try await carol.waitForEvent("\"event\":\"joined\"", "\"room\":\"#dev\"", "\"password\":false")
        try await alice.run("/join #dev s3cret", "* joined #dev 🔒 (password: only those who know it can read it)")
        try await alice.tmux.waitForScreen { TerminalTests.inputLabel($0) == "[#dev 🔒]" }
        try await alice.run("/join #lunch", "* joined #lunch; your lines go there now")
        try await alice.tmux.waitForScreen { TerminalTests.inputLabel($0) == "[#lunch]" }
        try await alice.run("/join #dev", "* joined #dev 🔒")
        try await alice.tmux.waitForScreen { TerminalTests.inputLabel($0) == "[#dev 🔒]" }
        try await alice.run("only for the team", "<#dev 🔒 alicia> only for the team")
        try await alice.run("/rooms", "* rooms: #dev 🔒 (active), #lunch")
        try await alice.run("/leave", "* left #dev 🔒; your lines go to everyone in the mesh")
        try await alice.tmux.waitForScreen { TerminalTests.inputLabel($0) == "[mesh]" }
        try await alice.run("after the team line", "<alicia> after the team line")
        try await carol.waitForEvent("\"event\":\"message\"", "after the team line")
        #expect(!carol.output.contains { $0.contains("only for the team") }, "a line for #dev 🔒 reached a holder of the public #dev key")
        try await alice.run("/leave #lunch", "* left #lunch; your lines go to everyone in the mesh")

        // /here, /near, /pin, /pins, /unpin, /map (carol holds the data)
        try await alice.run("/here", "* your location is not set: /here LAT,LON")
        try await alice.run("/here 95,0", "! /here: latitude 95 in \"95,0\" is outside -90...90")
        try await alice.run("/here 51.5074,-0.1278", "* you are at 51.50740 N, 0.12780 W")
        try await alice.run("/near 1km pizza", "1. Pizza Express", "2. PIZZA hut")
        try await alice.run("/near 200km", "! /near: radius 200km is out of range: 1 m to 100 km")
        try await alice.run("/near more 1", "\"pizza\" within 1.0 km", "(nearest 1 of 2)", "1. Pizza Express")
        try await alice.run("/near more 51", "! /near: \"51\" is not a number of results from 1 to 50")
        try await alice.run("/pin 1 meet by the door", "* pinned \"Pizza Express\"")
        try await carol.waitForEvent("\"event\":\"pin\"", "Pizza Express")
        try await alice.run("/pin", "! /pin: a position or a result number is required")
        try await alice.run("/pins", "1. \"Pizza Express\" by alicia")
        try await alice.run("/pins --svg x", "! /pins: unknown option \"--svg\"")
        try await alice.run("/unpin x", "! /unpin: \"x\" is not a number from the /pins list or \"all\"")
        try await alice.run("/unpin", "* withdrew your pin \"Pizza Express\"")
        try await carol.waitForEvent("\"event\":\"unpinned\"")
        try await alice.run("/map x", "! /map: \"x\" is not a radius; usage: /map [RADIUS]")
        // The map is drawn row by row: wait for its scale bar (drawn last), not only for the "@" row.
        try alice.tmux.press("C-l")
        try await TerminalTests.waitForInput(alice.tmux, ">")
        try alice.tmux.type("/map 1km")
        try alice.tmux.press("Enter")
        let map = try await alice.tmux.waitForScreen { rows in
            rows.contains { $0.contains("@") } && rows.contains { $0.contains("1 km") || $0.contains("500 m") }
        }
        #expect(map.contains { $0.contains("1 km") || $0.contains("500 m") }, "no scale bar: \(map)")

        // /block, /unblock
        try await alice.run("/block @nobody", "! /block: no peer is called \"nobody\"")
        try await alice.run("/block @bob", "* blocked: bob (")
        try await alice.run("/block", "* blocked: bob (")
        try await alice.run("/unblock", "! /unblock: a peer is required; usage: /unblock @NAME")
        try await alice.run("/unblock @carol", "! /unblock: no blocked peer is called \"carol\"")
        try await alice.run("/unblock @bob", "* nobody is blocked")

        // /send, /files, /cancel (across the relay)
        let notes = directory.appending("notes.txt")
        try Data("meeting notes\n".utf8).write(to: URL(fileURLWithPath: notes))
        try await alice.run("/send @carol \(directory.appending("missing.txt"))", "! /send: ")
        try await alice.run("/send @nobody \(notes)", "! /send: no peer is called \"nobody\"")
        try await alice.run("/send @carol \(notes)", "* sent notes.txt (14 bytes) to carol: received and checked")
        let received = try #require(JSONLine(try await carol.waitForEvent("\"event\":\"fileReceived\"", "notes.txt")))
        #expect(try String(contentsOfFile: try #require(received.string("path")), encoding: .utf8) == "meeting notes\n")
        try await alice.run("/files", "* no file transfers running")
        try await alice.run("/cancel", "! /cancel: a transfer id")
        try await alice.run("/cancel abcd", "! /cancel: no file transfer abcd is running")

        // /connect
        try await alice.run("/connect", "! /connect: an address is required (HOST:PORT or a connection code); usage: /connect HOST:PORT")
        try await alice.run("/connect 127.0.0.1", "! /connect: \"127.0.0.1\" has no port")
        try await alice.run("/connect 127.0.0.1:\(carolPort)", "* connecting to 127.0.0.1:\(carolPort)")
        try await alice.waitFor("* carol (", "connected at 127.0.0.1:\(carolPort)")

        // /quit
        try await alice.run("/quit now", "! /quit: it takes no argument; usage: /quit")
        try tmux.press("C-l")
        try tmux.type("/quit")
        try tmux.press("Enter")
        let status = try await TerminalTests.waitForFile(exitFile) { !$0.isEmpty }
        #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        try await bob.waitForEvent("\"event\":\"peer\"", "\"state\":\"notConnected\"")
        // Nothing any error path typed was sent.
        for line in ["hi", "too early", "nobody"] {
            #expect(!carol.output.contains { $0.contains("\"event\":\"message\"") && $0.contains("\"text\":\"\(line)\"") })
        }
        for chat in [bob, carol] { chat.closeInput() }
        for chat in [bob, carol] { #expect(try await chat.waitForExit() == 0) }
    }
}
