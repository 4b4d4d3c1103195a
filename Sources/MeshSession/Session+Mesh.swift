import struct Foundation.Data
import MeshLink
import MeshRouting
import MeshWire
import Logging
import MeshTransport
import NIOConcurrencyHelpers
import NIOCore

extension Session {
    // MARK: The mesh (PROTOCOL.md §13)

    /// Every node this session can reach across the mesh, nearest first, with hop count and next hop.
    /// Neighbours (connected peers) are reachable with 1 hop once their advert has arrived.
    public var reachablePeers: [MeshRoute] { mesh.reachable }

    /// The route to a node, or `nil` when it is not reachable.
    /// - Parameter peer: the node.
    /// - Returns: its route, with the path and each link's advertised latency.
    public func route(to peer: PeerID) -> MeshRoute? { mesh.route(to: peer.id) }

    /// The mesh as this node's link-state database has it: every node's advertised links.
    public var topology: [MeshTopologyEntry] { mesh.topology }

    /// Measures the round trip to a node across the mesh (PROTOCOL.md §13.10): a sealed ping that
    /// the node answers with a sealed pong, both relayed like any sealed packet.
    /// - Parameters:
    ///   - peer: a reachable node.
    ///   - timeout: how long to wait for the pong.
    /// - Returns: the round trip, or `nil` when no pong came within `timeout` (the node answers
    ///   at most 20 pings per second).
    /// - Throws: ``SessionError`` `notReachable`.
    public func ping(_ peer: PeerID, timeout: Duration = .seconds(5)) async throws(SessionError) -> Duration? {
        let mesh = self.mesh
        let nonce = mesh.startPing()
        var ping = Meshchat_V1_Ping()
        ping.nonce = nonce
        let clock = self.clock
        let start = clock.now
        do {
            try await sendSealed(.ping(ping), to: peer)
        } catch {
            mesh.cancelPing(nonce)
            throw error
        }
        let timer = Task {
            try? await clock.sleep(for: timeout)
            mesh.cancelPing(nonce)
        }
        defer { timer.cancel() }
        return await mesh.waitForPong(nonce) ? clock.now - start : nil
    }

    /// Sends data to a node that is reachable but not connected, sealed end to end.
    ///
    /// The packet waits while the link to the first hop is above its high-water mark, as a send to a
    /// neighbour does, instead of being dropped there; the relays on the way make the link wait in
    /// turn when the sender is over their budget (PROTOCOL.md §13.11), so a bulk sender is slowed by
    /// TCP rather than losing what it sent.
    func sendRelayed(_ data: Data, to peer: PeerID) async throws(SessionError) {
        guard data.count <= WireLimits.maxRelayedPayload else {
            throw .payloadTooLarge(data.count, limit: WireLimits.maxRelayedPayload, mode: .reliable)
        }
        var payload = Meshchat_V1_Data()
        payload.payload = data
        var step = try sealedStep(.data(payload), to: peer)
        for (neighbor, routed) in step.sends {
            guard let writer = registry.withLockedValue({ $0.entries[neighbor]?.writer }) else { continue }
            let size = SecureChannel.wireSize(ofMessage: Self.estimatedSize(routed))
            // Written and flushed at once when there is room (a relayed round trip waits for no
            // queued flush); otherwise the send waits for room.
            if writer.offer(.routed(routed), size: size) { continue }
            do {
                try await writer.write(.routed(routed), size: size)
            } catch {
                logger.debug("dropped a routed packet: the link to the next hop closed", metadata: ["mesh.peer": "\(neighbor.shortHex)"])
            }
        }
        step.sends = []
        await perform(step)
    }

    func sendSealed(_ content: SealedPayload.OneOf_Content, to peer: PeerID) async throws(SessionError) {
        await perform(try sealedStep(content, to: peer))
    }

    /// Like ``sendSealed(_:to:)``, without suspending: the packet is written before it returns, so
    /// a caller that must keep its packets in order (an actor) needs no task between it and the
    /// mesh. The step's events and channel messages, which a send rarely has, are reported by a task.
    func sendSealedNow(_ content: SealedPayload.OneOf_Content, to peer: PeerID) throws(SessionError) {
        var step = try sealedStep(content, to: peer)
        transmit(step.sends)
        guard step.events.isEmpty, step.channelMessages.isEmpty else {
            step.sends = []
            Task { [step] in await self.perform(step) }
            return
        }
        armMeshTimer()
    }

    /// Seals this node's packet for `peer` and routes it (§13.6): the step to execute.
    private func sealedStep(_ content: SealedPayload.OneOf_Content, to peer: PeerID) throws(SessionError) -> MeshNode.Step {
        let step: MeshNode.Step?
        do {
            step = try mesh.sendSealed(content, to: peer.id)
        } catch {
            throw .payloadTooLarge(WireLimits.maxSealedPlaintext + 1, limit: WireLimits.maxRelayedPayload, mode: .reliable)
        }
        guard let step else { throw .notReachable(peer) }
        return step
    }

    // MARK: Executing steps

    /// The node's input for a routed packet from a neighbour's link, whichever path it came by: the
    /// step to execute, or `nil` when the packet was malformed and the link it came on is closing
    /// (only that link, with the reason logged, §13.1).
    func receivedRouted(_ routed: RoutedPayload, from node: NodeID, channel: any Channel) -> MeshNode.Step? {
        let step = mesh.received(routed, from: node)
        guard let violation = step.violation else { return step }
        logger.notice("closing a link: malformed routed packet", metadata: ["mesh.peer": "\(node)", "error": "\(violation)"])
        channel.triggerUserOutboundEvent(LinkHandler.Close(code: .protocolViolation, reason: violation), promise: nil)
        return nil
    }

    /// Writes a step's packets (never waiting, §13.2.7) and reports its events in order.
    func perform(_ step: MeshNode.Step) async {
        transmit(step.sends)
        for event in step.events {
            noteRoutes(event)
            await events.push(event)
        }
        await deliver(step.channelMessages)
        armMeshTimer()
    }

    /// Tells the resource shell when routes changed, so that its transfers pause or go on (it
    /// polls nothing). Every reachability event passes here or through a link's inbound path.
    func noteRoutes(_ event: SessionEvent) {
        guard case .reachabilityChanged = event else { return }
        Task { await resourceShell.routesChanged() }
    }

    /// Whether a sealed packet from `neighbor` that this node relays may go on, must wait for room on
    /// the link to its next hop, or is dropped (§13.11): it waits when that neighbour's relayed bytes
    /// in flight there are at their share (``LinkWriter/relayShare``); then `whenRoom` is called once
    /// they drained, and the caller holds the neighbour's link meanwhile (back-pressure on that link
    /// only; other inputs still go), for at most ``LinkWriter/relayHoldLimit``
    /// (``relayHoldExpired(_:from:)``). It is dropped while a hold of that input for that link has
    /// timed out and its bytes there have not drained to half its share.
    func relayAdmission(_ routed: RoutedPayload, from neighbor: NodeID,
                        whenRoom: @escaping @Sendable () -> Void) -> LinkWriter.RelayAdmission {
        guard let writer = relayWriter(routed, from: neighbor) else { return .now }
        return writer.relayAdmission(for: neighbor, orWhenRoom: whenRoom)
    }

    /// A hold for room (``relayAdmission(_:from:whenRoom:)``) lasted ``LinkWriter/relayHoldLimit``:
    /// the next hop drains more slowly than that input sends, so that input's packets for it are
    /// dropped (until they drained to half its share) instead of stalling everything else the input
    /// sends through this node.
    func relayHoldExpired(_ routed: RoutedPayload, from neighbor: NodeID) {
        guard let writer = relayWriter(routed, from: neighbor), let destination = try? NodeID(bytes: routed.destination),
              writer.relayHoldExpired(for: neighbor) else { return }
        logger.debug("dropping relayed packets from a neighbour: the next hop drains too slowly", metadata: [
            "mesh.from": "\(neighbor.shortHex)", "mesh.destination": "\(destination.shortHex)",
            "relay.hold_ms": "\(LinkWriter.relayHoldLimit.nanoseconds / 1_000_000)",
        ])
    }

    /// The writer of the next hop's link when `routed` is a sealed packet this node relays from
    /// `neighbor` under back-pressure (§13.11), else `nil`.
    private func relayWriter(_ routed: RoutedPayload, from neighbor: NodeID) -> LinkWriter? {
        guard configuration.routing.relayBackPressure, case .sealed? = routed.payload,
              let destination = try? NodeID(bytes: routed.destination),
              destination != mesh.identity.nodeID, let next = mesh.nextHop(to: destination), next != neighbor else { return nil }
        return registry.withLockedValue({ $0.entries[next]?.writer })
    }

    /// Writes packets to neighbours without waiting; a congested link drops them (§13.2.7), except
    /// sealed packets relayed from `source`'s link, which go within that link's share of the next
    /// hop's (``relayAdmission(_:from:whenRoom:)`` held the input until they fit, or dropped the packet).
    func transmit(_ sends: [(NodeID, RoutedPayload)], relayedFrom source: NodeID? = nil) {
        for (neighbor, routed) in sends {
            guard let writer = registry.withLockedValue({ $0.entries[neighbor]?.writer }) else { continue }
            if let source, configuration.routing.relayBackPressure, case .sealed(let sealed) = routed.payload,
               !routed.origin.elementsEqual(mesh.identity.nodeID.bytes) {
                writer.relay(.routed(routed), size: SecureChannel.wireSize(ofMessage: sealed.count + 64), from: source)
                continue
            }
            let isAdvert: Bool
            if case .linkState = routed.payload { isAdvert = true } else { isAdvert = false }
            let size = SecureChannel.wireSize(ofMessage: Self.estimatedSize(routed))
            if !writer.offer(.routed(routed), size: size, force: isAdvert) {
                logger.debug("dropped a routed packet: the link to the next hop is congested", metadata: ["mesh.peer": "\(neighbor.shortHex)"])
            }
        }
    }

    /// Keeps the end-to-end state (§19.7, §19.8): writes changed sessions to disk every second, off
    /// the event loops, and rotates the prekey when a week has passed (checked hourly). Runs until cancelled.
    func tendEndToEnd() async {
        var seconds = 0
        while !Task.isCancelled {
            do { try await sleep(for: .seconds(1)) } catch { return }
            _ = try? await Self.runBlocking { [mesh] in mesh.endToEnd.flush() }
            seconds += 1
            if seconds % 3_600 == 0 { await perform(mesh.rotatePrekeyIfDue()) }
        }
    }

    /// Makes sure the router's timer fires at its next deadline. The timer is made and replaced on
    /// the session's loop only (see ``SessionClock/sleep(for:)``): a straggling task that arms it
    /// after the loop shut down does nothing.
    ///
    /// Called after every packet: when a timer at or before the node's next deadline is armed
    /// already (the usual case), it returns without a hop to the loop, which cost an `eventfd`
    /// wake-up per packet (4 % of a receiving stream's CPU). A timer that fires meanwhile runs
    /// ``MeshNode/timerFired()``, whose step arms the next deadline again, so nothing is missed.
    func armMeshTimer() {
        guard timerLoop.inEventLoop else {
            guard let due = mesh.nextDeadline,
                  !meshTimer.withLockedValue({ $0.map { $0.due <= due } ?? false }) else { return }
            timerLoop.execute { [weak self] in self?.armMeshTimer() }
            return
        }
        guard let due = mesh.nextDeadline else { return }
        let delay = max(.zero, due - mesh.now.offset)
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        let loop = timerLoop
        meshTimer.withLockedValue { current in
            if let current, current.due <= due { return }
            current?.task.cancel()
            let task = loop.scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] in
                guard let self else { return }
                self.meshTimer.withLockedValue { $0 = nil }
                self.commandSink.yield(.meshTimer)
            }
            current = (due, task)
        }
    }

    /// About the size of a routed envelope once serialized (for back-pressure accounting only).
    private static func estimatedSize(_ routed: RoutedPayload) -> Int {
        switch routed.payload {
        case .linkState(let signed), .broadcast(let signed): signed.body.count + signed.signature.count + 64
        case .sealed(let sealed): sealed.count + 64
        case nil: 64
        }
    }
}
