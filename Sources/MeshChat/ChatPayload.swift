import struct Foundation.Data
import struct Foundation.Date
import MeshSession
import SwiftProtobuf

/// One message of the chat application, validated (PROTOCOL.md §17): what a channel payload on
/// channel 1 carries.
public enum ChatPayload: Sendable, Hashable {
    /// A line to every node (§17.2), broadcast and signed by its author; `action` for an action
    /// line (`/me`, §17.8).
    case line(id: NodeID, text: String, sentAtMilliseconds: Int64, action: Bool = false)
    /// A private line (§17.3), sealed to one node, with its place in the author's sequence to it;
    /// `action` for an action line (`/me`, §17.8).
    case privateLine(id: NodeID, text: String, sentAtMilliseconds: Int64, sequence: UInt64, floor: UInt64, action: Bool = false)
    /// A receipt (§17.4), sealed: these private lines of the receiver's are stored on the sender.
    case receipt([NodeID])

    /// Why a channel payload is not a chat message this node accepts.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        /// What was wrong, for logs.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The channel payload of this message.
    ///
    /// A line's text must be at most ``ChatLimits/maxLineBytes`` bytes (the messenger checks
    /// before it stores a line); the payload is then at most ``MeshSession/Session/maxChannelPayload``
    /// bytes. A receipt is encoded with all its ids: send at most ``ChatLimits/maxReceiptIDs``.
    public var encoded: Data {
        var message = Meshchat_Chat_V1_ChatMessage()
        switch self {
        case .line(let id, let text, let sentAt, let action):
            var line = Meshchat_Chat_V1_Line()
            line.messageID = Data(id.bytes)
            line.text = text
            line.sentAtMs = sentAt
            line.action = action
            message.line = line
        case .privateLine(let id, let text, let sentAt, let sequence, let floor, let action):
            var line = Meshchat_Chat_V1_PrivateLine()
            line.messageID = Data(id.bytes)
            line.text = text
            line.sentAtMs = sentAt
            line.sequence = sequence
            line.floor = floor
            line.action = action
            message.privateLine = line
        case .receipt(let ids):
            var receipt = Meshchat_Chat_V1_Receipt()
            receipt.messageIds = ids.map { Data($0.bytes) }
            message.receipt = receipt
        }
        // Serializing a message built here cannot fail.
        return (try? message.serializedData()) ?? Data()
    }

    /// Reads a channel payload (untrusted): one `ChatMessage`, delivered the way its kind must be.
    ///
    /// Lines need a 16-byte id and at most ``ChatLimits/maxLineBytes`` bytes of text; a line to
    /// everyone must come broadcast, a private line and a receipt sealed. A receipt is read up to
    /// ``ChatLimits/maxReceiptIDs`` ids, and ids that are not 16 bytes are skipped (§17.4).
    /// - Parameters:
    ///   - payload: the channel payload.
    ///   - delivery: how it came.
    /// - Returns: the message, or `nil` for a `ChatMessage` with no body this node knows (a newer
    ///   peer's; ignored).
    /// - Throws: ``Invalid`` for anything else.
    public static func decode(_ payload: Data, delivery: ChannelMessage.Delivery) throws(Invalid) -> ChatPayload? {
        guard payload.count <= Session.maxChannelPayload else { throw Invalid("a payload of \(payload.count) bytes") }
        let message: Meshchat_Chat_V1_ChatMessage
        do {
            message = try Meshchat_Chat_V1_ChatMessage(serializedBytes: payload)
        } catch {
            throw Invalid("not a ChatMessage")
        }
        switch message.body {
        case .line(let line)?:
            guard delivery == .broadcast else { throw Invalid("a line to everyone that came sealed") }
            let id = try checked(id: line.messageID, text: line.text)
            return .line(id: id, text: line.text, sentAtMilliseconds: line.sentAtMs, action: line.action)
        case .privateLine(let line)?:
            guard delivery == .sealed else { throw Invalid("a private line that came broadcast") }
            let id = try checked(id: line.messageID, text: line.text)
            return .privateLine(id: id, text: line.text, sentAtMilliseconds: line.sentAtMs, sequence: line.sequence, floor: line.floor,
                                action: line.action)
        case .receipt(let receipt)?:
            guard delivery == .sealed else { throw Invalid("a receipt that came broadcast") }
            return .receipt(receipt.messageIds.prefix(ChatLimits.maxReceiptIDs).compactMap { try? NodeID(bytes: $0) })
        case nil:
            return nil
        }
    }

    private static func checked(id: Data, text: String) throws(Invalid) -> NodeID {
        guard let node = try? NodeID(bytes: id) else { throw Invalid("a message id of \(id.count) bytes") }
        guard text.utf8.count <= ChatLimits.maxLineBytes else {
            throw Invalid("a line of \(text.utf8.count) bytes (maximum \(ChatLimits.maxLineBytes))")
        }
        return node
    }

    /// Unix milliseconds of a date, clamped to `Int64` (a date from the store or the clock).
    /// - Parameter date: the date.
    /// - Returns: its milliseconds since 1970.
    public static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        if value >= 9.2e18 { return Int64.max }
        if value <= -9.2e18 { return Int64.min }
        return Int64(value)
    }

    /// The date of Unix milliseconds from the wire (any value).
    /// - Parameter milliseconds: milliseconds since 1970.
    /// - Returns: the date.
    public static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
