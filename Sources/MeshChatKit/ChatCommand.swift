import MeshSession
import MeshPlaces
import Places

/// Which of the two rooms of one name a room command means: the public one or the password one
/// (PROTOCOL.md §15.1: they are different rooms). Typed as `--public` or `--password` after the
/// name, so neither word can be a `/join` password by itself.
public enum RoomChoice: String, Sendable, Hashable, CaseIterable {
    /// `--public`: the room anyone who knows the name can read.
    case publicRoom = "--public"
    /// `--password`: the password room of that name (already joined).
    case passwordRoom = "--password"
}

/// One line typed by the user, parsed (pure; no I/O).
///
/// A line that does not start with `/` is chat text for the whole mesh; `//text` sends a line
/// that starts with `/`. Commands are case-insensitive. An unknown command or a bad argument is a
/// ``ChatCommandError`` whose message includes the right usage; nothing is sent then.
public enum ChatCommand: Sendable, Hashable {
    /// Send text to the whole mesh.
    case say(String)
    /// `/msg @name text`: a private line to one node (a name or an id prefix; `@` optional).
    case privateMessage(to: String, text: String)
    /// `/route @name`: the path to a node with each link's latency.
    case route(String)
    /// `/send @name FILE`: send a file, end-to-end encrypted, to one node (PROTOCOL.md §16).
    case sendFile(to: String, path: String)
    /// `/files`: the file transfers running now, with their progress.
    case files
    /// `/cancel ID`: stop a file transfer (its id, or a prefix of it, from `/files`).
    case cancelFile(String)
    /// `/reply text`: a private line to the last peer who sent me one.
    case reply(String)
    /// `/mesh`: the topology as this node knows it, as a text graph.
    case mesh
    /// `/ping @name`: the round trip to a node across the mesh.
    case ping(String)
    /// `/verify @name`: the safety number to compare with a peer (PROTOCOL.md §20.1).
    case verify(String)
    /// `/trust @name`: record that the safety number was compared (PROTOCOL.md §20.3); `/trust`
    /// alone (empty) lists the verified peers.
    case trust(String)
    /// `/untrust @name`: forget that a peer was verified.
    case untrust(String)
    /// `/forget @name`: release a name, so that the next key seen under it holds it (PROTOCOL.md §20.3).
    case forget(String)
    /// `/block @name`: ignore a peer's lines, private lines and pins (remembered).
    case block(String)
    /// `/unblock @name`: stop ignoring a peer.
    case unblock(String)
    /// `/history [n]`: the last `n` lines (default 20).
    case history(Int)
    /// `/nick NAME`: change my display name for this run (peers see it at once).
    case nick(String)
    /// List connected peers.
    case peers
    /// Show help, optionally for one command.
    case help(String?)
    /// Open a link to an address and keep it (redialled whenever it is down).
    case connect(host: String, port: Int)
    /// `/connect CODE`: open a link to the node a connection code names, and keep it.
    case connectCode(NearbyConnectionData)
    /// `/code`: show this node's connection code (PROTOCOL.md §4.10).
    case code
    /// `/disconnect HOST:PORT`: stop keeping the link to an address, and close it.
    case disconnect(host: String, port: Int)
    /// Invite a discovered peer (by name or id prefix).
    case invite(String)
    /// Accept a received invitation (the only pending one when no peer is named).
    case accept(String?)
    /// Decline a received invitation (the only pending one when no peer is named).
    case decline(String?)
    /// `/join #room [password | --public | --password]`: join a room across the mesh (a password
    /// makes it readable only by those who know it), or go back to one joined; typed lines go
    /// there until `/leave`. `choice` says which of two joined rooms of one name is meant.
    case join(room: String, password: String?, choice: RoomChoice? = nil)
    /// `/leave [#room [--public | --password]]`: leave a room (the active one by default).
    case leave(String?, choice: RoomChoice? = nil)
    /// `/rooms`: the rooms joined, and where typed lines go.
    case rooms
    /// `/here [LAT,LON]`: set my location (remembered), or show it.
    case here(Coordinate?)
    /// `/near [RADIUS] [TEXT]`: places around my location, here or from peers across the mesh.
    case near(radius: Distance?, text: String)
    /// `/near more [N]`: the last `/near` again with up to N results (default and at most
    /// ``PlacesLimits/maxLimit``, the wire's bound).
    case nearMore(limit: Int)
    /// `/pin LAT,LON LABEL [NOTE]` or `/pin N [NOTE]`: share a pin with the room.
    case pin(PinTarget, note: String)
    /// `/pins [--geojson FILE]`: list live pins, or export them as GeoJSON.
    case pins(geojson: String?)
    /// `/unpin [N|all]`: withdraw my pins everywhere (the Nth of the last `/pins` list, all of
    /// mine, or my only one).
    case unpin(UnpinTarget)
    /// `/map [RADIUS]`: a picture of the places and pins around my location.
    case map(radius: Distance?)
    /// `/query @name`: open the private conversation with a peer; typed lines go to it privately.
    /// `/query` alone goes back to the mesh.
    case query(String?)
    /// `/window N`: look at buffer N (as the status line numbers them); `/window` alone lists them.
    case window(Int?)
    /// `/switch #room|@name|mesh`: look at that conversation; typed lines go there.
    case switchTo(String)
    /// `/search TEXT`: stored lines that contain the text, with dates, rooms and senders.
    case search(String)
    /// `/away [TEXT]`: set the away text peers see in `/peers` and `/whois`, or clear it.
    case away(String?)
    /// `/whois @name`: what this node knows of a peer.
    case whois(String)
    /// `/clear`: clear the screen of the conversation looked at (its stored lines stay).
    case clear
    /// `/me TEXT`: an action line (`* alice waves`, PROTOCOL.md §17.8) where typed lines go.
    case me(String)
    /// Leave.
    case quit
    /// An empty line: nothing to do.
    case empty

    /// Where a new pin goes.
    public enum PinTarget: Sendable, Hashable {
        /// A point with a label.
        case point(Coordinate, label: String)
        /// The Nth (from 1) place of the last `/near` result; its name is the label.
        case result(Int)
    }

    /// Which pins `/unpin` withdraws.
    public enum UnpinTarget: Sendable, Hashable {
        /// My only live pin (an error when I have several).
        case only
        /// The Nth (from 1) pin of the last `/pins` list (it must be mine).
        case listed(Int)
        /// Every pin of mine.
        case all
    }

    /// Other names of commands: `/who` is `/peers`, `/exit` is `/quit`, `/?` is `/help`.
    public static let aliases: [String: String] = ["win": "window", "who": "peers", "exit": "quit", "?": "help", "part": "leave", "r": "reply", "ignore": "block", "unignore": "unblock"]

    /// The commands with their one-line usage, in the order `/help` lists them.
    public static let usages: [(name: String, usage: String, summary: String)] = [
        ("peers", "/peers", "list connected, reachable and discovered peers: id, state, hops, next hop, address"),
        ("nick", "/nick NAME", "change your display name (1 to 63 bytes) for this run; every peer sees the change at once"),
        ("msg", "/msg @NAME TEXT", "send a private line, end-to-end encrypted, to one peer (name or id prefix); it waits for a route"),
        ("send", "/send @NAME FILE", "send a file (up to the receiver's limit, 1 GiB unless it set another), end-to-end encrypted, to one peer anywhere in the mesh; it lands in their downloads directory"),
        ("files", "/files", "list the file transfers running now, both ways, with their progress"),
        ("cancel", "/cancel ID", "stop a file transfer, either way (ID: its id or a prefix of it, as /files shows)"),
        ("reply", "/reply TEXT", "send a private line to the last peer who sent you one"),
        ("me", "/me TEXT", "send an action line where your lines go (shown as * NAME TEXT)"),
        ("route", "/route @NAME", "show the path to a peer across the mesh with each link's latency"),
        ("ping", "/ping @NAME", "measure the round trip to a peer across the mesh (a sealed ping and pong)"),
        ("verify", "/verify @NAME", "show the safety number to compare with a peer, and both key fingerprints"),
        ("trust", "/trust @NAME", "record that you compared the safety number with a peer (marked ✓; /trust alone lists them)"),
        ("untrust", "/untrust @NAME", "forget that you verified a peer"),
        ("forget", "/forget @NAME", "release a name: the next key seen under it holds it (when its holder is gone for good)"),
        ("mesh", "/mesh", "show the mesh as this node knows it: every node and link, as a tree from you"),
        ("block", "/block @NAME", "ignore a peer's lines, private lines and pins from now on (remembered; /block alone lists them)"),
        ("unblock", "/unblock @NAME", "stop ignoring a peer"),
        ("history", "/history [N]", "show the last N lines (default 20, at most 1000) with their dates, rooms and senders, kept across restarts"),
        ("clear", "/clear", "clear the screen of the conversation you look at (its lines stay in /history)"),
        ("search", "/search TEXT", "show the stored lines that contain TEXT (case-insensitive; the last 50 of them), with dates, rooms and senders"),
        ("query", "/query @NAME", "open the private conversation with a peer: your typed lines go to it, end-to-end encrypted (/query alone: back to the mesh)"),
        ("window", "/window [N]", "look at conversation N of the status line (Alt-1…9 too); your lines go there; /window alone lists them"),
        ("switch", "/switch #ROOM|@NAME|mesh", "look at a room you are in, a private conversation or the mesh; your lines go there"),
        ("whois", "/whois @NAME", "what you know of a peer: id, key fingerprint, verified, hops, route, address, data sets, away text"),
        ("away", "/away [TEXT]", "set an away text peers see in /peers and /whois (at most 256 bytes); /away alone clears it"),
        ("join", "/join #ROOM [PASSWORD]", "join a room across the whole mesh (with a password only those who know it can read it), or go back to one you are in; your lines go there"),
        ("leave", "/leave [#ROOM]", "leave a room (the one your lines go to by default); your lines go back to everyone"),
        ("rooms", "/rooms", "list the rooms you are in, and the one your lines go to"),
        ("here", "/here [LAT,LON]", "set your location (remembered across restarts), or show it"),
        ("near", "/near [RADIUS] [TEXT] | /near more [N]", "places around you (default 2 km; e.g. 500m, 5km, 3mi; a bare number is metres), here or asked of peers whose data covers it; more: the last one with up to 50 results"),
        ("pin", "/pin LAT,LON LABEL [NOTE] | /pin N [NOTE]", "share a pin with everyone (a quoted label may have spaces; N: a /near result)"),
        ("pins", "/pins [--geojson FILE]", "list live pins with distance and direction, or write them to a GeoJSON file"),
        ("unpin", "/unpin [N|all]", "withdraw your pin everywhere (N: from the last /pins list)"),
        ("map", "/map [RADIUS]", "a map of places and pins around you (default 2 km)"),
        ("connect", "/connect HOST:PORT | /connect CODE", "open an encrypted link to a peer at an address, or to the node a connection code names, and keep it"),
        ("disconnect", "/disconnect HOST:PORT | /disconnect CODE", "stop keeping the link to an address (or a code's), and close it"),
        ("code", "/code", "show your connection code: a peer that cannot discover you connects with /connect CODE"),
        ("invite", "/invite PEER", "invite a discovered peer (name or id prefix) into the chat"),
        ("accept", "/accept [PEER]", "accept an invitation (the only pending one if no peer is named)"),
        ("decline", "/decline [PEER]", "decline an invitation (the only pending one if no peer is named)"),
        ("help", "/help [COMMAND]", "list commands, or explain one"),
        ("quit", "/quit", "disconnect from every peer and exit"),
    ]

    /// Parses a line.
    /// - Parameter line: the line without its newline.
    /// - Returns: the command.
    /// - Throws: ``ChatCommandError`` for an unknown command or a bad argument.
    public static func parse(_ line: String) throws(ChatCommandError) -> ChatCommand {
        if line.trimmingWhitespace().isEmpty { return .empty }
        guard line.hasPrefix("/") else { return .say(line) }
        if line.hasPrefix("//") { return .say(String(line.dropFirst())) }
        let parts = line.trimmingWhitespace().dropFirst().split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let name = parts.first.map { $0.lowercased() } ?? ""
        let argument = parts.count > 1 ? String(parts[1]).trimmingWhitespace() : ""
        switch name {
        case "peers", "who":
            try noArgument(name, argument)
            return .peers
        case "nick":
            guard !argument.isEmpty else { throw .badArgument(command: "nick", "a new name is required") }
            guard argument.utf8.count <= 63 else {
                throw .badArgument(command: "nick", "\"\(argument.prefix(40))…\" is \(argument.utf8.count) bytes; a name has 1 to 63")
            }
            guard !argument.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .badArgument(command: "nick", "a name cannot contain control characters")
            }
            return .nick(argument)
        case "help", "?":
            return .help(argument.isEmpty ? nil : argument.lowercased().trimmingPrefix("/"))
        case "quit", "exit":
            try noArgument(name, argument)
            return .quit
        case "connect", "disconnect":
            guard !argument.isEmpty else { throw .badArgument(command: name, "an address is required (HOST:PORT or a connection code)") }
            let address: PeerAddress
            do {
                address = try PeerAddress.parse(argument)
            } catch {
                throw .badArgument(command: name, error.message)
            }
            switch (name, address) {
            case ("connect", .hostPort(let host, let port)): return .connect(host: host, port: port)
            case ("connect", .code(let data)): return .connectCode(data)
            default: return .disconnect(host: address.kept.host, port: address.kept.port)
            }
        case "code":
            try noArgument(name, argument)
            return .code
        case "msg":
            let pieces = argument.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let target = pieces.first.map({ String($0).trimmingPrefix("@") }), !target.isEmpty else {
                throw .badArgument(command: "msg", "a peer is required")
            }
            guard pieces.count == 2, !String(pieces[1]).trimmingWhitespace().isEmpty else {
                throw .badArgument(command: "msg", "the text is missing")
            }
            return .privateMessage(to: target, text: String(pieces[1]))
        case "send":
            let pieces = argument.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let target = pieces.first.map({ String($0).trimmingPrefix("@") }), !target.isEmpty else {
                throw .badArgument(command: "send", "a peer is required")
            }
            var path = pieces.count == 2 ? String(pieces[1]).trimmingWhitespace() : ""
            if path.count >= 2, let first = path.first, first == "\"" || first == "'", path.last == first {
                path = String(path.dropFirst().dropLast())
            }
            guard !path.isEmpty else { throw .badArgument(command: "send", "the file is missing") }
            return .sendFile(to: target, path: path)
        case "files":
            try noArgument(name, argument)
            return .files
        case "cancel":
            guard !argument.isEmpty, !argument.contains(" "), argument.allSatisfy(\.isHexDigit), argument.allSatisfy(\.isASCII) else {
                throw .badArgument(command: "cancel", "a transfer id (hex digits, from /files) is required")
            }
            return .cancelFile(argument.lowercased())
        case "reply", "r":
            guard !argument.isEmpty else { throw .badArgument(command: "reply", "the text is missing") }
            return .reply(argument)
        case "mesh":
            try noArgument(name, argument)
            return .mesh
        case "ping":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty, !target.contains(" ") else { throw .badArgument(command: "ping", "one peer is required") }
            return .ping(target)
        case "verify":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty, !target.contains(" ") else { throw .badArgument(command: "verify", "one peer is required") }
            return .verify(target)
        case "trust":
            let target = argument.trimmingPrefix("@")
            guard !target.contains(" ") else { throw .badArgument(command: "trust", "one peer is required") }
            return .trust(target)
        case "untrust":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty, !target.contains(" ") else { throw .badArgument(command: "untrust", "one peer is required") }
            return .untrust(target)
        case "forget":
            let target = String(argument.trimmingPrefix("@"))
            guard !target.isEmpty else { throw .badArgument(command: "forget", "a name is required") }
            return .forget(target)
        case "block", "ignore":
            return .block(argument.trimmingPrefix("@"))
        case "unblock", "unignore":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty else { throw .badArgument(command: "unblock", "a peer is required") }
            return .unblock(target)
        case "route":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty, !target.contains(" ") else { throw .badArgument(command: "route", "one peer is required") }
            return .route(target)
        case "history":
            guard !argument.isEmpty else { return .history(20) }
            guard argument.allSatisfy(\.isASCII), argument.allSatisfy(\.isNumber), let count = Int(argument), (1...1000).contains(count) else {
                throw .badArgument(command: "history", "\"\(argument)\" is not a number from 1 to 1000")
            }
            return .history(count)
        case "join":
            let pieces = argument.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let room = pieces.first, room.hasPrefix("#") else { throw .badArgument(command: "join", "a room name starting with # is required") }
            let password = pieces.count > 1 ? String(pieces[1]).trimmingWhitespace() : nil
            if let password, let choice = RoomChoice(rawValue: password) { return .join(room: String(room), password: nil, choice: choice) }
            return .join(room: String(room), password: password?.isEmpty == true ? nil : password)
        case "leave", "part":
            guard !argument.isEmpty else { return .leave(nil) }
            let pieces = argument.split(separator: " ", omittingEmptySubsequences: true)
            guard let room = pieces.first, room.hasPrefix("#"), pieces.count <= 2 else {
                throw .badArgument(command: "leave", "\"\(argument.prefix(40))\" is not one #room")
            }
            guard pieces.count == 2 else { return .leave(String(room)) }
            guard let choice = RoomChoice(rawValue: String(pieces[1])) else {
                throw .badArgument(command: "leave", "\"\(argument.prefix(40))\" is not one #room (after it only --public or --password)")
            }
            return .leave(String(room), choice: choice)
        case "rooms":
            try noArgument(name, argument)
            return .rooms
        case "here":
            guard !argument.isEmpty else { return .here(nil) }
            do {
                return .here(try Coordinate(parsing: argument))
            } catch {
                throw .badArgument(command: "here", error.message)
            }
        case "near":
            if let more = try nearMore(argument) { return more }
            let (radius, text) = try radiusAndText("near", argument)
            guard text.utf8.count <= PlacesLimits.maxQueryTextBytes else {
                throw .badArgument(command: "near", "the text is \(text.utf8.count) bytes, at most \(PlacesLimits.maxQueryTextBytes)")
            }
            return .near(radius: radius, text: text)
        case "map":
            let (radius, text) = try radiusAndText("map", argument)
            guard text.isEmpty else { throw .badArgument(command: "map", "\"\(text.prefix(40))\" is not a radius") }
            return .map(radius: radius)
        case "pin":
            return try pin(argument)
        case "pins":
            guard !argument.isEmpty else { return .pins(geojson: nil) }
            let pieces = argument.split(separator: " ", maxSplits: 1)
            guard pieces.first == "--geojson" else { throw .badArgument(command: "pins", "unknown option \"\(pieces[0])\"") }
            guard pieces.count == 2 else { throw .badArgument(command: "pins", "--geojson needs a file name") }
            return .pins(geojson: String(pieces[1]).trimmingWhitespace())
        case "unpin":
            if argument.isEmpty { return .unpin(.only) }
            if argument.lowercased() == "all" { return .unpin(.all) }
            guard let n = Int(argument), n >= 1 else {
                throw .badArgument(command: "unpin", "\"\(argument.prefix(40))\" is not a number from the /pins list or \"all\"")
            }
            return .unpin(.listed(n))
        case "invite":
            guard !argument.isEmpty else { throw .badArgument(command: "invite", "a peer name or id is required") }
            return .invite(argument)
        case "accept":
            return .accept(argument.isEmpty ? nil : argument)
        case "decline":
            return .decline(argument.isEmpty ? nil : argument)
        case "query", "window", "win", "switch", "search", "away", "whois", "clear", "me":
            return try conversationCommand(name, argument)
        default:
            throw .unknownCommand(name)
        }
    }

    /// `[RADIUS] [TEXT]`: a first word that reads as a distance is the radius.
    /// `more` or `more N` (1 to ``PlacesLimits/maxLimit``); `nil` for any other argument (a place named
    /// "more" is still found with a radius first: `/near 2km more`).
    private static func nearMore(_ argument: String) throws(ChatCommandError) -> ChatCommand? {
        let pieces = argument.split(separator: " ", omittingEmptySubsequences: true)
        guard pieces.first?.lowercased() == "more", pieces.count <= 2 else { return nil }
        guard pieces.count == 2 else { return .nearMore(limit: PlacesLimits.maxLimit) }
        let text = pieces[1]
        // `/near more pizza`: a lookup for "more pizza".
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        guard text.count <= 4, let limit = Int(text),
              (1...PlacesLimits.maxLimit).contains(limit) else {
            throw .badArgument(command: "near", "\"\(text.prefix(20))\" is not a number of results from 1 to \(PlacesLimits.maxLimit)")
        }
        return .nearMore(limit: limit)
    }

    private static func radiusAndText(_ command: String, _ argument: String) throws(ChatCommandError) -> (Distance?, String) {
        let pieces = argument.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let first = pieces.first, first.first.map({ $0.isNumber || $0 == "." }) == true else { return (nil, argument) }
        let radius: Distance
        do {
            radius = try Distance(parsing: String(first))
        } catch {
            throw .badArgument(command: command, error.message)
        }
        guard radius.metres >= PlacesLimits.minRadiusMetres, radius.metres <= PlacesLimits.maxRadiusMetres else {
            throw .badArgument(command: command, "radius \(first) is out of range: 1 m to 100 km")
        }
        return (radius, pieces.count > 1 ? String(pieces[1]).trimmingWhitespace() : "")
    }

    /// `/pin LAT,LON LABEL [NOTE]` (a label in double quotes may hold spaces) or `/pin N [NOTE]`.
    private static func pin(_ argument: String) throws(ChatCommandError) -> ChatCommand {
        let pieces = argument.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let first = pieces.first else { throw .badArgument(command: "pin", "a position or a result number is required") }
        let rest = pieces.count > 1 ? String(pieces[1]).trimmingWhitespace() : ""
        if let n = Int(first) {
            guard n >= 1 else { throw .badArgument(command: "pin", "result number \(n) must be 1 or more") }
            return .pin(.result(n), note: rest)
        }
        let point: Coordinate
        do {
            point = try Coordinate(parsing: String(first))
        } catch {
            throw .badArgument(command: "pin", error.message)
        }
        var label = rest
        var note = ""
        if rest.hasPrefix("\"") {
            let body = rest.dropFirst()
            guard let close = body.firstIndex(of: "\"") else { throw .badArgument(command: "pin", "the label's closing \" is missing") }
            label = String(body[..<close])
            note = String(body[body.index(after: close)...]).trimmingWhitespace()
        } else if let space = rest.firstIndex(of: " ") {
            label = String(rest[..<space])
            note = String(rest[rest.index(after: space)...]).trimmingWhitespace()
        }
        guard !label.trimmingWhitespace().isEmpty else { throw .badArgument(command: "pin", "a label is required") }
        return .pin(.point(point, label: label), note: note)
    }

    private static func noArgument(_ name: String, _ argument: String) throws(ChatCommandError) {
        guard argument.isEmpty else { throw .badArgument(command: name, "it takes no argument") }
    }
}

/// `HOST:PORT` addresses, with `[v6]:port` for IPv6 (as `--connect` and `/connect` take them).
public enum HostPort {

    /// An address that could not be parsed.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was wrong.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    /// Parses `HOST:PORT`, `[IPV6]:PORT` or `IPV4:PORT`.
    /// - Parameter text: the address.
    /// - Returns: host (without brackets) and port.
    /// - Throws: ``ParseError`` naming what was wrong.
    public static func parse(_ text: String) throws(ParseError) -> (host: String, port: Int) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ParseError(message: "\"\(text)\" has \"[\" without \"]\"")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ParseError(message: "\"\(text)\" has no :PORT after the address") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ParseError(message: "\"\(text)\" has no port; expected HOST:PORT, e.g. 192.0.2.7:7000")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw ParseError(message: "\"\(text)\": write an IPv6 address in brackets, e.g. [::1]:7000")
            }
        }
        guard !host.isEmpty else { throw ParseError(message: "\"\(text)\" has no host") }
        guard portText.allSatisfy(\.isASCII) && portText.allSatisfy(\.isNumber),
              let port = Int(portText), (1...65535).contains(port) else {
            throw ParseError(message: "\"\(text)\": port \"\(portText)\" is not a number from 1 to 65535")
        }
        return (String(host), port)
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
