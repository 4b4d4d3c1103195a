import Foundation
import MeshChat
import MeshRooms
import MeshStore
import MeshTransport

extension ChatFront {
    /// The setting under which the room typed lines go to is remembered (``MeshStore/RoomRef/storageKey``).
    static let activeRoomKey = "chat.room"

    /// The prompt of the input line: where typed lines go, `[#dev] > `, `[#dev 🔒] > ` (the
    /// password room of that name), `[@bob] > ` (`/query`) or `[mesh] > ` (everyone).
    /// - Parameter target: where typed lines go.
    /// - Returns: the prompt.
    public static func prompt(for target: ChatTarget) -> String {
        Conversations.prompt(for: target)
    }

    /// The room typed lines go to (remembered across restarts), or `nil` for the whole mesh.
    /// Read from the store once per run; `/join` and `/leave` keep the copy in memory current.
    func activeRoom() async -> RoomRef? {
        if let known = memory.activeRoom { return known }
        let store = messenger.store
        var active: RoomRef?
        if let key = try? await EventLoops.runBlocking({ try store.setting(Self.activeRoomKey) }),
           (try? await messenger.rooms().map(\.ref))?.contains(RoomRef(storageKey: key)) == true {
            // Only a room still joined (its key known) can take lines.
            active = RoomRef(storageKey: key)
        }
        memory.activeRoom = .some(active)
        return active
    }

    private func setActiveRoom(_ room: RoomRef?) async throws {
        try await setTarget(room.map(ChatTarget.room) ?? .mesh)
    }

    /// Runs `/join`, `/leave` and `/rooms`.
    ///
    /// `/join #dev` goes back to a room of that name already joined, with its key: the password
    /// room when it is the only one (a line typed after it never goes out readable by anyone);
    /// when both the public and the password `#dev` are joined it asks which (`--public`,
    /// `--password`). Otherwise it joins the public room.
    func handleRooms(_ command: ChatCommand) async {
        do {
            switch command {
            case .join(let room, let password, let choice):
                let name = try RoomKey.normalizedName(room)
                let joined = try await messenger.rooms().map(\.ref).filter { $0.name == name }
                let target: RoomRef
                if password != nil || choice == .publicRoom {
                    // scrypt takes about 0.1 s and 32 MiB: off the event loops.
                    let key = try await EventLoops.runBlocking { try RoomKey(name: name, password: password) }
                    try await messenger.join(key)
                    target = RoomRef(name: key.name, hasPassword: key.hasPassword)
                } else if choice == .passwordRoom {
                    guard let known = joined.first(where: \.hasPassword) else {
                        return emit(.error("/join: you are not in the password room \(name); join it with /join \(name) PASSWORD"))
                    }
                    target = known
                } else if joined.count > 1 {
                    return emit(.error("/join: you are in two rooms called \(name), the public \(name) and the password room \(RoomRef(name: name, hasPassword: true)); "
                                       + "say which: /join \(name) --public or /join \(name) --password"))
                } else if let known = joined.first {
                    target = known
                } else {
                    let key = try await EventLoops.runBlocking { try RoomKey(name: name) }
                    try await messenger.join(key)
                    target = RoomRef(name: key.name, hasPassword: false)
                }
                try await setActiveRoom(target)
                emit(.joined(target))
            case .leave(let named, let choice):
                let active = await activeRoom()
                let room: RoomRef
                if let named {
                    let name = try RoomKey.normalizedName(named)
                    let joined = try await messenger.rooms().map(\.ref).filter { $0.name == name }
                    let chosen = choice.map { choice in joined.filter { $0.hasPassword == (choice == .passwordRoom) } } ?? joined
                    guard chosen.count <= 1 else {
                        return emit(.error("/leave: you are in two rooms called \(name); say which: /leave \(name) --public or /leave \(name) --password"))
                    }
                    guard let only = chosen.first else { return emit(.error("/leave: you are not in \(choice == .passwordRoom ? "the password room " : "")\(name)")) }
                    room = only
                } else {
                    guard let active else { emit(.error("/leave: you are in no room; your lines go to everyone")); return }
                    room = active
                }
                guard try await messenger.leave(room) else { emit(.error("/leave: you are not in \(room)")); return }
                if active == room { try await setActiveRoom(nil) }
                memory.close(.room(room))
                emit(.buffers(memory.bufferStatus))
                emit(.left(room, now: await activeRoom()))
            case .rooms:
                emit(.rooms(try await messenger.rooms().map(\.ref), active: await activeRoom()))
            default:
                break
            }
        } catch let error as RoomError {
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
