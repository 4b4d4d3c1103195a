import Logging

extension Session {
    // MARK: Resources (PROTOCOL.md §16), Multipeer's sendResource

    /// Sends a file to a peer anywhere in the mesh (Multipeer's
    /// `sendResource(at:withName:toPeer:withCompletionHandler:)`), across relays, resumable.
    ///
    /// The file is hashed (SHA-256) and the transfer recorded in the resource directory before
    /// this returns; then it is offered, and once the receiver accepts, sent in chunks sealed end
    /// to end, within a window, retransmitted on loss. The receiver checks the hash. When the peer
    /// goes out of reach the transfer pauses (``ResourceUpdate/paused``) for up to
    /// ``ResourceLimits/unreachableTimeout`` and resumes from what the receiver holds; when either
    /// side restarts on the same resource directory it resumes too (``ResourceEvent/restored(_:)``),
    /// never from the start. A file that changed meanwhile fails the transfer (`sourceFailed` on
    /// restart, `hashMismatch` at the receiver).
    /// - Parameters:
    ///   - path: an absolute path of a regular, readable file of at most ``ResourceLimits/maxSize`` bytes.
    ///   - name: the name the receiver sees (1–255 bytes of UTF-8; to the receiver it is untrusted text).
    ///   - peer: a connected or reachable peer; when it has no route now, the transfer starts paused.
    /// - Returns: the transfer: its updates and a way to cancel it.
    /// - Throws: ``SessionError`` `resourcesUnavailable` (no resource directory), `invalidResource`
    ///   (the file cannot be read, the name's length, too many transfers running); nothing is sent then.
    public func sendResource(at path: String, withName name: String, to peer: PeerID) async throws(SessionError) -> ResourceProgress {
        try await resourceShell.send(path: path, name: name, to: peer)
    }

    /// What happens to resources sent to this node: offers to answer (with
    /// ``ResourceAcceptPolicy/ask(timeout:)``), transfers started and finished, transfers restored
    /// after a restart. At most 1,024 held: read it when resources are on (more are dropped, logged).
    /// One consumer; ends after ``disconnect()``.
    public var resourceEvents: EventQueue<ResourceEvent> { resourceShell.events }

    /// Answers an offer reported as ``ResourceEvent/offered(_:)``: accepted, it starts
    /// (``ResourceEvent/startedReceiving(_:)``); refused, the sender is told (`refused`). An offer
    /// no longer waiting (answered, withdrawn or timed out) is ignored.
    /// - Parameters:
    ///   - offer: the offer.
    ///   - accept: whether to take it.
    public func answerResourceOffer(_ offer: ResourceOfferRequest, accept: Bool) async {
        await resourceShell.answer(offer, accept: accept)
    }

    /// The resource transfers running now, in both directions (outgoing first, each by name).
    public var resourceTransfers: [ResourceProgress] {
        get async { await resourceShell.running }
    }

    /// The directory resources are kept in, or `nil` when resources are off.
    public var resourceDirectory: String? { resourceShell.journal?.directory }
}
