import Foundation
import MeshChatKit
import MeshSession
import MeshTransport

/// `meshchat send` beside a running chat: one request on the chat's control socket
/// (``ControlProtocol``), whose reply becomes the command's report.
struct ChatControlSend: Sendable {
    /// The data directory the chat holds.
    let directory: String
    /// `--to` as given (`@bob`, `bob`, an id prefix or `#room`), or `nil`: where the chat's typed lines go.
    let target: String?
    let text: String
    /// Seconds to wait for the chat's answer.
    let timeout: Double

    /// Sends the request and reads the answer.
    /// - Parameter held: the lock failure that says a process holds the directory.
    /// - Returns: the report: `sent` or `queued` (exit 0) once the chat has the line on disk.
    func run(held: DataDirectoryLock.Failure) async -> SendReport {
        let path = directory + "/" + ControlProtocol.socketName
        var members: [(String, JSONValue)] = [("op", "send")]
        if let target { members.append(("to", .string(target))) }
        members.append(("text", .string(text)))
        let request = JSONValue.object(members).serialized
        let reply: [UInt8]?
        do {
            reply = try await Self.within(seconds: timeout) { try await LocalLineServer.request(request, path: path) }
        } catch {
            return .failure("\(held.description); it serves no control socket at \(path) (\(EventLoops.describe(error))), so nothing was sent",
                            status: ExitStatus.cannotStart)
        }
        guard let reply, let object = (try? JSONSerialization.jsonObject(with: Data(reply))) as? [String: Any] else {
            return .failure("the chat running with \(directory) gave no answer; nothing may have been sent", status: ExitStatus.cannotStart)
        }
        if let message = object["error"] as? String {
            let unknown = (object["code"] as? String).map { ["unknownPeer", "unknownRoom"].contains($0) } ?? false
            return .failure("the chat running with \(directory) refused the line: \(message)",
                            status: unknown ? ExitStatus.unknownPeer : ExitStatus.cannotStart)
        }
        guard let id = object["id"] as? String, let status = object["status"] as? String, ["sent", "queued"].contains(status) else {
            return .failure("the chat running with \(directory) gave an answer without a line id", status: ExitStatus.cannotStart)
        }
        var peers: [PeerID] = []
        if let to = object["to"] as? [String: Any], let hex = to["id"] as? String, let name = to["name"] as? String,
           let node = try? NodeID(hex: hex), let peer = try? PeerID(id: node, displayName: name) {
            peers = [peer]
        }
        let room = object["room"] as? String
        let whom = peers.first.map { "\($0.displayName) (\($0.id.shortHex))" } ?? room ?? "everyone"
        let sentence = status == "sent" ? "the chat running with \(directory) sent the line to \(whom)"
            : "the chat running with \(directory) queued the line for \(whom): it goes out from there"
        return SendReport(status: ExitStatus.ok, outcome: status, sentence: sentence, id: id, to: peers, isPrivate: !peers.isEmpty)
    }

    /// The value of `body`, or a timeout error after `seconds`.
    private static func within<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded())))
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else { throw ControlTimeout(seconds: seconds) }
            return value
        }
    }

    private struct ControlTimeout: Error, CustomStringConvertible {
        let seconds: Double
        var description: String { "no answer within \(seconds) s" }
    }
}
