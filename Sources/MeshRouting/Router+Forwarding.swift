import struct Foundation.Data
import MeshWire

/// What this node does with broadcasts from one origin under the current graph (ROUTING-SPEC §7.2).
struct BroadcastPlan: Sendable {
    /// This node's parent in the origin's shortest-path tree; `nil` when this node is not in it.
    var parent: NodeID?
    /// The neighbours whose parent in the tree is this node, or that are not in the tree.
    var children: Set<NodeID>
}

extension Router {
    // MARK: - Packets

    /// A packet arrived from a neighbour (for adverts: after the layer above verified the signature).
    ///
    /// - Adverts: a new one (higher sequence than stored) is stored, delivered and flooded to every
    ///   other neighbour; an older or equal one is a duplicate. One claiming this node as origin with
    ///   a sequence at or above the next own sequence makes this node jump past it and originate.
    /// - Broadcasts: the first copy is delivered and forwarded (see ``BroadcastStrategy``).
    /// - Unicasts: delivered when addressed to this node, else forwarded to the next hop.
    /// - Parameters:
    ///   - packet: the packet.
    ///   - neighbor: the neighbour it came from.
    ///   - now: the current time.
    /// - Returns: the actions.
    public mutating func received(_ packet: RoutedPacket, from neighbor: NodeID, now: RouterInstant) -> [RouterAction] {
        switch packet.kind {
        case .advert(let advert):
            return receivedAdvert(advert, in: packet, from: neighbor, now: now)
        case .broadcast:
            guard duplicates.insert(.packet(packet.packetID), now: now) else { return [.dropped(packet, .duplicate)] }
            var actions: [RouterAction] = [.deliver(packet)]
            if let relayed = packet.relayed {
                for target in broadcastTargets(origin: packet.origin, from: neighbor, now: now) {
                    actions.append(.send(relayed, to: target))
                }
            }
            return actions
        case .unicast(let destination):
            guard duplicates.insert(.packet(packet.packetID), now: now) else { return [.dropped(packet, .duplicate)] }
            if destination == localNode { return [.deliver(packet)] }
            guard let relayed = packet.relayed else { return [.dropped(packet, .hopLimitReached)] }
            guard let route = routes[destination] else { return [.dropped(packet, .noRoute)] }
            guard route.nextHop != neighbor else { return [.dropped(packet, .routingLoop)] }
            return [.send(relayed, to: route.nextHop)]
        }
    }

    /// Sends a broadcast to every node within ``RoutingConfiguration/hopLimit`` hops.
    /// - Parameters:
    ///   - payload: opaque bytes.
    ///   - packetID: a fresh random id.
    ///   - now: the current time.
    /// - Returns: a send to every neighbour (none without neighbours).
    public mutating func broadcast(payload: Data, packetID: PacketID, now: RouterInstant) -> [RouterAction] {
        let packet = RoutedPacket(
            origin: localNode, packetID: packetID, hopLimit: configuration.hopLimit, kind: .broadcast, payload: payload
        )
        _ = duplicates.insert(.packet(packetID), now: now)
        return live.keys.sorted().map { .send(packet, to: $0) }
    }

    /// Sends a unicast along the shortest path.
    /// - Parameters:
    ///   - payload: opaque bytes.
    ///   - destination: the node it is for.
    ///   - packetID: a fresh random id.
    ///   - now: the current time.
    /// - Returns: ``UnicastOutcome/sent(_:)`` with a send to the next hop (a delivery when the
    ///   destination is this node), or ``UnicastOutcome/noRoute`` when the destination is
    ///   unreachable or further than ``RoutingConfiguration/hopLimit`` hops.
    public mutating func unicast(payload: Data, to destination: NodeID, packetID: PacketID, now: RouterInstant) -> UnicastOutcome {
        let packet = RoutedPacket(
            origin: localNode, packetID: packetID, hopLimit: configuration.hopLimit,
            kind: .unicast(destination: destination), payload: payload
        )
        if destination == localNode { return .sent([.deliver(packet)]) }
        guard let route = routes[destination], route.hops <= Int(configuration.hopLimit) else { return .noRoute }
        _ = duplicates.insert(.packet(packetID), now: now)
        return .sent([.send(packet, to: route.nextHop)])
    }

    // MARK: - Adverts

    private mutating func receivedAdvert(
        _ advert: LinkStateAdvert, in packet: RoutedPacket, from neighbor: NodeID, now: RouterInstant
    ) -> [RouterAction] {
        guard advert.origin == packet.origin else { return [.dropped(packet, .invalidAdvert)] }
        if advert.origin == localNode {
            guard advert.sequence >= nextSequence else { return [.dropped(packet, .duplicate)] }
            // An advert of an earlier run of this node: jump past it so that the next own advert wins.
            nextSequence = advert.sequence &+ 1
            var actions: [RouterAction] = []
            requestAdvert(now: now, into: &actions)
            recompute(now: now, into: &actions)
            return actions
        }
        guard advert.neighbors.count <= configuration.maxNeighborsPerAdvert else { return [.dropped(packet, .tooManyNeighbors)] }
        let key = DuplicateKey.advert(advert.origin, advert.sequence)
        guard !duplicates.contains(key, now: now) else { return [.dropped(packet, .duplicate)] }
        if store.sequence(of: advert.origin) == nil, !budgets.take(.newOrigin, from: neighbor, now: now) {
            return [.dropped(packet, .overBudget(.newOrigin))]
        }
        let routes = self.routes
        switch store.offer(advert, in: packet, from: neighbor, now: now, hops: { routes[$0]?.hops }) {
        case .duplicate:
            return [.dropped(packet, .duplicate)]
        case .full:
            return [.dropped(packet, .tooManyNodes)]
        case .accepted:
            _ = duplicates.insert(key, now: now)
            var actions: [RouterAction] = [.deliver(packet)]
            if let relayed = packet.relayed {
                for target in live.keys.sorted() where target != neighbor && target != advert.origin {
                    actions.append(.send(relayed, to: target))
                }
            }
            recompute(now: now, into: &actions)
            return actions
        }
    }

    // MARK: - Broadcast forwarding

    /// The neighbours a relay forwards a broadcast from `origin` to, received from `neighbor`.
    ///
    /// Flooding: every neighbour but the sender and the origin. Source tree: the neighbours whose
    /// parent in the origin's shortest-path tree is this node, plus those not in the tree; it falls
    /// back to flooding when the graph changed within ``RoutingConfiguration/broadcastSettleTime``,
    /// when this node is not in the tree, or when the packet came from a node that is not this
    /// node's parent (the sender's database disagrees with this one).
    mutating func broadcastTargets(origin: NodeID, from neighbor: NodeID, now: RouterInstant) -> [NodeID] {
        let candidates = live.keys.sorted().filter { $0 != neighbor && $0 != origin }
        guard configuration.broadcastStrategy == .sourceTree else { return candidates }
        if let changed = lastTopologyChange, now < changed + configuration.broadcastSettleTime { return candidates }
        let plan = broadcastPlan(origin: origin)
        guard let parent = plan.parent, parent == neighbor else { return candidates }
        return candidates.filter { plan.children.contains($0) }
    }

    /// The cached plan for `origin` under the current graph.
    private mutating func broadcastPlan(origin: NodeID) -> BroadcastPlan {
        if let plan = plans[origin] { return plan }
        let tree = topology.shortestPathTree(from: origin)
        let children = live.keys.filter { tree.nodes[$0] == nil || tree.parent(of: $0) == localNode }
        let plan = BroadcastPlan(parent: tree.parent(of: localNode), children: Set(children))
        if plans.count > configuration.maxNodes { plans = [:] }
        plans[origin] = plan
        return plan
    }
}
