import MeshChat
import MeshSession
import MeshStore

extension ChatFront {
    /// Sends a typed line (or a `/me` action line) where typed lines go: the peer of `/query`,
    /// else the active room, else the mesh (``activeTarget()``).
    /// - Parameters:
    ///   - text: the line.
    ///   - action: an action line (PROTOCOL.md §17.8).
    func say(_ text: String, action: Bool) async {
        switch await activeTarget() {
        case .peer(let peer):
            await sendPrivate(text, to: peer, action: action)
        case .room(let room):
            do {
                // `sent` is said inside the send, before any receipt of the line can be shown.
                try await messenger.send(text: text, room: room, action: action) { stored in
                    emit(.sent(id: stored.id, text: text, to: session.connectedPeers, status: Self.sentStatus(stored), room: room,
                               action: action))
                }
            } catch {
                emit(.error("nothing was sent: \(error)"))
            }
        case .mesh:
            do {
                try await messenger.send(text: text, to: nil, action: action) { stored in
                    emit(.sent(id: stored.id, text: text, to: session.connectedPeers, status: Self.sentStatus(stored), action: action))
                }
            } catch {
                emit(.error("nothing was sent: \(error)"))
            }
        }
    }

    /// Sends a private line to one peer, sealed end to end, and says it was accepted.
    /// - Parameters:
    ///   - text: the line.
    ///   - peer: the destination.
    ///   - action: an action line (PROTOCOL.md §17.8).
    func sendPrivate(_ text: String, to peer: PeerID, action: Bool = false) async {
        do {
            try await messenger.send(text: text, to: peer, action: action) { stored in
                emit(.sent(id: stored.id, text: text, to: [peer], isPrivate: true, status: Self.sentStatus(stored), action: action))
            }
        } catch {
            emit(.error("nothing was sent: \(error)"))
        }
    }
}
