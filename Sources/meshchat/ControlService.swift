import Foundation
import Logging
import MeshChatKit
import MeshTransport

/// The chat's control socket, `DATA-DIR/control` (``ControlProtocol``): served while the chat
/// runs, so that `meshchat send` and other scripts send as you through the chat's node.
///
/// Only the process holding the data directory's lock starts it (the chat, after
/// ``ChatNode/start(_:logger:)``), so a socket file found there is a crashed chat's.
struct ControlService: Sendable {
    let server: LocalLineServer
    let task: Task<Void, Never>

    /// Binds the socket and serves it in the background; without it (a path too long, a
    /// directory that refuses it) the chat runs on and says why.
    /// - Parameters:
    ///   - front: answers the requests.
    ///   - directory: the data directory (its lock held).
    ///   - logger: for diagnostics.
    /// - Returns: the running service, or `nil`.
    static func start(front: ChatFront, directory: String, logger: Logger) async -> ControlService? {
        var limits = LocalLineServer.Limits()
        limits.maxLineBytes = ControlProtocol.maxRequestBytes
        limits.maxClients = ControlProtocol.maxClients
        let server: LocalLineServer
        do {
            server = try await LocalLineServer.bind(path: directory + "/" + ControlProtocol.socketName, limits: limits,
                                                    logger: Logger(label: "meshchat.control"))
        } catch {
            front.emit(.error("scripts cannot send through this chat (meshchat send beside it will refuse): \(error)"))
            return nil
        }
        logger.debug("control socket ready", metadata: ["control.path": "\(server.path)"])
        let task = Task {
            await server.run(handler: { await front.control($0) }, reject: { rejection in
                switch rejection {
                case .lineTooLong(let limit): ControlProtocol.error("the request is over \(limit) bytes; closing", code: .tooLong)
                case .tooManyClients(let limit): ControlProtocol.error("\(limit) clients are connected already; try again", code: .busy)
                }
            })
        }
        return ControlService(server: server, task: task)
    }

    /// Stops serving and removes the socket file.
    func stop() async {
        await server.close()
        await task.value
    }
}
