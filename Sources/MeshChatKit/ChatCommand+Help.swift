import Foundation

extension ChatCommand {
    /// What `/help COMMAND` adds after a command's usage and summary: how it behaves, its
    /// limits and an example, by the command's name in ``usages``. Every command has one (a test
    /// holds every name the parser accepts to it).
    public static let details: [String: String] = [
        "peers": "States: connected (a direct link), reachable (across N hops, via a neighbour), found (discovered, not linked), invitedYou (waiting for /accept).",
        "nick": "For this run only (use --name or the configuration file's name to keep one). A new signed advert carries it across the mesh at once; your id stays, so private lines, receipts and blocks are unaffected. Example: /nick alicia",
        "msg": "Sealed end to end: relays cannot read it. Kept on disk until the peer's receipt comes back (✓ sent, ✓✓ delivered), also across restarts. Example: /msg @bob see you at 6",
        "me": "Goes where a typed line goes (the prompt says where: mesh, a room or a peer) and is shown as * alice waves, in /history and /search too; a peer older than protocol 5 shows the text as a plain line. Example: /me waves",
        "reply": "Goes to whoever sent you the last private line, sealed end to end like /msg. Example: /reply on my way",
        "route": "Each hop with its link's round trip, from the latest link-state adverts. Example: /route @carol",
        "ping": "A sealed ping answered by the peer's node with a sealed pong, at most 20 per second. Example: /ping @carol",
        "verify": "60 digits made from both identity keys, the same on both sides: compare them with the peer (aloud or side by side); if they match, nobody in between holds a key of their own. Example: /verify @bob",
        "mesh": "Every reachable node as a tree from you with each link's round trip, the links the tree leaves out, and nodes out of reach.",
        "trust": "Only after /verify showed the same 60 digits on both screens. A verified peer is marked ✓ wherever its name is shown and \"verified\": true in --json; remembered across restarts. A node that later claims the name with another key is shown flagged as a new key and never gets what you address by name. Example: /trust @bob",
        "untrust": "The peer keeps its name, but is no longer marked verified. Example: /untrust @bob",
        "forget": "For a name whose holder is gone for good (a lost laptop): the name is free, and the next key seen under it, in a handshake or a signed advert, holds it (a new key the chat flagged meanwhile takes it at its next advert). The old holder keeps its other names and, if verified, its mark; a holder that changed keys by a verified rotation needs no /forget. Example: /forget @bob",
        "block": "Its lines to everyone, to rooms and to you, its pins and its lookups are dropped unread; its private lines are still acknowledged. Example: /block @spammer",
        "unblock": "Its lines are shown again from now on (those dropped meanwhile are gone). Example: /unblock @bob",
        "history": "Private lines, lines to everyone and room lines, oldest first, each with its date and time, its room or private marker and its sender, and delivery status. Example: /history 50",
        "clear": "Only the screen and the scrollback kept for switching back: the lines stay on disk, and /history and /search still show them. Ctrl-L clears the screen alone.",
        "search": "Case-insensitive, among the last 10,000 stored lines; shows the latest 50 that match, dated as /history shows them. Example: /search pizza",
        "query": "The peer's conversation becomes the one you look at (its own scrollback), and every line you type goes to that peer only, sealed end to end like /msg; the prompt says so ([@bob] >) and it is remembered across restarts. Example: /query @bob",
        "window": "The status line above the input line numbers the conversations: 1 is the mesh, then rooms and private conversations in the order they opened, with unread counts ((3), and ! when a line mentions you or is private). Alt-1…9 do the same. Example: /window 2",
        "switch": "The screen shows that conversation's lines again and your typed lines go there: a room you are in, a peer (as /msg finds it), or mesh for everyone. Example: /switch #lunch",
        "whois": "Its id, its key's fingerprint and whether you verified it, hops and the route, its address and link cipher suite when it is a neighbour, the place data sets it offers and its away text. Example: /whois @bob",
        "away": "At most 256 bytes on one line, carried in your signed advert: every peer sees it in /peers and /whois until you clear it with /away alone; it is kept across restarts. Example: /away at lunch until 2",
        "join": "Without a password anyone who knows the name can read the room; with one only those who know it (the key comes from scrypt). The public #lunch and the password #lunch 🔒 are two rooms. /join #lunch goes back to the #lunch you are in, with its key (the password one when you are only in that); in both, say which: /join #lunch --public or /join #lunch --password. The prompt shows where your lines go ([#lunch 🔒] >). The password is never kept in the input history. Example: /join #lunch pizza",
        "leave": "The room's history stays; its key is forgotten. In both rooms of one name, say which: /leave #lunch --password. Example: /leave #lunch",
        "rooms": "The joined rooms in the order you joined them; remembered across restarts.",
        "here": "Decimal degrees, latitude first. Without an argument: your location and the nearest place in your data. The configuration file's location is used until you set one. Example: /here 51.5074,-0.1278",
        "near": "Answered from your data when it covers your location, else by the peers whose data does, across hops; at most 100 km. Example: /near 500m pizza. /near more shows the last lookup again with up to 50 results (/near more N: up to N); a place named \"more\" is found with a radius first: /near 2km more.",
        "pin": "Signed by you, kept 24 hours by every peer, sent to peers who join later. Example: /pin 51.501,-0.142 \"Meet here\" by the gates",
        "pins": "Numbered, with distance and direction from your location. Example: /pins --geojson pins.geojson",
        "unpin": "Withdrawn on every node. Without an argument: your only pin. Example: /unpin all",
        "map": "You (@), north, a scale bar, places per cell (# for 10 or more), pins lettered with a key; a plain list when stdout is not a terminal. Example: /map 5km",
        "connect": "An encrypted link (Noise XX) to a peer's listening port; [IPV6]:PORT for IPv6. The link is kept: whenever it is down (the peer restarted, the network was cut) the address is dialled again, after 1 s doubling up to 30 s, until /disconnect HOST:PORT. A connection code (meshchat:…, from the peer's /code) carries the peer's addresses and its id: they are dialled in order and the link is refused unless the node there proves that id; kept under its first address. Example: /connect 192.0.2.7:7000",
        "disconnect": "Stops redialling an address given to /connect, --connect or the configuration file's connect, and closes the link to the peer there. For a code, its first address. Example: /disconnect 192.0.2.7:7000",
        "code": "Your addresses (loopback last), port and id as one line of text (meshchat: and base32, about 64 characters for one address) to pass on by any means: typed, pasted, a QR code. For networks where discovery cannot pass; the code changes when your addresses or port do.",
        "invite": "For --manual: found peers are not invited by themselves. Example: /invite bob",
        "accept": "For --manual: an invitation waits 10 seconds for an answer. Example: /accept bob",
        "decline": "For --manual: the inviter is told it was declined. Example: /decline bob",
        "send": "Sealed end to end in chunks (relays see only sizes); the receiver takes it by itself, up to its --max-file-size (1 GiB by default), unless it blocked you, checks the SHA-256 and stores it in its downloads directory (--downloads). A peer out of reach gets the offer when a route appears; a transfer waits paused (and says so) up to 10 minutes for a route that breaks. Example: /send @carol ~/photos/map.png",
        "files": "Each transfer running now, either way, with its id, peer, name and progress.",
        "cancel": "Stops a transfer either way; the peer is told and a partial file is removed. ID: its first characters as /files shows them. Example: /cancel 5d1f",
        "help": "Example: /help msg",
        "quit": "Every peer is told goodbye; lines waiting in the outbox stay on disk and go out the next time. Ctrl-D or Ctrl-C twice do the same in a terminal.",
    ]

    /// The other names of a command (``aliases`` pointing at it), sorted.
    /// - Parameter name: a command's name in ``usages``.
    /// - Returns: the aliases without their slash.
    public static func aliases(of name: String) -> [String] {
        aliases.filter { $0.value == name }.map(\.key).sorted()
    }
}

extension ChatFront {
    /// The text of `/help` or `/help COMMAND`.
    /// - Parameter topic: a command name, or `nil` for the list.
    /// - Returns: the help text.
    public static func helpText(_ topic: String?) -> String {
        if let topic {
            let topic = ChatCommand.aliases[topic] ?? topic
            guard let entry = ChatCommand.usages.first(where: { $0.name == topic }) else {
                return "no command /\(topic); type /help for the list"
            }
            var text = "\(entry.usage)\n  \(entry.summary)"
            if let detail = ChatCommand.details[entry.name] { text += "\n  \(detail)" }
            let aliases = ChatCommand.aliases(of: entry.name)
            if !aliases.isEmpty { text += "\n  Also: " + aliases.map { "/" + $0 }.joined(separator: ", ") }
            return text
        }
        let width = ChatCommand.usages.map(\.usage.count).max() ?? 0
        let lines = ChatCommand.usages.map { "  \($0.usage.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        return (["Type a line to send it to everyone in the mesh (start it with // to send a leading /). Commands:"] + lines)
            .joined(separator: "\n")
    }
}
