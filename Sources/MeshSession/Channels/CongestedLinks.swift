import MeshTransport

/// The links that refused a shell's packets (``Session/ChannelSend/congested(_:)``), each asked
/// once to say when it has room again (``LinkWriter/whenRoom(_:)``). A value an actor shell keeps
/// (the stream and resource shells).
struct CongestedLinks {
    private var waiting: Set<ObjectIdentifier> = []

    /// Asks `writer` to call `wake` with the link's identity once it has room (or closed), unless
    /// it was asked already and has not called yet.
    mutating func wait(for writer: LinkWriter, wake: @escaping @Sendable (ObjectIdentifier) -> Void) {
        let link = ObjectIdentifier(writer)
        guard waiting.insert(link).inserted else { return }
        writer.whenRoom { wake(link) }
    }

    /// What a send's outcome means for the shell: `true` when the packet left; `false` when the
    /// link was congested, and then `wake` is called once it has room (``wait(for:wake:)``).
    mutating func sent(_ outcome: Session.ChannelSend, wake: @escaping @Sendable (ObjectIdentifier) -> Void) -> Bool {
        guard case .congested(let writer) = outcome else { return true }
        wait(for: writer, wake: wake)
        return false
    }

    /// The link called: it may be asked again.
    mutating func roomArrived(_ link: ObjectIdentifier) { waiting.remove(link) }
}

/// The links that keep a shell's packets until it flushes them (``Session/ChannelSend/kept(_:)``):
/// a value an actor shell keeps, flushed at the end of each of its turns, so that what one turn
/// sends reaches each link's loop in one hop and leaves in one write.
struct KeptSends {
    private var writers: [ObjectIdentifier: LinkWriter] = [:]

    /// Notes a send's outcome: a kept packet's writer is flushed by ``flush()``.
    mutating func note(_ outcome: Session.ChannelSend) {
        guard case .kept(let writer) = outcome else { return }
        writers[ObjectIdentifier(writer)] = writer
    }

    /// Hands every kept packet to its link.
    mutating func flush() {
        guard !writers.isEmpty else { return }
        for writer in writers.values { writer.flushOffers() }
        writers.removeAll(keepingCapacity: true)
    }
}
