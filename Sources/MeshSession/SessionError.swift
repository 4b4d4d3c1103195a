/// An error from the session API.
///
/// Each error has a ``code`` for programs and a ``message`` for people that names what was wrong.
/// Two errors are equal when their codes are equal.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public enum Code: Hashable, Sendable {
        /// A display name that is empty or longer than 63 bytes.
        case invalidDisplayName
        /// The key file could not be read, written or trusted.
        case identityFile
        /// The peer is not connected (or disconnected during the send).
        case notConnected
        /// A payload above the limit of its send mode.
        case payloadTooLarge
        /// The peer has no UDP link, so unreliable sends cannot reach it.
        case noUnreliableLink
        /// The session has not been started, or was stopped.
        case notRunning
        /// The listener or UDP socket could not be bound.
        case bindFailed
        /// A malformed `HOST:PORT` address.
        case invalidAddress
        /// The node is neither connected nor reachable across the mesh (PROTOCOL.md §13.2).
        case notReachable
        /// A channel id is registered already (PROTOCOL.md §13.12).
        case channelInUse
        /// A channel id in the reserved range, or channel limits out of range.
        case invalidChannel
        /// The channel was closed, or its session is gone.
        case channelClosed
        /// The other node refused a stream, or it ended before being accepted (PROTOCOL.md §18.2).
        case streamRefused
        /// A stream name over 255 bytes, or stream limits out of range (PROTOCOL.md §18.7).
        case invalidStream
        /// Resources are off: no resource directory (``ResourceConfiguration/directory``).
        case resourcesUnavailable
        /// A resource cannot be sent: the file, its name, or a limit (PROTOCOL.md §16).
        case invalidResource
    }

    /// What kind of error this is.
    public let code: Code
    /// A sentence for people.
    public let message: String

    /// The message.
    public var description: String { message }

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    public static func == (lhs: SessionError, rhs: SessionError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    @inline(never) static func invalidDisplayName(_ problem: String) -> SessionError { .init(.invalidDisplayName, problem) }
    @inline(never) static func identityFile(_ message: String) -> SessionError { .init(.identityFile, message) }
    @inline(never) static func notConnected(_ peer: PeerID) -> SessionError {
        .init(.notConnected, "peer \(peer) is not connected")
    }
    @inline(never) static func payloadTooLarge(_ size: Int, limit: Int, mode: SendMode) -> SessionError {
        .init(.payloadTooLarge, "\(mode) payload of \(size) bytes exceeds the maximum \(limit)")
    }
    @inline(never) static func noUnreliableLink(_ peer: PeerID) -> SessionError {
        .init(.noUnreliableLink, "peer \(peer) has no UDP link (it announced no UDP port)")
    }
    @inline(never) static func notRunning() -> SessionError { .init(.notRunning, "the session is not running (call start() and run() first)") }
    @inline(never) static func bindFailed(_ what: String, _ error: any Error) -> SessionError {
        .init(.bindFailed, "could not bind \(what): \(error)")
    }
    @inline(never) static func notReachable(_ peer: PeerID) -> SessionError {
        .init(.notReachable, "\(peer) is not reachable: no route to it across the mesh")
    }
    @inline(never) static func channelInUse(_ id: ChannelID) -> SessionError {
        .init(.channelInUse, "\(id) is registered already")
    }
    @inline(never) static func invalidChannel(_ id: ChannelID, _ why: String) -> SessionError {
        .init(.invalidChannel, "cannot register \(id): \(why)")
    }
    @inline(never) static func channelClosed(_ id: ChannelID) -> SessionError {
        .init(.channelClosed, "\(id) is closed")
    }
    @inline(never) static func streamRefused(_ peer: PeerID, _ error: StreamError) -> SessionError {
        .init(.streamRefused, "\(peer) did not accept the stream: \(error.code): \(error.reason)")
    }
    @inline(never) static func invalidStream(_ why: String) -> SessionError { .init(.invalidStream, why) }
    @inline(never) static func resourcesUnavailable() -> SessionError {
        .init(.resourcesUnavailable, "resources are off: set Session.Configuration.resources.directory, or give the LocalPeer a data directory")
    }
    @inline(never) static func invalidResource(_ why: String) -> SessionError { .init(.invalidResource, why) }
    @inline(never) static func invalidAddress(_ text: String, _ why: String) -> SessionError {
        .init(.invalidAddress, "invalid address \"\(text)\": \(why)")
    }
}
