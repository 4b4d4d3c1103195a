import struct Foundation.Data
@testable import MeshRouting
import MeshWire

/// Node `n`: the byte n followed by zeros, so ids order like their numbers.
func node(_ n: UInt8) -> NodeID { try! NodeID(bytes: [n] + Array(repeating: 0, count: 15)) }

/// `ms` milliseconds after the origin.
func at(ms: Int64) -> RouterInstant { RouterInstant(offset: .milliseconds(ms)) }

/// The router of node 0, sequence starting at 1, signing with "sig <sequence>".
func makeRouter(_ configuration: RoutingConfiguration = .init(), now: RouterInstant = .zero) -> Router {
    Router(localNode: node(0), configuration: configuration, initialSequence: 1, now: now) { advert in
        Data("sig \(advert.sequence)".utf8)
    }
}

/// A received advert packet from `origin` listing `neighbors` (each with `latency` µs unless given).
func advert(
    _ origin: NodeID, _ sequence: UInt64, _ neighbors: [NodeID], latency: UInt32 = 1000,
    latencies: [NodeID: UInt32] = [:], hopLimit: UInt8 = 32
) -> RoutedPacket {
    let listed = neighbors.map { AdvertNeighbor(id: $0, latencyMicros: latencies[$0] ?? latency) }
    let advert = LinkStateAdvert(origin: origin, sequence: sequence, neighbors: listed)
    return RoutedPacket(
        origin: origin, packetID: .advert(origin: origin, sequence: sequence), hopLimit: hopLimit, kind: .advert(advert)
    )
}

/// A packet id from a number.
func pid(_ n: UInt64) -> PacketID { PacketID(high: 0xabc, low: n) }

extension Array where Element == RouterAction {
    /// The sends, in order.
    var sends: [(packet: RoutedPacket, to: NodeID)] {
        compactMap { if case .send(let packet, let to) = $0 { (packet, to) } else { nil } }
    }

    /// The adverts sent (once per sequence), in order.
    var sentAdverts: [LinkStateAdvert] {
        var seen: Set<UInt64> = []
        return sends.compactMap {
            guard case .advert(let advert) = $0.packet.kind, seen.insert(advert.sequence).inserted else { return nil }
            return advert
        }
    }

    /// The neighbours a packet with this id was sent to.
    func targets(of packetID: PacketID) -> [NodeID] {
        sends.filter { $0.packet.packetID == packetID }.map(\.to)
    }

    /// Every reachability change, in order.
    var changes: [ReachabilityChange] {
        flatMap { action -> [ReachabilityChange] in
            if case .reachabilityChanged(let changes) = action { return changes }
            return []
        }
    }

    /// The number of reachability actions.
    var reachabilityActions: Int {
        filter { if case .reachabilityChanged = $0 { true } else { false } }.count
    }

    /// The drop reasons.
    var drops: [DropReason] {
        compactMap { if case .dropped(_, let reason) = $0 { reason } else { nil } }
    }

    /// The delivered packets.
    var delivered: [RoutedPacket] {
        compactMap { if case .deliver(let packet) = $0 { packet } else { nil } }
    }
}
