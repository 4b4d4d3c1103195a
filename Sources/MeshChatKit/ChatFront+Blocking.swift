import Foundation
import MeshChat
import MeshFiles
import MeshPlaces
import MeshSession

extension ChatFront {
    /// `/block [@peer]` and `/unblock @peer`: ignore a peer's lines, private lines and pins (or stop),
    /// remembered in the store; the places service and file transfers hear of it too.
    func handleBlocking(_ command: ChatCommand) async {
        switch command {
        case .block(let target):
            do {
                if target.isEmpty {
                    emit(.blocked(try await blockedPeers()))
                    break
                }
                switch PeerLookup.match(target, in: await knownPeers(), noun: "peer", names: trust.book) {
                case .failure(let message):
                    emit(.error("/block: \(message)"))
                case .success(let peer):
                    try await messenger.block(peer)
                    try await shareBlocked()
                    emit(.blocked(try await blockedPeers()))
                }
            } catch {
                emit(.error("/block: \(error)"))
            }
        case .unblock(let target):
            do {
                let blocked = try await blockedPeers()
                switch PeerLookup.match(target, in: blocked, noun: "blocked peer") {
                case .failure(let message):
                    emit(.error("/unblock: \(message)"))
                case .success(let peer):
                    try await messenger.unblock(peer.id)
                    try await shareBlocked()
                    emit(.blocked(try await blockedPeers()))
                }
            } catch {
                emit(.error("/unblock: \(error)"))
            }
        default:
            break
        }
    }

    /// Tells the places service and file transfers which nodes are blocked (after a change).
    func shareBlocked() async throws {
        let blocked = Set(try await messenger.blocked().keys)
        await places.setBlocked(blocked)
        await files?.setBlocked(blocked)
    }

    /// The blocked peers by the names they had when blocked.
    func blockedPeers() async throws -> [PeerID] {
        try await messenger.blocked().compactMap { try? PeerID(id: $0.key, displayName: $0.value) }
            .sorted { ($0.displayName, $0.id) < ($1.displayName, $1.id) }
    }
}
