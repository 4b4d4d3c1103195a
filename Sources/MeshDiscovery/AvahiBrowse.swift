import CAvahi
import Logging

/// One browse for a service type through an Avahi service browser, with one resolver per
/// sighting that has not resolved yet.
///
/// A sighting is keyed by (name, interface index, protocol). On `NEW` it is resolved on that
/// interface and protocol, for an address of that protocol; the resolver stays while the
/// sighting does, so a change of the live service's TXT record or port is resolved again
/// (PROTOCOL.md §12); it is freed after `FAILURE`, or when the sighting is removed.
///
/// - Important: Used only with the poll lock held (see ``AvahiCore``).
final class AvahiBrowse: AvahiOperation {
    /// A sighting's identity.
    struct Key: Hashable {
        var name: String
        var interface: AvahiIfIndex
        var ipProtocol: AvahiProtocol
    }

    fileprivate unowned let core: AvahiCore
    private let type: String
    private let onEvent: @Sendable (BrowseEvent) -> Void
    private let logger: Logger
    private var browser: OpaquePointer?
    private var pending: [Key: AvahiResolution] = [:]
    private var finished = false

    init(core: AvahiCore, type: String, onEvent: @escaping @Sendable (BrowseEvent) -> Void) {
        self.core = core
        self.type = type
        self.onEvent = onEvent
        var logger = core.logger
        logger[metadataKey: "dns.type"] = "\(type)"
        self.logger = logger
    }

    private var operation: String { "browsing '\(type)'" }

    func start(client: OpaquePointer?, state: AvahiClientState) throws(DiscoveryError) {
        guard let client, state != AVAHI_CLIENT_CONNECTING else { return }    // browsed once the daemon is back
        try createBrowser(client)
    }

    /// Allocates the service browser on `client`.
    private func createBrowser(_ client: OpaquePointer) throws(DiscoveryError) {
        guard let browser = avahi_service_browser_new(
            client, cavahi_if_unspec(), cavahi_proto_unspec(), type, nil, AvahiLookupFlags(rawValue: 0),
            { browser, interface, ipProtocol, event, name, type, domain, _, userdata in
                guard let browser, let userdata else { return }
                let unmanaged = Unmanaged<AvahiBrowse>.fromOpaque(userdata)
                unmanaged.takeUnretainedValue().core.runCallback {
                    // Taken inside runCallback: if this is the last reference (stopped from
                    // onEvent), whatever its release frees runs as part of the callback.
                    let browse = unmanaged.takeUnretainedValue()
                    withExtendedLifetime(browse) {
                        browse.browserEvent(browser, event, interface, ipProtocol, name, type, domain)
                    }
                }
            },
            Unmanaged.passUnretained(self).toOpaque())
        else {
            throw .daemonFailure(operation, avahiErrorText(avahi_client_errno(client)))
        }
        self.browser = browser
        logger.debug("browsing")
    }

    func clientStateChanged(_ client: OpaquePointer, to state: AvahiClientState) {
        // Browsers keep working through host-name changes; a failure comes through fail(_:).
        // After the daemon came back, browse again on the new client: every service present is
        // reported anew (sightings already known update in place).
        guard !finished, browser == nil, state == AVAHI_CLIENT_S_RUNNING else { return }
        do {
            try createBrowser(client)
        } catch {
            fail(error)
        }
    }

    func suspend() {
        for resolution in pending.values {
            resolution.resolver = nil    // freed with the lost client
        }
        pending = [:]
        browser = nil
    }

    func fail(_ error: DiscoveryError) {
        guard !finished else { return }
        finished = true
        logger.warning("browse failed", metadata: ["avahi.error": "\(error)"])
        onEvent(.failed(error))
    }

    func cancel() -> Bool {
        let wasLive = !finished
        finished = true
        for resolution in pending.values {
            resolution.free()
        }
        pending = [:]
        if let browser {
            avahi_service_browser_free(browser)
            self.browser = nil
            logger.debug("stopped browsing")
        }
        return wasLive
    }

    func reportEnded(_ error: DiscoveryError) {
        onEvent(.failed(error))
    }

    // MARK: Avahi callbacks

    private func browserEvent(_ browser: OpaquePointer, _ event: AvahiBrowserEvent,
                              _ interface: AvahiIfIndex, _ ipProtocol: AvahiProtocol,
                              _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?,
                              _ domain: UnsafePointer<CChar>?) {
        guard !finished else { return }
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain else { return }
            let instance = Self.instance(String(cString: name), interface, ipProtocol)
            let key = Key(name: instance.name, interface: interface, ipProtocol: ipProtocol)
            pending.removeValue(forKey: key)?.free()
            logger.debug("service seen", metadata: Self.metadata(instance))
            let resolution = AvahiResolution(browse: self, instance: instance, key: key)
            pending[key] = resolution
            let client = avahi_service_browser_get_client(browser)
            let resolver = avahi_service_resolver_new(
                client, interface, ipProtocol, name, type, domain, ipProtocol, AvahiLookupFlags(rawValue: 0),
                { resolver, _, _, event, _, _, _, hostName, address, port, txt, _, userdata in
                    guard let resolver, let userdata else { return }
                    let unmanaged = Unmanaged<AvahiResolution>.fromOpaque(userdata)
                    unmanaged.takeUnretainedValue().browse.core.runCallback {
                        let resolution = unmanaged.takeUnretainedValue()
                        let browse = resolution.browse
                        withExtendedLifetime((browse, resolution)) {
                            browse.resolverEvent(resolution, resolver, event, hostName, address, port, txt)
                        }
                    }
                },
                Unmanaged.passUnretained(resolution).toOpaque())
            guard pending[key] === resolution else {
                return    // already answered from inside avahi_service_resolver_new
            }
            guard let resolver else {
                pending[key] = nil
                resolveFailed(instance, reason: avahiErrorText(avahi_client_errno(client)))
                return
            }
            resolution.resolver = resolver
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let instance = Self.instance(String(cString: name), interface, ipProtocol)
            let key = Key(name: instance.name, interface: interface, ipProtocol: ipProtocol)
            pending.removeValue(forKey: key)?.free()
            logger.debug("service removed", metadata: Self.metadata(instance))
            onEvent(.removed(instance))
        case AVAHI_BROWSER_FAILURE:
            fail(.daemonFailure(operation, avahiErrorText(avahi_client_errno(avahi_service_browser_get_client(browser)))))
        default:
            break    // CACHE_EXHAUSTED, ALL_FOR_NOW: a browse never ends by itself
        }
    }

    fileprivate func resolverEvent(_ resolution: AvahiResolution, _ resolver: OpaquePointer,
                                   _ event: AvahiResolverEvent, _ hostName: UnsafePointer<CChar>?,
                                   _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
                                   _ txt: UnsafeMutablePointer<AvahiStringList>?) {
        guard !finished, pending[resolution.key] === resolution else { return }
        let instance = resolution.instance
        guard event == AVAHI_RESOLVER_FOUND, let address else {
            let reason = event == AVAHI_RESOLVER_FOUND
                ? "no address in the answer"
                : avahiErrorText(avahi_client_errno(avahi_service_resolver_get_client(resolver)))
            pending[resolution.key] = nil
            resolution.resolver = nil
            avahi_service_resolver_free(resolver)
            guard !resolution.resolved else {
                // A kept resolver gave up after its service went quiet: the sighting stands
                // until the browser removes it; nothing to report.
                logger.debug("stopped following a resolved service", metadata: Self.metadata(instance))
                return
            }
            resolveFailed(instance, reason: reason)
            return
        }
        resolution.resolved = true
        let service = ResolvedService(
            instance: instance,
            hostName: hostName.map { String(cString: $0) } ?? "",
            address: Self.addressText(address, on: instance),
            port: Int(port),
            txt: Self.strings(txt))
        // The resolver is kept until the sighting is removed: it reports FOUND again when the
        // service's TXT record, port or address changes.
        var metadata = Self.metadata(instance)
        metadata["dns.address"] = "\(service.address)"
        metadata["dns.port"] = "\(service.port)"
        metadata["dns.host"] = "\(service.hostName)"
        logger.debug("service resolved", metadata: metadata)
        onEvent(.resolved(service))
    }

    private func resolveFailed(_ instance: ServiceInstance, reason: String) {
        var metadata = Self.metadata(instance)
        metadata["avahi.error"] = "\(reason)"
        logger.warning("could not resolve service", metadata: metadata)
        onEvent(.resolveFailed(instance, reason: reason))
    }

    // MARK: Conversions

    private static func instance(_ name: String, _ interface: AvahiIfIndex, _ ipProtocol: AvahiProtocol) -> ServiceInstance {
        ServiceInstance(name: name, interfaceIndex: interface, interfaceName: interfaceName(interface),
                        ipProtocol: ipProtocol == cavahi_proto_inet6() ? .ipv6 : .ipv4)
    }

    private static func metadata(_ instance: ServiceInstance) -> Logger.Metadata {
        ["dns.name": "\(instance.name)",
         "dns.interface": "\(instance.interfaceName.isEmpty ? "\(instance.interfaceIndex)" : instance.interfaceName)",
         "dns.protocol": "\(instance.ipProtocol)"]
    }

    /// The interface's name (`lo`, `eth0`), or "" when the index names none.
    static func interfaceName(_ index: AvahiIfIndex) -> String {
        let size = cavahi_interface_name_max() + 1
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
            buffer.initialize(repeating: 0)
            guard let base = buffer.baseAddress, cavahi_interface_name(index, base) != 0 else { return "" }
            return String(cString: base)
        }
    }

    /// The address as text; a link-local IPv6 address gets `%interface` so it can be connected to.
    static func addressText(_ address: UnsafePointer<AvahiAddress>, on instance: ServiceInstance) -> String {
        let size = cavahi_address_str_max() + 1
        var text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
            buffer.initialize(repeating: 0)
            guard let base = buffer.baseAddress, avahi_address_snprint(base, size, address) != nil else { return "" }
            return String(cString: base)
        }
        if cavahi_address_is_ipv6_link_local(address) != 0 {
            text += "%" + (instance.interfaceName.isEmpty ? "\(instance.interfaceIndex)" : instance.interfaceName)
        }
        return text
    }

    /// The strings of a resolver's TXT list as raw bytes, in list order (which the resolver
    /// delivers in wire order, unlike the reversed lists Avahi publishes).
    static func strings(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var strings: [[UInt8]] = []
        var node = list
        while let current = node {
            let size = avahi_string_list_get_size(current)
            if let text = avahi_string_list_get_text(current), size > 0 {
                strings.append(Array(UnsafeBufferPointer(start: text, count: size)))
            } else {
                strings.append([])
            }
            node = avahi_string_list_get_next(current)
        }
        return strings
    }
}

/// The resolver of one sighting; its address is the resolver's userdata, so it stays alive
/// (in ``AvahiBrowse``'s pending table) until the resolver is freed.
final class AvahiResolution {
    unowned let browse: AvahiBrowse
    let instance: ServiceInstance
    let key: AvahiBrowse.Key
    var resolver: OpaquePointer?
    /// Whether it resolved at least once (a later failure is then no news).
    var resolved = false

    init(browse: AvahiBrowse, instance: ServiceInstance, key: AvahiBrowse.Key) {
        self.browse = browse
        self.instance = instance
        self.key = key
    }

    /// Frees the resolver, if it still runs: no callback for it follows.
    func free() {
        if let resolver {
            avahi_service_resolver_free(resolver)
            self.resolver = nil
        }
    }
}
