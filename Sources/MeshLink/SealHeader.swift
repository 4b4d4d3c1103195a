import struct Foundation.Data
import MeshWire

/// The routing-header fields a sealed packet is bound to (PROTOCOL.md §13.6, §19.6).
///
/// They are authenticated with the packet (``RatchetSealing/context(_:)``), so a relay that changes
/// the origin, the destination or the packet id makes the packet fail to open; the hop fields stay
/// outside so relays can update them.
public struct SealHeader: Sendable, Hashable {
    /// The sender's node id (`Routed.origin`).
    public var origin: NodeID
    /// The recipient's node id (`Routed.destination`).
    public var destination: NodeID
    /// The packet id (`Routed.packet_id`, 16 bytes).
    public var packetID: Data

    /// Creates a header.
    /// - Parameters:
    ///   - origin: the sender's node id.
    ///   - destination: the recipient's node id.
    ///   - packetID: the packet id.
    public init(origin: NodeID, destination: NodeID, packetID: Data) {
        self.origin = origin
        self.destination = destination
        self.packetID = packetID
    }
}
