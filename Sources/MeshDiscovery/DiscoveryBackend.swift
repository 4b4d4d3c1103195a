/// A DNS-SD service to publish: what an advertiser hands to a ``DiscoveryBackend``.
public struct ServiceRegistration: Sendable, Hashable {
    /// The instance name wanted (a backend may publish another one after a name collision).
    public var name: String
    /// The full service type, e.g. `_meshchat._tcp`.
    public var type: String
    /// The TCP port peers connect to.
    public var port: Int
    /// The TXT record's strings, each at most 255 bytes, in order.
    public var txt: [[UInt8]]

    /// Creates a registration.
    /// - Parameters:
    ///   - name: the instance name wanted.
    ///   - type: the full service type, e.g. `_meshchat._tcp`.
    ///   - port: the TCP port.
    ///   - txt: the TXT strings.
    public init(name: String, type: String, port: Int, txt: [[UInt8]]) {
        self.name = name
        self.type = type
        self.port = port
        self.txt = txt
    }
}

/// The IP protocol a service was seen and resolved on.
public enum IPProtocol: Sendable, Hashable, CustomStringConvertible {
    /// IPv4.
    case ipv4
    /// IPv6.
    case ipv6

    /// `IPv4` or `IPv6`.
    public var description: String { self == .ipv4 ? "IPv4" : "IPv6" }
}

/// One sighting of a service instance: its name on one interface and one IP protocol.
/// The same advertisement seen on two interfaces is two instances with the same name.
public struct ServiceInstance: Sendable, Hashable, CustomStringConvertible {
    /// The instance name, e.g. `alice`.
    public var name: String
    /// The interface index it was seen on.
    public var interfaceIndex: Int32
    /// The interface's name, e.g. `eth0` (empty when unknown).
    public var interfaceName: String
    /// The protocol it was browsed and resolved on.
    public var ipProtocol: IPProtocol

    /// Creates an instance.
    /// - Parameters:
    ///   - name: the instance name.
    ///   - interfaceIndex: the interface index.
    ///   - interfaceName: the interface name.
    ///   - ipProtocol: the IP protocol.
    public init(name: String, interfaceIndex: Int32, interfaceName: String, ipProtocol: IPProtocol) {
        self.name = name
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
        self.ipProtocol = ipProtocol
    }

    /// `'alice' on lo/IPv4`.
    public var description: String { "'\(name)' on \(interfaceName.isEmpty ? "if\(interfaceIndex)" : interfaceName)/\(ipProtocol)" }
}

/// A resolved instance: where to connect and its TXT record.
public struct ResolvedService: Sendable, Hashable {
    /// Which sighting this is.
    public var instance: ServiceInstance
    /// The host's mDNS name, e.g. `laptop.local`.
    public var hostName: String
    /// The address as text: `192.0.2.7`, `2001:db8::7`, or `fe80::1%eth0` (a link-local IPv6
    /// address always carries its interface scope so that it can be connected to).
    public var address: String
    /// The TCP port.
    public var port: Int
    /// The TXT record's strings as received (untrusted bytes), in order.
    public var txt: [[UInt8]]

    /// Creates a resolved service.
    /// - Parameters:
    ///   - instance: the sighting.
    ///   - hostName: the host's mDNS name.
    ///   - address: the address as text.
    ///   - port: the TCP port.
    ///   - txt: the TXT strings.
    public init(instance: ServiceInstance, hostName: String, address: String, port: Int, txt: [[UInt8]]) {
        self.instance = instance
        self.hostName = hostName
        self.address = address
        self.port = port
        self.txt = txt
    }
}

/// What a browse reports, in the order the backend learns it.
public enum BrowseEvent: Sendable, Hashable {
    /// An instance appeared (or changed) and was resolved.
    case resolved(ResolvedService)
    /// An instance went away (a goodbye, or its records expired).
    case removed(ServiceInstance)
    /// An instance appeared but could not be resolved (logged by the browser; no peer results).
    case resolveFailed(ServiceInstance, reason: String)
    /// The browse stopped working; no further events follow.
    case failed(DiscoveryError)
}

/// What a publication reports.
public enum PublishEvent: Sendable, Hashable {
    /// The service is announced under this name (after probing; after a collision, under an
    /// alternative name such as `alice #2`). May be reported again after a rename.
    case established(name: String)
    /// The name collided with another service; the backend retries under `newName`.
    case collision(name: String, newName: String)
    /// The publication stopped working; no further events follow.
    case failed(DiscoveryError)
}

/// A running publication or browse; ``stop()`` withdraws it. Idempotent and thread-safe.
public protocol DiscoveryHandle: Sendable {
    /// Withdraws the advertisement or ends the browse; no callbacks run after it returns.
    func stop()
}

/// The DNS-SD operations discovery needs: implemented over avahi-daemon (``AvahiDiscovery``)
/// and in memory for tests (``MemoryDiscovery``).
///
/// Callbacks may run on any thread (Avahi's poll thread) and must return quickly; they are
/// never called after the handle's ``DiscoveryHandle/stop()`` returns.
public protocol DiscoveryBackend: Sendable {
    /// Publishes a service.
    /// - Parameters:
    ///   - registration: what to publish.
    ///   - onEvent: called with each ``PublishEvent``.
    /// - Returns: the handle that withdraws it.
    /// - Throws: ``DiscoveryError`` when the publication cannot even be attempted (no daemon,
    ///   invalid name or TXT).
    func publish(_ registration: ServiceRegistration,
                 onEvent: @escaping @Sendable (PublishEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle

    /// Browses for services of a type on every interface and protocol, resolving each instance
    /// on the interface and protocol it was seen on.
    /// - Parameters:
    ///   - type: the full service type, e.g. `_meshchat._tcp`.
    ///   - onEvent: called with each ``BrowseEvent``.
    /// - Returns: the handle that ends the browse.
    /// - Throws: ``DiscoveryError`` when the browse cannot be started (no daemon).
    func browse(type: String,
                onEvent: @escaping @Sendable (BrowseEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle
}
