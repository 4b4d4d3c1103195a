import struct Foundation.Data
import MeshWire

/// The 16-byte identity of a routed packet, chosen by its origin (random, or derived from an
/// advert's origin and sequence). Relays remember it to drop duplicates.
public struct PacketID: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes in a packet id.
    public static let byteCount = 16

    /// The first 8 bytes, big-endian.
    public var high: UInt64
    /// The last 8 bytes, big-endian.
    public var low: UInt64

    /// Creates a packet id from its two halves.
    /// - Parameters:
    ///   - high: the first 8 bytes, big-endian.
    ///   - low: the last 8 bytes, big-endian.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a packet id from 16 bytes.
    /// - Parameter bytes: the bytes; `nil` unless there are exactly 16.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The id of the advert packet carrying `origin`'s advert number `sequence`: the first 8 bytes
    /// of the node id followed by the sequence.
    /// - Parameters:
    ///   - origin: the advert's origin.
    ///   - sequence: its sequence number.
    /// - Returns: the packet id.
    public static func advert(origin: NodeID, sequence: UInt64) -> PacketID {
        PacketID(high: origin.bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, low: sequence)
    }

    /// The 16 bytes.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// 32 lowercase hex digits.
    public var description: String {
        bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }
}

/// One neighbour listed in a ``LinkStateAdvert``.
public struct AdvertNeighbor: Sendable, Hashable {
    /// The neighbour.
    public var id: NodeID
    /// The latency the advert's origin measured to it, in microseconds.
    public var latencyMicros: UInt32

    /// Creates an entry.
    /// - Parameters:
    ///   - id: the neighbour.
    ///   - latencyMicros: the measured latency in microseconds.
    public init(id: NodeID, latencyMicros: UInt32) {
        self.id = id
        self.latencyMicros = latencyMicros
    }
}

/// A node's link-state advert: who its neighbours are, flooded to every node (ROUTING-SPEC §3).
///
/// The router builds its own adverts and reads received ones; ``attachment`` is opaque to it. The
/// layer above puts the signed wire form there (``Router`` calls its `signAdvert` closure) and
/// verifies it before handing a received advert to the router.
public struct LinkStateAdvert: Sendable, Hashable {
    /// The node the advert describes.
    public var origin: NodeID
    /// Its sequence number: a higher one replaces a lower one.
    public var sequence: UInt64
    /// The origin's neighbours, ordered by node id in the adverts this package builds.
    public var neighbors: [AdvertNeighbor]
    /// Opaque bytes for the layer above (the signed advert); never interpreted by the router.
    public var attachment: Data

    /// Creates an advert.
    /// - Parameters:
    ///   - origin: the described node.
    ///   - sequence: the sequence number.
    ///   - neighbors: its neighbours with their latencies.
    ///   - attachment: opaque bytes for the layer above.
    public init(origin: NodeID, sequence: UInt64, neighbors: [AdvertNeighbor], attachment: Data = Data()) {
        self.origin = origin
        self.sequence = sequence
        self.neighbors = neighbors
        self.attachment = attachment
    }
}

/// A packet routed through the mesh hop by hop (ROUTING-SPEC §2).
///
/// Relays change only ``hopLimit`` and ``hops``; the rest is the origin's.
public struct RoutedPacket: Sendable, Hashable {
    /// What a packet is.
    public enum Kind: Sendable, Hashable {
        /// A link-state advert; always flooded, with hop limit ``RoutingConfiguration/maxHopLimit``.
        case advert(LinkStateAdvert)
        /// For every node within the hop limit.
        case broadcast
        /// For one node, forwarded along shortest paths.
        case unicast(destination: NodeID)
    }

    /// The node that created the packet.
    public var origin: NodeID
    /// The origin's id for the packet, used to drop duplicates.
    public var packetID: PacketID
    /// Transmissions still allowed, counting the one that brings the packet to the next node: a
    /// node that receives a packet with hop limit 1 does not forward it.
    public var hopLimit: UInt8
    /// Relays the packet has passed (0 when it comes straight from its origin).
    public var hops: UInt8
    /// What the packet is.
    public var kind: Kind
    /// The payload, opaque to the router (empty for adverts).
    public var payload: Data

    /// Creates a packet.
    /// - Parameters:
    ///   - origin: the creating node.
    ///   - packetID: its id.
    ///   - hopLimit: transmissions allowed.
    ///   - hops: relays passed.
    ///   - kind: what it is.
    ///   - payload: opaque bytes.
    public init(origin: NodeID, packetID: PacketID, hopLimit: UInt8, hops: UInt8 = 0, kind: Kind, payload: Data = Data()) {
        self.origin = origin
        self.packetID = packetID
        self.hopLimit = hopLimit
        self.hops = hops
        self.kind = kind
        self.payload = payload
    }

    /// The copy a relay sends on: one hop limit less (a limit above
    /// ``RoutingConfiguration/maxHopLimit`` counts as that), one hop more; `nil` when the hop
    /// limit is used up.
    var relayed: RoutedPacket? {
        guard hopLimit > 1 else { return nil }
        var copy = self
        copy.hopLimit = min(hopLimit, RoutingConfiguration.maxHopLimit) - 1
        copy.hops = hops == .max ? .max : hops + 1
        return copy
    }
}
