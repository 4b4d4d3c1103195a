import Foundation
import MeshSession

/// The board's commands and events over one session and its channel.
struct Board: Sendable {
    let session: Session
    let channel: MeshChannel
    let output: Output

    /// Runs one line of standard input.
    func command(_ line: String) async {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        let (verb, rest) = Self.split(trimmed)
        do {
            switch verb {
            case "":
                return
            case "post":
                guard !rest.isEmpty else { return output.error("post needs a text") }
                let nobody = try await channel.broadcast(BoardMessage.post(rest).encoded)
                output.event(["event": "sent", "kind": "post", "reachedNobody": nobody])
            case "tell":
                let (target, text) = Self.split(rest)
                guard !text.isEmpty else { return output.error("tell needs an id and a text") }
                guard let peer = peer(matching: target) else { return output.error("no single reachable node has an id starting with \"\(target.prefix(32))\"") }
                try await channel.send(BoardMessage.note(text).encoded, to: peer)
                output.event(["event": "sent", "kind": "note", "to": peer.id.hex])
            case "status":
                try await channel.setAttachment(rest.isEmpty ? nil : Data(rest.utf8))
                output.event(["event": "status", "peer": session.peer.peerID.id.hex, "status": rest])
            case "peers":
                let peers: [[String: any Sendable]] = session.reachablePeers.map { route in
                    ["id": route.peer.id.hex, "name": route.peer.displayName, "hops": route.hops,
                     "status": BoardMessage.status(channel.attachment(of: route.peer)) ?? ""]
                }
                output.event(["event": "peers", "peers": peers])
            default:
                output.error("unknown command \"\(verb.prefix(32))\": post TEXT, tell ID TEXT, status TEXT, peers")
            }
        } catch {
            output.error("\(error)")
        }
    }

    /// The one reachable node whose id starts with `prefix` (lower-case hex).
    private func peer(matching prefix: String) -> PeerID? {
        let prefix = prefix.lowercased()
        guard !prefix.isEmpty else { return nil }
        let matches = session.reachablePeers.map(\.peer).filter { $0.id.hex.hasPrefix(prefix) }
        return matches.count == 1 ? matches.first : nil
    }

    /// Shows a message from the channel.
    func show(_ message: ChannelMessage) {
        guard let decoded = BoardMessage.decode(message.payload) else { return }
        let sender: [String: any Sendable] = ["from": message.sender.id.hex, "name": message.sender.displayName, "hops": message.hops]
        switch (decoded, message.delivery) {
        case (.post(let text), .broadcast):
            output.event(sender.merging(["event": "post", "text": text]) { $1 })
        case (.note(let text), .sealed):
            output.event(sender.merging(["event": "note", "text": text]) { $1 })
        default:
            return  // a post sealed or a note broadcast: not what meshboard sends
        }
    }

    /// Shows the session's events that matter to a board.
    func show(_ event: SessionEvent) {
        switch event {
        case .reachabilityChanged(let peer, let route):
            output.event(["event": route == nil ? "unreachable" : "reachable", "peer": peer.id.hex,
                          "name": peer.displayName, "hops": route?.hops ?? 0])
        case .connectFailed(let address, let reason):
            output.event(["event": "connectFailed", "address": address, "reason": reason])
        default:
            return
        }
    }

    /// The first word and the rest.
    private static func split(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(of: " ") else { return (text, "") }
        return (String(text[..<space]), text[space...].trimmingCharacters(in: .whitespaces))
    }
}
