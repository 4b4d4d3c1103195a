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
