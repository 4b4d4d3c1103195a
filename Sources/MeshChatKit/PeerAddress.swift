import MeshSession

/// Where `/connect`, `--connect` and the configuration file's `connect` reach a peer: `HOST:PORT`
/// (`[IPV6]:PORT`) or a connection code, the text form of a node's nearby connection data
/// (`meshchat:…`, from its `/code`; PROTOCOL.md §4.10).
///
/// This type is thread-safe (a value).
public enum PeerAddress: Sendable, Hashable, CustomStringConvertible {
    /// An address and port; any node listening there is accepted.
    case hostPort(host: String, port: Int)
    /// A connection code: its addresses in order, and only the node it names.
    case code(NearbyConnectionData)

    /// Parses `HOST:PORT`, `[IPV6]:PORT` or a connection code (any text starting with `meshchat:`).
    /// - Parameter text: untrusted text.
    /// - Returns: the address.
    /// - Throws: ``HostPort/ParseError`` naming what was wrong.
    public static func parse(_ text: String) throws(HostPort.ParseError) -> PeerAddress {
        guard NearbyConnectionData.isConnectionText(text) else {
            let (host, port) = try HostPort.parse(text)
            return .hostPort(host: host, port: port)
        }
        do {
            return .code(try NearbyConnectionData(text: text))
        } catch {
            throw HostPort.ParseError(message: "not a valid connection code: \(error.message)")
        }
    }

    /// The address the link is kept under (a code's first address), as `/disconnect` takes it.
    public var kept: (host: String, port: Int) {
        switch self {
        case .hostPort(let host, let port): (host, port)
        case .code(let data): (data.addresses[0], data.port)
        }
    }

    /// Opens the link and keeps it (redialled whenever it is down).
    /// - Parameter session: the session.
    public func keep(in session: Session) {
        switch self {
        case .hostPort(let host, let port): session.connect(host: host, port: port, redial: true)
        case .code(let data): session.connectPeer(withNearbyConnectionData: data, redial: true)
        }
    }

    /// `HOST:PORT`, or `node ID at HOST:PORT` for a code.
    public var description: String {
        switch self {
        case .hostPort(let host, let port): Session.format(host: host, port: port)
        case .code(let data): "node \(data.nodeID.shortHex) at \(Session.format(host: data.addresses[0], port: data.port))"
        }
    }
}
