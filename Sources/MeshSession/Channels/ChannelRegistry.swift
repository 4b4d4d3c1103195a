import NIOConcurrencyHelpers

/// The channels registered with a session, by wire id. Thread-safe.
final class ChannelRegistry: Sendable {
    private let channels = NIOLockedValueBox<[UInt32: MeshChannel]>([:])

    /// Adds a channel unless its id is taken.
    /// - Returns: whether it was added.
    func add(_ channel: MeshChannel) -> Bool {
        channels.withLockedValue { channels in
            guard channels[channel.id.rawValue] == nil else { return false }
            channels[channel.id.rawValue] = channel
            return true
        }
    }

    /// Removes a channel if it is the one registered under its id.
    /// - Returns: whether it was removed.
    func remove(_ channel: MeshChannel) -> Bool {
        channels.withLockedValue { channels in
            guard channels[channel.id.rawValue] === channel else { return false }
            channels[channel.id.rawValue] = nil
            return true
        }
    }

    /// The channel registered under an id.
    func channel(_ id: UInt32) -> MeshChannel? { channels.withLockedValue { $0[id] } }

    /// Removes every channel and ends their message sequences (the session disconnected).
    func closeAll() {
        let all = channels.withLockedValue { channels in
            defer { channels = [:] }
            return Array(channels.values)
        }
        for channel in all { channel.messages.finish() }
    }
}
