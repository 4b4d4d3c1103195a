import struct Foundation.Data
import struct Foundation.Date

/// A message another node sent on an application channel (PROTOCOL.md §13.12).
///
/// The sender is authenticated (its signature or its sealing key proved it), but the payload is
/// whatever that node chose to send: validate it before use.
public struct ChannelMessage: Sendable {
    /// How the message travelled.
    public enum Delivery: Sendable, Hashable {
        /// Sealed end to end to this node (``MeshChannel/send(_:to:)``): only this node could read it.
        case sealed
        /// Signed by its sender and flooded to every node (``MeshChannel/broadcast(_:)``).
        case broadcast
    }

    /// The node that sent it, under the name it carried.
    public let sender: PeerID
    /// The application's bytes.
    public let payload: Data
    /// How it travelled.
    public let delivery: Delivery
    /// Hops it travelled: 1 from a neighbour.
    public let hops: Int
    /// The sender's clock when it sealed or signed this transmission.
    public let sentAt: Date

    /// Creates a message (for tests and in-memory transports).
    /// - Parameters:
    ///   - sender: the sending node.
    ///   - payload: the bytes.
    ///   - delivery: sealed or broadcast.
    ///   - hops: hops travelled, at least 1.
    ///   - sentAt: the sender's clock.
    public init(sender: PeerID, payload: Data, delivery: Delivery, hops: Int, sentAt: Date) {
        self.sender = sender
        self.payload = payload
        self.delivery = delivery
        self.hops = max(1, hops)
        self.sentAt = sentAt
    }
}
