import Foundation
import MeshSession

/// What the chat front shows, as values: the renderers turn each into a JSON line or text.
public enum ChatOutput: Sendable {
    /// The session is listening.
    case ready(id: String, name: String, port: Int)
    /// A peer's state changed.
    case peer(PeerID, state: String, address: String?, reason: DisconnectReason?)
    /// A chat line arrived.
    case message(id: String, from: PeerID, text: String, sentAt: Date)
    /// Opaque data arrived (from a library user's `send`).
    case data(from: PeerID, mode: SendMode, payload: Data)
    /// A typed line was sent.
    case sent(id: String, text: String, to: [PeerID])
    /// The answer to `/peers`.
    case peers([PeerRow])
    /// The answer to `/help`.
    case help(String)
    /// An outgoing connection failed.
    case connectFailed(address: String, reason: String)
    /// Something went wrong; nothing was sent.
    case error(String)
    /// A notice for people (text mode only).
    case notice(String)

    /// One row of `/peers`.
    public struct PeerRow: Sendable, Encodable {
        /// Node id.
        public let id: String
        /// Display name.
        public let name: String
        /// `connected`, …
        public let state: String
        /// Remote address, when known.
        public let address: String?
    }
}

/// Renders ``ChatOutput`` as one JSON object per line (`--json`); the README documents each event.
public struct JSONRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    private struct PeerJSON: Encodable {
        let id: String
        let name: String
        init(_ peer: PeerID) {
            id = peer.id.hex
            name = peer.displayName
        }
    }

    private struct ReasonJSON: Encodable {
        let code: String
        let message: String
        let remote: Bool
    }

    private struct Ready: Encodable { let event = "ready"; let id: String; let name: String; let port: Int }
    private struct Peer: Encodable {
        let event = "peer"; let peer: PeerJSON; let state: String; let address: String?; let reason: ReasonJSON?
    }
    private struct Message: Encodable {
        let event = "message"; let id: String; let from: PeerJSON; let text: String; let sentAt: String
        enum CodingKeys: String, CodingKey { case event, id, from, text, sentAt = "sent_at" }
    }
    private struct DataEvent: Encodable { let event = "data"; let from: PeerJSON; let mode: String; let bytes: Int; let base64: String }
    private struct Sent: Encodable { let event = "sent"; let id: String; let text: String; let to: [PeerJSON] }
    private struct Peers: Encodable { let event = "peers"; let peers: [ChatOutput.PeerRow] }
    private struct Help: Encodable { let event = "help"; let text: String }
    private struct ConnectFailed: Encodable { let event = "connectFailed"; let address: String; let reason: String }
    private struct ErrorEvent: Encodable { let event = "error"; let message: String }

    /// The JSON line for an output, or `nil` for outputs that are text-only (notices).
    /// - Parameter output: what to show.
    /// - Returns: one line of JSON without a newline.
    public func render(_ output: ChatOutput) -> String? {
        switch output {
        case .ready(let id, let name, let port): encode(Ready(id: id, name: name, port: port))
        case .peer(let peer, let state, let address, let reason):
            encode(Peer(peer: PeerJSON(peer), state: state, address: address,
                        reason: reason.map { ReasonJSON(code: $0.code, message: $0.message, remote: $0.isRemote) }))
        case .message(let id, let from, let text, let sentAt):
            encode(Message(id: id, from: PeerJSON(from), text: text, sentAt: Self.iso8601(sentAt)))
        case .data(let from, let mode, let payload):
            encode(DataEvent(from: PeerJSON(from), mode: "\(mode)", bytes: payload.count, base64: payload.base64EncodedString()))
        case .sent(let id, let text, let to): encode(Sent(id: id, text: text, to: to.map(PeerJSON.init)))
        case .peers(let rows): encode(Peers(peers: rows))
        case .help(let text): encode(Help(text: text))
        case .connectFailed(let address, let reason): encode(ConnectFailed(address: address, reason: reason))
        case .error(let message): encode(ErrorEvent(message: message))
        case .notice: nil
        }
    }

    private func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{\"event\":\"error\",\"message\":\"could not encode an event\"}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

/// Renders ``ChatOutput`` as plain lines for people.
public struct TextRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

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
                let why = reason.map { ": \($0.isRemote ? "peer said " : "")\($0.message) (\($0.code))" } ?? ""
                return "* \(peer) disconnected\(why)"
            default: return "* \(peer) \(state)\(at)"
            }
        case .message(_, let from, let text, _):
            return "<\(from.displayName)> \(text)"
        case .data(let from, let mode, let payload):
            return "* \(payload.count) bytes of \(mode) data from \(from)"
        case .sent:
            return nil
        case .peers(let rows):
            if rows.isEmpty { return "* no peers connected" }
            return rows.map { "* \($0.name) \($0.id.prefix(8)) \($0.state)\($0.address.map { " \($0)" } ?? "")" }
                .joined(separator: "\n")
        case .help(let text):
            return text
        case .connectFailed(let address, let reason):
            return "! could not connect to \(address): \(reason)"
        case .error(let message):
            return "! \(message)"
        case .notice(let text):
            return "* \(text)"
        }
    }
}
