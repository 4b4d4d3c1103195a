import NIOCore

/// Builds a link's pipeline on a new channel: the transport's own initializer, for a ``LinkFabric``.
package typealias LinkInitializer = @Sendable (any Channel) -> EventLoopFuture<LinkChannel>

/// Where a ``TCPTransport`` gets its links when they do not come from sockets: an in-memory
/// fabric in tests (`InMemoryFabric` in MeshTestSupport), so that everything above the socket
/// (the link pipeline, Noise, admission, the session, the mesh and the apps) is the real code.
///
/// The transport hands over the same channel initializer it gives its bootstraps; the fabric
/// makes channels of its own, runs the initializer on them (before they are active, as a
/// bootstrap does) and carries their bytes. Set ``TCPTransport/Settings/fabric`` to use one.
///
/// Conformers are thread-safe.
package protocol LinkFabric: Sendable {
    /// Starts accepting links at an address, like a bound listener.
    /// - Parameters:
    ///   - host: the address to listen on.
    ///   - port: the port; 0 lets the fabric choose (read it from the channel's `localAddress`).
    ///   - group: the transport's event loops.
    ///   - initialize: builds each accepted link's pipeline.
    /// - Returns: the listener, whose inbound sequence yields each accepted link.
    /// - Throws: when the address is taken.
    func listen(host: String, port: Int, group: any EventLoopGroup,
                initialize: @escaping LinkInitializer) async throws -> NIOAsyncChannel<LinkChannel, Never>

    /// Opens a link to a listener.
    /// - Parameters:
    ///   - host: the listener's address.
    ///   - port: its port.
    ///   - group: the transport's event loops.
    ///   - initialize: builds the link's pipeline.
    /// - Returns: the link, active.
    /// - Throws: when nothing listens there or the fabric has no path to it.
    func connect(host: String, port: Int, group: any EventLoopGroup,
                 initialize: @escaping LinkInitializer) async throws -> LinkChannel
}
