import Logging
import MeshDiscovery
import NIOConcurrencyHelpers

/// The backend of an advertiser or browser: the caller's, or avahi-daemon connected on first use
/// (so that creating an advertiser or browser never fails for want of a daemon; starting it does,
/// as an event). This type is thread-safe.
final class LazyDiscoveryBackend: Sendable {
    private let backend: NIOLockedValueBox<(any DiscoveryBackend)?>
    private let logger: Logger

    init(_ backend: (any DiscoveryBackend)?, logger: Logger) {
        self.backend = NIOLockedValueBox(backend)
        self.logger = logger
    }

    /// The backend, connecting to avahi-daemon the first time when none was given.
    /// - Throws: ``DiscoveryError`` `daemonNotRunning` when avahi-daemon cannot be reached.
    func get() throws(DiscoveryError) -> any DiscoveryBackend {
        let result: Result<any DiscoveryBackend, DiscoveryError> = backend.withLockedValue { backend in
            if let backend { return .success(backend) }
            do throws(DiscoveryError) {
                let created = try AvahiDiscovery(logger: logger)
                backend = created
                return .success(created)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
