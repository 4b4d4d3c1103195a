import Foundation
import MeshChat

/// The control socket's JSON-lines protocol (README "Scripts beside the chat"), pure: a request
/// line in, a checked ``ControlRequest`` or an error out; replies as one JSON object each.
///
/// Request: `{"op":"send","text":"…"}` (to everyone, or the room typed lines go to), with
/// `"to":"@carol"` (a peer: display name or id prefix, `@` optional) or `"to":"#dev"` (a joined room).
/// Reply: `{"ok":true,"id":"…","status":"sent"|"queued","stored":true,…}` once the line is on
/// disk, or `{"error":"…"}`. Unknown members, wrong types, an empty or oversized text and a
/// malformed target are errors; nothing is sent then.
public enum ControlProtocol {
    /// The socket's file name in the data directory.
    public static let socketName = "control"
    /// The longest request line (bytes, without `\n`): 256 KiB, so the longest chat line fits
    /// escaped in JSON (unless most of it are control characters, 6 bytes each as `\uXXXX`).
    public static let maxRequestBytes = 262_144
    /// Clients served at once.
    public static let maxClients = 8
    /// The longest `to` (bytes).
    public static let maxTargetBytes = 100

    /// One checked request.
    public enum Request: Sendable, Hashable {
        /// Send `text` to `target`.
        case send(target: Target, text: String)
    }

    /// Where a line goes.
    public enum Target: Sendable, Hashable {
        /// Where typed lines go: the active room, else everyone.
        case typed
        /// One peer: a display name or an id prefix (without `@`).
        case peer(String)
        /// A joined room, `#name` as typed.
        case room(String)
    }

    /// Parses and checks one request line.
    /// - Parameter line: the line's bytes, without `\n`.
    /// - Returns: the request, or the error sentence for the reply.
    public static func parse(_ line: [UInt8]) -> Result<Request, ControlError> {
        guard line.count <= maxRequestBytes else { return .failure("the request is over \(maxRequestBytes) bytes") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            return .failure("the request is not a JSON object on one line")
        }
        let known: Set<String> = ["op", "to", "text"]
        if let stray = object.keys.sorted().first(where: { !known.contains($0) }) {
            return .failure("unknown member \"\(stray.prefix(40))\"; a request has op, to and text")
        }
        guard let op = object["op"] as? String else { return .failure("\"op\" is missing or not a string") }
        guard op == "send" else { return .failure("unknown op \"\(op.prefix(40))\"; the only op is \"send\"") }
        guard let text = object["text"] as? String else { return .failure("\"text\" is missing or not a string") }
        guard !text.isEmpty, text.utf8.count <= ChatLimits.maxLineBytes else {
            return .failure("the text is \(text.utf8.count) bytes; send 1 to \(ChatLimits.maxLineBytes) bytes")
        }
        guard let to = object["to"] else { return .success(.send(target: .typed, text: text)) }
        guard let to = to as? String else { return .failure("\"to\" is not a string") }
        guard (1...maxTargetBytes).contains(to.utf8.count), to != "@", to != "#",
              !to.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            return .failure("\"to\" must be @NAME, an id prefix or #ROOM: 1 to \(maxTargetBytes) bytes, no spaces")
        }
        if to.hasPrefix("#") { return .success(.send(target: .room(to), text: text)) }
        return .success(.send(target: .peer(to.hasPrefix("@") ? String(to.dropFirst()) : to), text: text))
    }

    /// The reply to a line stored on disk.
    /// - Parameters:
    ///   - id: the line's id.
    ///   - status: `sent` (handed to the network) or `queued` (waiting in the outbox).
    ///   - to: the private line's peer (`id`, `name`), if it is one.
    ///   - room: the room, if it went to one.
    /// - Returns: the line, without `\n`.
    public static func stored(id: String, status: String, to: (id: String, name: String)?, room: String?) -> String {
        var members: [(String, JSONValue)] = [("ok", .bool(true)), ("id", .string(id)), ("status", .string(status)), ("stored", .bool(true))]
        if let to { members.append(("to", .object([("id", .string(to.id)), ("name", .string(to.name))]))) }
        if let room { members.append(("room", .string(room))) }
        members.append(("private", .bool(to != nil)))
        return JSONValue.object(members).serialized
    }

    /// What kind of error a reply reports (its `code`), for scripts.
    public enum ErrorCode: String, Sendable, Hashable {
        /// The request is malformed (not JSON, unknown member, wrong type, bad text or target).
        case badRequest
        /// No known peer, or several, go by that name.
        case unknownPeer
        /// The room is not joined (or both of that name are).
        case unknownRoom
        /// The request line was too long; the connection is closed.
        case tooLong
        /// Too many clients; the connection is closed.
        case busy
        /// The line could not be stored.
        case failed
    }

    /// The reply to a request that failed; nothing was sent.
    /// - Parameters:
    ///   - message: what went wrong.
    ///   - code: its kind.
    /// - Returns: the line, without `\n`.
    public static func error(_ message: String, code: ErrorCode) -> String {
        JSONValue.object([("error", .string(message)), ("code", .string(code.rawValue))]).serialized
    }
}

/// Why a control request was refused (the reply's `error`).
public struct ControlError: Error, Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The sentence.
    public let description: String
    /// Creates the error.
    /// - Parameter description: the sentence.
    public init(_ description: String) { self.description = description }
    /// Creates the error from a literal.
    public init(stringLiteral value: String) { self.init(value) }
}
