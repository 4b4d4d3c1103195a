import Crypto
import struct Foundation.Data
import MeshDiscovery
import MeshLink
import MeshPlaces
import MeshRouting
import MeshSession
import MeshWire

extension MeshFuzz {
    /// A routed packet from a neighbour (§13.1), as it arrives: header checks, then signatures and
    /// sealing refuse what random bytes carry.
    @Sendable static func fuzzRouted(_ bytes: [UInt8]) {
        guard let routed = try? RoutedPayload(decoding: Data(bytes), what: "routed packet") else { return }
        _ = FuzzKeys.node().received(routed, from: FuzzKeys.neighbour.identity.nodeID)
    }

    /// A link-state advert (§13.2) with hostile contents but a valid signature, from the neighbour
    /// and relayed by it from a node behind; its channel 3 attachment's data sets are validated
    /// as the places app does (§14.1).
    @Sendable static func fuzzAdvert(_ bytes: [UInt8]) {
        guard let advert = try? LinkStatePayload(decoding: Data(bytes), what: "link state") else { return }
        for attachment in advert.attachments where attachment.channel == ChannelID.places.rawValue {
            let sets = PlaceSetInfo.sets(fromAttachment: attachment.data)
            precondition(sets.count <= PlacesLimits.maxPlaceSets, "more place sets than the limit")
            for info in sets {
                precondition((try? PlaceSetInfo(validating: info.payload)) == info, "a place set does not survive a round trip")
            }
        }
        let node = FuzzKeys.node()
        for origin in [FuzzKeys.neighbour, FuzzKeys.far] {
            var routed = RoutedPayload()
            routed.origin = Data(origin.identity.nodeID.bytes)
            routed.packetID = Data(PacketID.advert(origin: origin.identity.nodeID, sequence: advert.sequence).bytes)
            routed.hopLimit = 7
            routed.hops = origin.identity.nodeID == FuzzKeys.neighbour.identity.nodeID ? 0 : 1
            routed.linkState = MeshSigning.signLinkState(advert, identity: origin.identity)
            _ = node.received(routed, from: FuzzKeys.neighbour.identity.nodeID)
        }
    }

    /// A DNS-SD TXT record (§12) in its wire form (each string after a length byte): a decoded
    /// advertisement that still fits re-encodes and decodes to itself.
    @Sendable static func fuzzTXT(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var strings: [[UInt8]] = []
        while !input.isAtEnd { strings.append(input.chunk()) }
        guard let advertisement = try? Advertisement.decode(strings) else { return }
        // A key without "=" decodes to an empty value and re-encodes as "key=", one byte longer:
        // a record near the limit may not fit again (the node never re-publishes a peer's record).
        guard advertisement.txt.reduce(0, { $0 + 1 + $1.count }) <= Advertisement.maxRecordBytes else { return }
        let again = try? Advertisement.decode(advertisement.txt)
        precondition(again == advertisement, "an advertisement does not survive a round trip")
    }
}
