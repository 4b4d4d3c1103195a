import Synchronization

/// An in-memory ``DiscoveryBackend`` for tests: publications made through one instance are seen
/// by every browse of the same type on the same instance, at `address` on interface `mem0`/IPv4.
///
/// It behaves like the Avahi backend where tests rely on it: a name already published gets an
/// alternative (`alice #2`) with a ``PublishEvent/collision(name:newName:)``, a browse started
/// late sees what is already published, and ``DiscoveryHandle/stop()`` of a publication reports
/// ``BrowseEvent/removed(_:)``. Callbacks run synchronously on the caller's thread, outside locks.
/// This type is thread-safe.
public final class MemoryDiscovery: DiscoveryBackend {
    private struct Publication {
        var name: String
        var registration: ServiceRegistration
    }

    private struct State {
        var nextID = 0
        var publications: [Int: Publication] = [:]
        var browses: [Int: (type: String, onEvent: @Sendable (BrowseEvent) -> Void)] = [:]
    }

    private let state = Mutex(State())
    private let address: String

    /// Creates an empty fabric.
    /// - Parameter address: the address every publication resolves to.
    public init(address: String = "127.0.0.1") {
        self.address = address
    }

    /// Publishes; see ``DiscoveryBackend/publish(_:onEvent:)``.
    public func publish(_ registration: ServiceRegistration,
                        onEvent: @escaping @Sendable (PublishEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle {
        let (id, name, browsers) = state.withLock { state in
            var name = registration.name
            var attempt = 1
            while state.publications.values.contains(where: { $0.name == name && $0.registration.type == registration.type }) {
                attempt += 1
                name = "\(registration.name) #\(attempt)"
            }
            state.nextID += 1
            state.publications[state.nextID] = Publication(name: name, registration: registration)
            return (state.nextID, name, state.browses.values.filter { $0.type == registration.type }.map(\.onEvent))
        }
        if name != registration.name { onEvent(.collision(name: registration.name, newName: name)) }
        onEvent(.established(name: name))
        let resolved = resolution(name: name, registration: registration)
        for browser in browsers { browser(.resolved(resolved)) }
        return Handle { [weak self] in self?.withdraw(id) }
    }

    /// Browses; see ``DiscoveryBackend/browse(type:onEvent:)``.
    public func browse(type: String,
                       onEvent: @escaping @Sendable (BrowseEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle {
        let (id, existing) = state.withLock { state in
            state.nextID += 1
            state.browses[state.nextID] = (type, onEvent)
            return (state.nextID, state.publications.values.filter { $0.registration.type == type })
        }
        for publication in existing.sorted(by: { $0.name < $1.name }) {
            onEvent(.resolved(resolution(name: publication.name, registration: publication.registration)))
        }
        return Handle { [weak self] in
            _ = self?.state.withLock { $0.browses.removeValue(forKey: id) }
        }
    }

    private func withdraw(_ id: Int) {
        let (publication, browsers) = state.withLock { state in
            let publication = state.publications.removeValue(forKey: id)
            return (publication, state.browses.values.filter { $0.type == publication?.registration.type }.map(\.onEvent))
        }
        guard let publication else { return }
        for browser in browsers { browser(.removed(instance(publication.name))) }
    }

    private func instance(_ name: String) -> ServiceInstance {
        ServiceInstance(name: name, interfaceIndex: 1, interfaceName: "mem0", ipProtocol: .ipv4)
    }

    private func resolution(name: String, registration: ServiceRegistration) -> ResolvedService {
        ResolvedService(instance: instance(name), hostName: "memory.local", address: address,
                        port: registration.port, txt: registration.txt)
    }

    private final class Handle: DiscoveryHandle {
        private let action: Mutex<(@Sendable () -> Void)?>
        init(_ action: @escaping @Sendable () -> Void) { self.action = Mutex(action) }
        func stop() {
            let action = self.action.withLock { action in
                defer { action = nil }
                return action
            }
            action?()
        }
    }
}
