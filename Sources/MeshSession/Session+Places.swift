import MeshWire

extension Session {
    // MARK: The file transfer application's transport (PROTOCOL.md §16)

    /// Sends a file transfer message to one reachable node, sealed end to end (PROTOCOL.md §13.6,
    /// §16): relays see only the routing header and the packet's size.
    /// - Parameters:
    ///   - message: the message; serialized, at most ``WireLimits/maxRelayedPayload`` bytes.
    ///   - peer: a reachable node.
    /// - Throws: ``SessionError`` `payloadTooLarge`, `notReachable`.
    public func sendFile(_ message: FileTransferPayload, to peer: PeerID) async throws(SessionError) {
        let size = message.serialized.count
        guard size <= WireLimits.maxRelayedPayload else {
            throw .payloadTooLarge(size, limit: WireLimits.maxRelayedPayload, mode: .reliable)
        }
        try await sendSealed(.file(message), to: peer)
    }
}
