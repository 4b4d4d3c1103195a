import Foundation
import MeshCore

/// Which chat a message belongs to.
public enum Conversation: Sendable, Hashable {
    /// The broadcast room of the whole mesh.
    case mesh
    /// The private chat with one node.
    case direct(NodeID)
    /// A room across the mesh (PROTOCOL.md §15): a public and a password room of one name are
    /// two rooms.
    case room(RoomRef)
}

/// Which room (PROTOCOL.md §15.1): its normalised name and whether its key comes from a password.
/// A public and a password room of one name have different keys and ids, so they are different
/// rooms everywhere: in the store, in `/rooms`, in the prompt and in history. (One password room
/// per name is kept: joining it with another password replaces its key.)
public struct RoomRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The normalised name (`#lunch`).
    public var name: String
    /// Whether the key comes from a password.
    public var hasPassword: Bool

    /// Names a room.
    /// - Parameters:
    ///   - name: the normalised name.
    ///   - hasPassword: whether it is the password room of that name.
    public init(name: String, hasPassword: Bool) {
        self.name = name
        self.hasPassword = hasPassword
    }

    /// How people see it: `#lunch`, or `#lunch 🔒` for the password room.
    public var description: String { hasPassword ? name + " 🔒" : name }

    /// How the store keys it: the name, followed by `+` for the password room (`+` is never part
    /// of a name, §15.1).
    public var storageKey: String { hasPassword ? name + "+" : name }

    /// Reads a ``storageKey`` back.
    /// - Parameter storageKey: `#lunch` or `#lunch+`.
    public init(storageKey: String) {
        if storageKey.hasSuffix("+") {
            self.init(name: String(storageKey.dropLast()), hasPassword: true)
        } else {
            self.init(name: storageKey, hasPassword: false)
        }
    }

    /// By name, the public room first.
    public static func < (lhs: RoomRef, rhs: RoomRef) -> Bool {
        (lhs.name, lhs.hasPassword ? 1 : 0) < (rhs.name, rhs.hasPassword ? 1 : 0)
    }
}

/// Where a message stands.
public enum DeliveryStatus: String, Sendable, Hashable, CaseIterable {
    /// Outgoing, accepted and durable, not yet transmitted.
    case queued
    /// Outgoing, transmitted at least once (private: no receipt yet; broadcast: done).
    case sent
    /// Outgoing private message whose end-to-end receipt arrived.
    case delivered
    /// Outgoing message given up after ``StoreLimits/maxMessageAge`` without a receipt.
    case expired
    /// Incoming, delivered to the application.
    case received
}

/// A message in the chat history.
public struct StoredMessage: Sendable, Hashable {
    /// The message id: 32 lowercase hex digits (16 random bytes).
    public var id: String
    /// The chat it belongs to (for a private message, the other node).
    public var conversation: Conversation
    /// Whether this node wrote it.
    public var isOutgoing: Bool
    /// The node that wrote it.
    public var author: NodeID
    /// The author's display name when it was written.
    public var authorName: String
    /// The text.
    public var text: String
    /// When the author wrote it (the author's clock).
    public var sentAt: Date
    /// When this node recorded it (enqueued, or received).
    public var recordedAt: Date
    /// How many hops it travelled (incoming only).
    public var hops: Int?
    /// Where it stands.
    public var status: DeliveryStatus
    /// Its per-(sender → destination) sequence (private messages only).
    public var sequence: UInt64?
    /// Whether it is an action line (`/me waves`, PROTOCOL.md §17.8): shown `* author text`.
    public var isAction: Bool

    /// Creates a message value.
    /// - Parameters:
    ///   - id: the message id.
    ///   - conversation: the chat.
    ///   - isOutgoing: whether this node wrote it.
    ///   - author: the writer.
    ///   - authorName: the writer's display name.
    ///   - text: the text.
    ///   - sentAt: when it was written.
    ///   - recordedAt: when this node recorded it.
    ///   - hops: hops travelled, for incoming messages.
    ///   - status: where it stands.
    ///   - sequence: the private sequence.
    ///   - isAction: whether it is an action line.
    public init(id: String, conversation: Conversation, isOutgoing: Bool, author: NodeID, authorName: String,
                text: String, sentAt: Date, recordedAt: Date, hops: Int?, status: DeliveryStatus, sequence: UInt64?,
                isAction: Bool = false) {
        self.id = id
        self.conversation = conversation
        self.isOutgoing = isOutgoing
        self.author = author
        self.authorName = authorName
        self.text = text
        self.sentAt = sentAt
        self.recordedAt = recordedAt
        self.hops = hops
        self.status = status
        self.sequence = sequence
        self.isAction = isAction
    }
}

/// An outgoing message waiting in the outbox for its receipt (private) or for a first reachable
/// peer (broadcast).
public struct OutboxEntry: Sendable, Hashable {
    /// The message as it stands in history.
    public var message: StoredMessage
    /// The destination; `nil` for a mesh broadcast.
    public var destination: NodeID?
    /// The message's sequence: for a private message the per-destination sequence it carries on
    /// the wire; for a broadcast a local enqueue counter (not sent).
    public var sequence: UInt64
    /// How many times it was transmitted.
    public var attempts: Int
    /// When it was last transmitted.
    public var lastAttemptAt: Date?
    /// When it expires (enqueue time + ``StoreLimits/maxMessageAge``).
    public var expiresAt: Date

    /// Creates an outbox entry value.
    /// - Parameters:
    ///   - message: the message.
    ///   - destination: the destination, `nil` for a broadcast.
    ///   - sequence: the sequence.
    ///   - attempts: transmissions so far.
    ///   - lastAttemptAt: the last transmission.
    ///   - expiresAt: the expiry.
    public init(message: StoredMessage, destination: NodeID?, sequence: UInt64, attempts: Int,
                lastAttemptAt: Date?, expiresAt: Date) {
        self.message = message
        self.destination = destination
        self.sequence = sequence
        self.attempts = attempts
        self.lastAttemptAt = lastAttemptAt
        self.expiresAt = expiresAt
    }
}

/// A private message that arrived for this node, decrypted, as ``MessageStore/receive(_:now:)``
/// takes it.
public struct IncomingPrivate: Sendable, Hashable {
    /// The message id (32 hex digits).
    public var id: String
    /// The sender.
    public var from: NodeID
    /// The sender's display name.
    public var fromName: String
    /// The text.
    public var text: String
    /// When the sender wrote it (its clock).
    public var sentAt: Date
    /// Hops travelled.
    public var hops: Int?
    /// The sender's sequence for this node (1, 2, …).
    public var sequence: UInt64
    /// The lowest sequence the sender still holds undelivered for this node, or its next
    /// sequence when none.
    public var floor: UInt64
    /// Whether it is an action line (PROTOCOL.md §17.8).
    public var isAction: Bool

    /// Creates an incoming message value.
    /// - Parameters:
    ///   - id: the message id.
    ///   - from: the sender.
    ///   - fromName: the sender's display name.
    ///   - text: the text.
    ///   - sentAt: when it was written.
    ///   - hops: hops travelled.
    ///   - sequence: its sequence.
    ///   - floor: the sender's floor.
    ///   - isAction: whether it is an action line.
    public init(id: String, from: NodeID, fromName: String, text: String, sentAt: Date, hops: Int?,
                sequence: UInt64, floor: UInt64, isAction: Bool = false) {
        self.id = id
        self.from = from
        self.fromName = fromName
        self.text = text
        self.sentAt = sentAt
        self.hops = hops
        self.sequence = sequence
        self.floor = floor
        self.isAction = isAction
    }
}

/// What to do after ``MessageStore/receive(_:now:)``.
public struct ReceiveOutcome: Sendable, Hashable {
    /// Messages now deliverable to the application, in order (may include earlier held ones).
    public var deliver: [StoredMessage]
    /// Whether to send the sender a receipt: for a new message (delivered or held, both durable)
    /// and for a duplicate; not for a refused one.
    public var acknowledge: Bool
    /// Whether the id was seen before (nothing delivered).
    public var duplicate: Bool
    /// Why the message was refused (stale, malformed), or `nil`.
    public var refused: String?

    /// Creates an outcome value.
    /// - Parameters:
    ///   - deliver: deliverable messages.
    ///   - acknowledge: whether to send a receipt.
    ///   - duplicate: whether the id was seen.
    ///   - refused: why it was refused.
    public init(deliver: [StoredMessage], acknowledge: Bool, duplicate: Bool, refused: String?) {
        self.deliver = deliver
        self.acknowledge = acknowledge
        self.duplicate = duplicate
        self.refused = refused
    }
}
