import Foundation
import MeshLink
import MeshMessaging
import MeshStore
import MeshTransport

extension ChatFront {
    /// The setting under which the room typed lines go to is remembered.
    static let activeRoomKey = "chat.room"

    /// The room typed lines go to (remembered across restarts), or `nil` for the whole mesh.
    /// Read from the store once per run; `/join` and `/leave` keep the copy in memory current.
    func activeRoom() async -> String? {
        if let known = memory.activeRoom { return known }
        let store = messenger.store
        var active: String?
        if let name = try? await EventLoops.runBlocking({ try store.setting(Self.activeRoomKey) }),
           (try? await messenger.rooms().map(\.name))?.contains(name) == true {
            // Only a room still joined (its key known) can take lines.
            active = name
        }
        memory.activeRoom = .some(active)
        return active
    }

    private func setActiveRoom(_ name: String?) async throws {
        let store = messenger.store
        try await EventLoops.runBlocking { try store.setSetting(Self.activeRoomKey, to: name) }
        memory.activeRoom = .some(name)
    }

    /// Runs `/join`, `/leave` and `/rooms`.
    func handleRooms(_ command: ChatCommand) async {
        do {
            switch command {
            case .join(let room, let password):
                // scrypt takes about 0.1 s and 32 MiB: off the event loops.
                let key = try await EventLoops.runBlocking { try RoomKey(name: room, password: password) }
                try await messenger.join(key)
                try await setActiveRoom(key.name)
                emit(.joined(room: key.name, hasPassword: key.hasPassword))
            case .leave(let named):
                let active = await activeRoom()
                let name: String
                if let named {
                    name = try RoomKey.normalizedName(named)
                } else {
                    guard let active else { emit(.error("/leave: you are in no room; your lines go to everyone")); return }
                    name = active
                }
                guard try await messenger.leave(name) else { emit(.error("/leave: you are not in \(name)")); return }
                if active == name { try await setActiveRoom(nil) }
                emit(.left(room: name, now: await activeRoom()))
            case .rooms:
                emit(.rooms(try await messenger.rooms().map(\.name), active: await activeRoom()))
            default:
                break
            }
        } catch let error as EndToEndError {
            emit(.error("\(Self.commandName(command)): \(error.message)"))
        } catch {
            emit(.error("\(Self.commandName(command)): \(error)"))
        }
    }

    private static func commandName(_ command: ChatCommand) -> String {
        switch command {
        case .join: "/join"
        case .leave: "/leave"
        default: "/rooms"
        }
    }
}
