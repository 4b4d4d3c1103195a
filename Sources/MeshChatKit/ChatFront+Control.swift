import Foundation
import MeshChat
import MeshRooms
import MeshSession
import MeshStore
import Synchronization

extension ChatFront {
    /// Answers one request of the control socket (``ControlProtocol``): sends the line as a typed
    /// line, `/msg` or a line to a joined room would, shows it in the chat as sent, and replies once
    /// it is on disk.
    /// - Parameter line: the request line, without `\n` (adversarial: every field is checked).
    /// - Returns: the reply line, without `\n`.
    public func control(_ line: [UInt8]) async -> String {
        // The socket listens from before `ready`; names resolve only against the loaded name book.
        await loaded.wait()
        switch ControlProtocol.parse(line) {
        case .failure(let error): return ControlProtocol.error(error.description, code: .badRequest)
        case .success(.send(let target, let text)): return await send(text, to: target)
        }
    }

    private func send(_ text: String, to target: ControlProtocol.Target) async -> String {
        do {
            switch target {
            case .typed:
                // Where the chat's typed lines go: the peer of /query, else the active room, else everyone.
                switch await activeTarget() {
                case .peer(let peer): return try await send(text, peer: peer)
                case .room(let room): return try await send(text, room: room)
                case .mesh: break
                }
                let stored = try await messenger.send(text: text, to: nil) { stored in
                    emit(.sent(id: stored.id, text: text, to: session.connectedPeers, status: Self.sentStatus(stored)))
                }
                return ControlProtocol.stored(id: stored.id, status: Self.sentStatus(stored), to: nil, room: nil)
            case .room(let name):
                let normalized: String
                do { normalized = try RoomKey.normalizedName(name) } catch { return ControlProtocol.error("\(error)", code: .unknownRoom) }
                let joined = try await messenger.rooms().map(\.ref).filter { $0.name == normalized }
                guard let room = joined.first else { return ControlProtocol.error("you are not in \(normalized): /join it in the chat first", code: .unknownRoom) }
                guard joined.count == 1 else {
                    return ControlProtocol.error("both the public and the password room \(normalized) are joined; /join one in the chat and send without \"to\"", code: .unknownRoom)
                }
                return try await send(text, room: room)
            case .peer(let name):
                switch PeerLookup.match(name, in: await knownPeers(holding: name), noun: "peer", names: trust.book) {
                case .failure(let message):
                    return ControlProtocol.error("\(message); nothing was sent", code: .unknownPeer)
                case .success(let peer):
                    return try await send(text, peer: peer)
                }
            }
        } catch {
            return ControlProtocol.error("nothing was sent: \(error)", code: .failed)
        }
    }

    private func send(_ text: String, peer: PeerID) async throws -> String {
        let stored = try await messenger.send(text: text, to: peer) { stored in
            emit(.sent(id: stored.id, text: text, to: [peer], isPrivate: true, status: Self.sentStatus(stored)))
        }
        return ControlProtocol.stored(id: stored.id, status: Self.sentStatus(stored), to: (peer.id.hex, peer.displayName), room: nil)
    }

    private func send(_ text: String, room: RoomRef) async throws -> String {
        let stored = try await messenger.send(text: text, room: room) { stored in
            emit(.sent(id: stored.id, text: text, to: session.connectedPeers, status: Self.sentStatus(stored), room: room))
        }
        return ControlProtocol.stored(id: stored.id, status: Self.sentStatus(stored), to: nil, room: room.description)
    }
}

/// A gate that opens once and stays open: ``wait()`` returns at once after ``open()``, and
/// waits until then before it.
///
/// This type is thread-safe.
final class Latch: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Opens the gate, letting every waiter through.
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}
