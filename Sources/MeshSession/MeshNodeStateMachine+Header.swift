import struct Foundation.Data
import MeshRouting
import MeshWire

extension MeshNodeStateMachine {
    // MARK: Header codec (§13.1)

    /// A routed packet's header, decoded and checked (§13.1).
    struct Header {
        var origin: NodeID
        var destination: NodeID?
        var packetID: PacketID
        var packetIDBytes: Data
        var hopLimit: UInt8
        var hops: UInt8

        func packet(kind: RoutedPacket.Kind, payload: Data) -> RoutedPacket {
            RoutedPacket(origin: origin, packetID: packetID, hopLimit: hopLimit, hops: hops, kind: kind, payload: payload)
        }
    }

    static func decodeHeader(_ routed: RoutedPayload) -> Result<Header, HeaderError> {
        guard let origin = try? NodeID(bytes: routed.origin) else {
            return .failure(HeaderError("routed packet origin has \(routed.origin.count) bytes, expected \(NodeID.byteCount)"))
        }
        var destination: NodeID?
        if !routed.destination.isEmpty {
            guard let node = try? NodeID(bytes: routed.destination) else {
                return .failure(HeaderError("routed packet destination has \(routed.destination.count) bytes, expected 0 or \(NodeID.byteCount)"))
            }
            destination = node
        }
        guard let packetID = PacketID(bytes: routed.packetID) else {
            return .failure(HeaderError("routed packet id has \(routed.packetID.count) bytes, expected \(PacketID.byteCount)"))
        }
        guard routed.hopLimit <= WireLimits.maxHopLimit, routed.hops <= WireLimits.maxHopLimit else {
            return .failure(HeaderError("routed packet hop limit \(routed.hopLimit) / hops \(routed.hops) above \(WireLimits.maxHopLimit)"))
        }
        return .success(Header(origin: origin, destination: destination, packetID: packetID, packetIDBytes: routed.packetID,
                               hopLimit: UInt8(routed.hopLimit), hops: UInt8(routed.hops)))
    }

    struct HeaderError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The copy of a received packet that a relay sends on (§13.1, §13.2.2): the packet as it came,
    /// with only `hop_limit` and `hops` taken from the router's copy. The signed or sealed part (and
    /// any field a newer peer added) is passed on as it came, without decoding or encoding it again.
    /// - Parameters:
    ///   - received: the routed packet as the neighbour sent it (its header checked, §13.1).
    ///   - packet: the router's copy to send: the same origin and packet id.
    /// - Returns: the re-framed packet, or `nil` when `packet` is not a copy of `received` (an
    ///   action for another packet, which is encoded instead).
    static func reframe(_ received: RoutedPayload, as packet: RoutedPacket) -> RoutedPayload? {
        guard PacketID(bytes: received.packetID) == packet.packetID,
              received.origin.elementsEqual(packet.origin.bytes) else { return nil }
        var routed = received
        routed.hopLimit = UInt32(packet.hopLimit)
        routed.hops = UInt32(packet.hops)
        return routed
    }

    static func encode(_ packet: RoutedPacket) -> RoutedPayload {
        var routed = RoutedPayload()
        routed.origin = Data(packet.origin.bytes)
        routed.packetID = Data(packet.packetID.bytes)
        routed.hopLimit = UInt32(packet.hopLimit)
        routed.hops = UInt32(packet.hops)
        switch packet.kind {
        case .advert(let advert):
            routed.linkState = (try? SignedPayload(decoding: advert.attachment, what: "advert")) ?? SignedPayload()
        case .broadcast:
            routed.broadcast = (try? SignedPayload(decoding: packet.payload, what: "broadcast")) ?? SignedPayload()
        case .unicast(let destination):
            routed.destination = Data(destination.bytes)
            routed.sealed = packet.payload
        }
        return routed
    }
}
