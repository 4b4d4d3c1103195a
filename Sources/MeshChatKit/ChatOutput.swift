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
    /// A peer was discovered (`isNew`), or its advertisement or addresses changed (text mode
    /// shows only the first).
    case found(PeerID, addresses: [String], info: [String: String], isNew: Bool = true)
    /// A discovered peer went away.
    case lost(PeerID)
    /// This node is announced on the network.
    case advertising(name: String, service: String)
    /// An invitation was sent to a peer (`sent`), or received from one (`received`);
    /// `awaitsAnswer` when the user must `/accept` or `/decline` it (`--manual`).
    case invitation(PeerID, direction: String, contextBytes: Int, awaitsAnswer: Bool = false)
    /// An invitation this node made did not connect.
    case invitationFailed(PeerID, kind: String, message: String)
    /// A received invitation ended without an answer taking effect (expired, withdrawn).
    case invitationEnded(PeerID, reason: String)
    /// Something went wrong; nothing was sent.
    case error(String)
    /// A notice for people (text mode only).
    case notice(String)

    /// One row of `/peers`.
    public struct PeerRow: Sendable {
        /// Node id.
        public let id: String
        /// Display name.
        public let name: String
        /// `connected`, …
        public let state: String
        /// Remote address, when known.
        public let address: String?

        /// Creates a row.
        /// - Parameters:
        ///   - id: node id (hex).
        ///   - name: display name.
        ///   - state: the peer's state.
        ///   - address: remote address, when known.
        public init(id: String, name: String, state: String, address: String?) {
            self.id = id
            self.name = name
            self.state = state
            self.address = address
        }
    }
}

/// Renders ``ChatOutput`` as one JSON object per line (`--json`); the README documents each event.
/// Every object starts with its `"event"` key.
public struct JSONRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The JSON line for an output, or `nil` for outputs that are text-only (notices).
    /// - Parameter output: what to show.
    /// - Returns: one line of JSON without a newline.
    public func render(_ output: ChatOutput) -> String? {
        value(output)?.serialized
    }

    /// The JSON value for an output, or `nil` for text-only outputs.
    /// - Parameter output: what to show.
    /// - Returns: the value.
    public func value(_ output: ChatOutput) -> JSONValue? {
        switch output {
        case .ready(let id, let name, let port):
            return .object([("event", "ready"), ("id", .string(id)), ("name", .string(name)), ("port", .int(port))])
        case .peer(let peer, let state, let address, let reason):
            var members: [(String, JSONValue)] = [("event", "peer"), ("peer", Self.peer(peer)), ("state", .string(state))]
            if let address { members.append(("address", .string(address))) }
            if let reason {
                members.append(("reason", .object([
                    ("code", .string(reason.code)), ("message", .string(reason.message)), ("remote", .bool(reason.isRemote)),
                ])))
            }
            return .object(members)
        case .message(let id, let from, let text, let sentAt):
            return .object([("event", "message"), ("id", .string(id)), ("from", Self.peer(from)),
                            ("text", .string(text)), ("sent_at", .string(Self.iso8601(sentAt)))])
        case .data(let from, let mode, let payload):
            return .object([("event", "data"), ("from", Self.peer(from)), ("mode", .string("\(mode)")),
                            ("bytes", .int(payload.count)), ("base64", .string(payload.base64EncodedString()))])
        case .sent(let id, let text, let to):
            return .object([("event", "sent"), ("id", .string(id)), ("text", .string(text)), ("to", .array(to.map(Self.peer)))])
        case .peers(let rows):
            return .object([("event", "peers"), ("peers", .array(rows.map { row in
                var members: [(String, JSONValue)] = [("id", .string(row.id)), ("name", .string(row.name)), ("state", .string(row.state))]
                if let address = row.address { members.append(("address", .string(address))) }
                return .object(members)
            }))])
        case .help(let text):
            return .object([("event", "help"), ("text", .string(text))])
        case .connectFailed(let address, let reason):
            return .object([("event", "connectFailed"), ("address", .string(address)), ("reason", .string(reason))])
        case .found(let peer, let addresses, let info, _):
            return .object([("event", "found"), ("peer", Self.peer(peer)), ("addresses", .array(addresses.map { .string($0) })),
                            ("info", .object(info.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))])
        case .lost(let peer):
            return .object([("event", "lost"), ("peer", Self.peer(peer))])
        case .advertising(let name, let service):
            return .object([("event", "advertising"), ("name", .string(name)), ("service", .string(service))])
        case .invitation(let peer, let direction, let contextBytes, _):
            return .object([("event", "invitation"), ("peer", Self.peer(peer)), ("direction", .string(direction)),
                            ("context_bytes", .int(contextBytes))])
        case .invitationFailed(let peer, let kind, let message):
            return .object([("event", "invitationFailed"), ("peer", Self.peer(peer)), ("kind", .string(kind)), ("message", .string(message))])
        case .invitationEnded(let peer, let reason):
            return .object([("event", "invitationEnded"), ("peer", Self.peer(peer)), ("reason", .string(reason))])
        case .error(let message):
            return .object([("event", "error"), ("message", .string(message))])
        case .notice:
            return nil
        }
    }

    private static func peer(_ peer: PeerID) -> JSONValue {
        .object([("id", .string(peer.id.hex)), ("name", .string(peer.displayName))])
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
            if rows.isEmpty { return "* no peers found or connected" }
            return rows.map { "* \($0.name) \($0.id.prefix(8)) \($0.state)\($0.address.map { " \($0)" } ?? "")" }
                .joined(separator: "\n")
        case .help(let text):
            return text
        case .connectFailed(let address, let reason):
            return "! could not connect to \(address): \(reason)"
        case .found(let peer, let addresses, _, let isNew):
            return isNew ? "* found \(peer)\(addresses.first.map { " at \($0)" } ?? "")" : nil
        case .lost(let peer):
            return "* lost \(peer)"
        case .advertising(let name, let service):
            return "* announced as '\(name)' (service \(service))"
        case .invitation(let peer, let direction, _, let awaitsAnswer):
            if direction == "sent" { return "* inviting \(peer)" }
            return awaitsAnswer
                ? "* \(peer) invites you: /accept \(peer.displayName) or /decline \(peer.displayName)"
                : "* \(peer) invites you; accepting"
        case .invitationFailed(let peer, let kind, let message):
            return "! invitation to \(peer) failed (\(kind)): \(message)"
        case .invitationEnded(let peer, let reason):
            return "* invitation from \(peer) ended: \(reason)"
        case .error(let message):
            return "! \(message)"
        case .notice(let text):
            return "* \(text)"
        }
    }
}
