import struct Foundation.Data
import MeshLink
import MeshWire

extension HostilePeer {
    /// The floods a hostile neighbour sends at full speed (PROTOCOL.md §13.11 bounds what each costs
    /// the victim).
    public enum Flood: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Sealed packets for the victim that never open.
        case sealedForVictim
        /// Sealed packets for another node (`relayTo`): the victim relays them; they never open there.
        case sealedRelayed
        /// Valid adverts of this peer, each with a higher sequence.
        case adverts
        /// Valid adverts inventing ``inventedNodes`` nodes, more than a database holds (§13.2.10),
        /// chained to each other and to this peer so that all are reachable.
        case inventedNodes

        /// The name, as in tables and test names.
        public var description: String { rawValue }
    }

    /// How many nodes ``Flood/inventedNodes`` invents: more than the 1,024 a database holds.
    public static let inventedNodes = 1_100

    /// Sends `count` packets of a flood as fast as the link takes them.
    /// - Parameters:
    ///   - kind: the flood.
    ///   - count: how many packets.
    ///   - relayTo: the destination of ``Flood/sealedRelayed`` packets.
    ///   - start: the index of the first packet (a flood sent in several parts continues its
    ///     packet ids and sequences).
    /// - Returns: how many were written before the link closed (or all).
    @discardableResult
    public func flood(_ kind: Flood, count: Int, relayTo: NodeID? = nil, start: Int = 0) async -> Int {
        switch kind {
        case .sealedForVictim:
            return await flood(count) { sealedGarbage(to: victim, index: start + $0) }
        case .sealedRelayed:
            let destination = relayTo ?? victim
            return await flood(count) { sealedGarbage(to: destination, index: start + $0) }
        case .adverts:
            return await flood(count) { advert(sequence: UInt64(start + $0) + 1, neighbors: [victim]) }
        case .inventedNodes:
            let invented = inventedIdentities()
            return await flood(count) { offset in
                let index = start + offset
                let round = UInt64(index / (invented.count + 1)) + 1
                let node = index % (invented.count + 1)
                // This peer's own advert first in each round, listing the first 255 invented nodes;
                // then each invented node, listing this peer and its two chain neighbours.
                guard node > 0 else {
                    return advert(sequence: round, neighbors: [victim] + invented.prefix(255).map(\.nodeID))
                }
                let i = node - 1
                var listed = [nodeID]
                if i > 0 { listed.append(invented[i - 1].nodeID) }
                if i + 1 < invented.count { listed.append(invented[i + 1].nodeID) }
                return advert(of: invented[i], sequence: round, neighbors: listed, name: "ghost\(i)")
            }
        }
    }
}
