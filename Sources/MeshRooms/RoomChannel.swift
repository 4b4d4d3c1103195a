import struct Foundation.Data
import Logging
import MeshSession
import SwiftProtobuf

/// A line to a room as it arrived on channel 2, still sealed: only a holder of the room's key
/// reads it (``RoomKey/open(_:origin:)``).
public struct RoomLine: Sendable {
    /// The sealed line (its `room_id` says which room, to those who know it).
    public let chat: RoomChatPayload
    /// The node that signed the broadcast: bind it when opening.
    public let sender: PeerID
    /// Hops the line travelled: 1 from a neighbour.
    public let hops: Int
}

/// The rooms application's transport (PROTOCOL.md §15): room lines sealed with their room's key
/// and broadcast, signed, on ``MeshSession/ChannelID/rooms`` (channel 2, §13.12).
///
/// It registers the channel when created and owns it; storing lines and keeping the joined
/// rooms' keys is the caller's. This type is thread-safe.
public final class RoomChannel: Sendable {
    /// The registered channel.
    public let channel: MeshChannel
    private let origin: NodeID
    private let logger: Logger

    /// Registers channel 2 on a session with ``RoomLimits/channel``.
    /// - Parameters:
    ///   - session: the session.
    ///   - logger: where dropped input is logged.
    /// - Throws: ``MeshSession/SessionError`` `channelInUse` when channel 2 is registered already.
    public init(session: Session, logger: Logger) throws(SessionError) {
        self.channel = try session.register(channel: .rooms, limits: RoomLimits.channel)
        self.origin = session.peer.peerID.id
        self.logger = logger
    }

    /// Seals a line with its room's key and broadcasts it to every node (§15.2).
    /// - Parameters:
    ///   - text: the line (its `room` is the key's name; its text at most ``RoomLimits/maxTextBytes``).
    ///   - key: the room's key.
    /// - Returns: whether no neighbour was there to take it (then nothing was sent).
    /// - Throws: ``MeshSession/SessionError`` `payloadTooLarge`, `channelClosed`.
    @discardableResult
    public func send(_ text: RoomTextPayload, key: RoomKey) async throws(SessionError) -> Bool {
        // Serializing a message built in Swift cannot fail.
        try await channel.broadcast(try! key.seal(text, origin: origin).serializedData())
    }

    /// The lines other nodes broadcast on channel 2, in arrival order, still sealed. A message
    /// that is not a well-formed `RoomChat` broadcast is dropped with a logged reason. Ends when
    /// the channel closes.
    public var lines: AsyncCompactMapSequence<EventQueue<ChannelMessage>, RoomLine> {
        let logger = self.logger
        return channel.messages.compactMap { Self.line($0, logger: logger) }
    }

    /// Decodes one channel message, or drops it (logged) when it is not a room line.
    /// - Parameters:
    ///   - message: the message.
    ///   - logger: where a dropped one is logged.
    /// - Returns: the line, or `nil`.
    public static func line(_ message: ChannelMessage, logger: Logger) -> RoomLine? {
        guard message.delivery == .broadcast else {
            logger.notice("dropped a room message sent sealed: room lines are broadcast (§15.2)",
                          metadata: ["mesh.origin": "\(message.sender)"])
            return nil
        }
        do {
            return RoomLine(chat: try RoomChatPayload(serializedBytes: message.payload), sender: message.sender, hops: message.hops)
        } catch {
            logger.notice("dropped a malformed room line", metadata: ["mesh.origin": "\(message.sender)", "error": "\(error)"])
            return nil
        }
    }
}
