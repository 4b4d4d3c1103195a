import MeshWire

extension Session {
    // MARK: The places application's transport (PROTOCOL.md §14)

    /// The place data sets a reachable node advertises (PROTOCOL.md §14.1), as its latest verified
    /// link-state advert lists them: empty when it holds none, or no advert of it has arrived.
    ///
    /// The fields are the advertiser's claims: validate them before use.
    /// - Parameter peer: the node.
    /// - Returns: at most ``WireLimits/maxPlaceSets`` data sets.
    public func placeSets(of peer: PeerID) -> [PlaceSetPayload] { mesh.placeSets(of: peer.id) }

    /// Sends a places message to one reachable node, sealed end to end (PROTOCOL.md §13.6, §14):
    /// relays see only the routing header. There is no receipt; lookups are answered or time out.
    /// - Parameters:
    ///   - message: the message; serialized, at most ``WireLimits/maxRelayedPayload`` bytes.
    ///   - peer: a reachable node.
    /// - Throws: ``SessionError`` `payloadTooLarge`, `notReachable`.
    public func sendPlaces(_ message: PlacesPayload, to peer: PeerID) async throws(SessionError) {
        let size = message.serialized.count
        guard size <= WireLimits.maxRelayedPayload else {
            throw .payloadTooLarge(size, limit: WireLimits.maxRelayedPayload, mode: .reliable)
        }
        try await sendSealed(.places(message), to: peer)
    }

    /// Sends a places message (a pin or a withdrawal) to every node in the mesh, signed by this
    /// node (PROTOCOL.md §13.5, §14.4).
    /// - Parameter message: the message; serialized, at most ``WireLimits/maxBroadcastPayload`` bytes.
    /// - Returns: whether no neighbour was there to take it (then nothing was sent).
    /// - Throws: ``SessionError`` `payloadTooLarge`.
    @discardableResult
    public func broadcastPlaces(_ message: PlacesPayload) async throws(SessionError) -> Bool {
        let size = message.serialized.count
        guard size <= WireLimits.maxBroadcastPayload else {
            throw .payloadTooLarge(size, limit: WireLimits.maxBroadcastPayload, mode: .reliable)
        }
        let step = mesh.broadcast(.places(message), sentAt: MeshNode.nowMilliseconds)
        await perform(step)
        return step.sends.isEmpty
    }

    /// Sends an encrypted room line (``RoomKey/seal(_:origin:)``) to every node in the mesh,
    /// signed by this node (PROTOCOL.md §13.5, §15).
    /// - Parameter chat: the line; serialized, at most ``WireLimits/maxBroadcastPayload`` +
    ///   ``WireLimits/maxRoomChatOverhead`` bytes.
    /// - Returns: whether no neighbour was there to take it (then nothing was sent).
    /// - Throws: ``SessionError`` `payloadTooLarge`.
    @discardableResult
    public func broadcastRoom(_ chat: RoomChatPayload) async throws(SessionError) -> Bool {
        let size = chat.serialized.count
        let limit = WireLimits.maxBroadcastPayload + WireLimits.maxRoomChatOverhead
        guard size <= limit else {
            throw .payloadTooLarge(size, limit: limit, mode: .reliable)
        }
        let step = mesh.broadcast(.room(chat), sentAt: MeshNode.nowMilliseconds)
        await perform(step)
        return step.sends.isEmpty
    }
}
