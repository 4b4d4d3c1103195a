import CAvahi
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// DNS-SD publishing and browsing through avahi-daemon (libavahi-client over the system D-Bus).
///
/// One instance owns one Avahi event-loop thread (`AvahiThreadedPoll`) and one client
/// connection. Publications are entry groups announced on every interface and protocol the
/// daemon uses; browses resolve each sighting on the interface and IP protocol it was seen on,
/// so that a link-local IPv6 address comes back with its `%interface` scope.
///
/// Events are delivered on Avahi's thread with its lock held: the `onEvent` closures must return
/// quickly (yield into a stream). Calling ``DiscoveryHandle/stop()`` from inside one of them is
/// allowed. When avahi-daemon goes away (it restarts, or is stopped), publications and browses
/// are suspended, not failed: the instance connects again as soon as the daemon is back
/// (libavahi-client's `AVAHI_CLIENT_NO_FAIL` waits for it on the bus) and then publishes and
/// browses again by itself (PROTOCOL.md §12). Other losses of the connection make every live
/// operation report `.failed` with code ``DiscoveryError/Code/daemonNotRunning``, and later
/// calls throw it.
///
/// The daemon is reached at `DBUS_SYSTEM_BUS_ADDRESS` when that is set (libdbus reads it).
///
/// This type is thread-safe.
public final class AvahiDiscovery: DiscoveryBackend {
    private let core: AvahiCore

    /// Connects to avahi-daemon and starts the Avahi event-loop thread.
    /// - Parameter logger: where publications, sightings (debug) and failures (warning) go.
    /// - Throws: ``DiscoveryError/Code/daemonNotRunning`` when avahi-daemon (or the system
    ///   D-Bus) does not answer; ``DiscoveryError/Code/daemonFailure`` for other failures.
    public init(logger: Logger) throws(DiscoveryError) {
        core = try AvahiCore(logger: logger)
    }

    deinit {
        core.close()
    }

    /// Withdraws every publication, ends every browse, stops the event-loop thread and closes
    /// the connection. Live handles report `.failed` with code ``DiscoveryError/Code/notRunning``
    /// (after which their ``DiscoveryHandle/stop()`` does nothing); later `publish`/`browse`
    /// calls throw that code. Idempotent; also done when the instance is released.
    ///
    /// - Important: Called from inside an `onEvent` closure (or the instance released there), it
    ///   cannot stop the thread it runs on: it then ends every operation as above and refuses
    ///   new ones, but leaves the thread and the connection open, and logs a warning.
    public func close() {
        core.close()
    }

    /// Publishes a service on every interface and protocol (see ``DiscoveryBackend``).
    ///
    /// The TXT strings are sent as given (arbitrary bytes, no `key=value` form required, no
    /// cookie added). Reports `.established` after probing, `.collision` and a later
    /// `.established` under Avahi's alternative name (`alice #2`) when the name is taken, and
    /// re-announces by itself after the daemon's host name changes. The service stays published
    /// until the handle's ``DiscoveryHandle/stop()`` or ``close()``, even if the handle is released.
    /// - Parameters:
    ///   - registration: what to publish.
    ///   - onEvent: called on Avahi's thread with each ``PublishEvent``; may already be called
    ///     (with `.collision`) before this method returns.
    /// - Returns: the handle whose ``DiscoveryHandle/stop()`` withdraws the service.
    /// - Throws: ``DiscoveryError`` when the daemon refuses the service (invalid name, type,
    ///   port or TXT string), is not running, or this instance was closed.
    public func publish(_ registration: ServiceRegistration,
                        onEvent: @escaping @Sendable (PublishEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle {
        let publication = AvahiPublication(core: core, registration: registration, onEvent: onEvent)
        return try core.start(publication, description: "publishing '\(registration.name)'")
    }

    /// Replaces the TXT record of a live publication in place: browsers see the new record
    /// (resolved again) without the service being withdrawn first (PROTOCOL.md §12.5).
    /// - Parameters:
    ///   - handle: a handle ``publish(_:onEvent:)`` of this instance returned.
    ///   - txt: the new TXT strings (each 1–255 bytes).
    /// - Throws: ``DiscoveryError`` for an invalid string, a handle of another backend or a
    ///   stopped publication, or the daemon's refusal.
    public func updateTXT(of handle: any DiscoveryHandle, to txt: [[UInt8]]) throws(DiscoveryError) {
        guard let handle = handle as? AvahiHandle, handle.core === core else {
            throw DiscoveryError(.notRunning, "not a publication of this Avahi discovery backend")
        }
        let found = try core.withAvahi { () throws(DiscoveryError) -> Bool in
            guard let publication = core.operation(handle.token) as? AvahiPublication else { return false }
            try publication.updateTXT(txt)
            return true
        }
        guard found == true else { throw DiscoveryError(.notRunning, "the publication was stopped") }
    }

    /// Browses for a service type on every interface and protocol (see ``DiscoveryBackend``).
    ///
    /// Every sighting, keyed by (name, interface, protocol), is resolved once on its own
    /// interface and protocol. Services of this host (this process's too) are reported like
    /// any other: callers filter themselves out.
    /// - Parameters:
    ///   - type: the full service type, e.g. `_meshchat._tcp`.
    ///   - onEvent: called on Avahi's thread with each ``BrowseEvent``.
    /// - Returns: the handle whose ``DiscoveryHandle/stop()`` ends the browse.
    /// - Throws: ``DiscoveryError`` when the daemon refuses the browse (invalid type), is not
    ///   running, or this instance was closed.
    public func browse(type: String,
                       onEvent: @escaping @Sendable (BrowseEvent) -> Void) throws(DiscoveryError) -> any DiscoveryHandle {
        let browse = AvahiBrowse(core: core, type: type, onEvent: onEvent)
        return try core.start(browse, description: "browsing '\(type)'")
    }
}

/// A publication or browse registered with an ``AvahiCore``.
///
/// Every method runs with exclusive access to the Avahi objects (the poll lock held, or the
/// poll thread stopped).
protocol AvahiOperation: AnyObject {
    /// Checks the request and creates the Avahi objects (later, from ``clientStateChanged(_:to:)``,
    /// while the client is still connecting); on a throw nothing is left allocated.
    func start(client: OpaquePointer?, state: AvahiClientState) throws(DiscoveryError)
    /// The client's state changed to a state other than `AVAHI_CLIENT_FAILURE` (`client` may be
    /// a new client after the daemon came back: objects missing are created on it).
    func clientStateChanged(_ client: OpaquePointer, to state: AvahiClientState)
    /// The daemon went away: forget the Avahi objects (the client frees them) without reporting
    /// anything; they are created again when a client runs.
    func suspend()
    /// Reports `.failed(error)` unless already finished; then nothing more is reported.
    func fail(_ error: DiscoveryError)
    /// Frees the Avahi objects without reporting anything.
    /// - Returns: whether the operation was still live (had not failed or been cancelled).
    func cancel() -> Bool
    /// Reports `.failed(error)` after ``cancel()`` returned true (called without any lock).
    func reportEnded(_ error: DiscoveryError)
}

/// The handle of one registered operation: ``stop()`` cancels it through the core.
final class AvahiHandle: DiscoveryHandle {
    let core: AvahiCore
    let token: UInt64

    init(core: AvahiCore, token: UInt64) {
        self.core = core
        self.token = token
    }

    func stop() {
        core.stopOperation(token)
    }
}

/// The event-loop thread, the client connection and the live operations of one
/// ``AvahiDiscovery``.
///
/// Locking: `client`, `clientState`, `failureDetail`, `operations`, `nextToken`, `defunct` and every Avahi
/// object reached through them are used only with the Avahi poll lock held — on the poll
/// thread inside a callback, where Avahi holds it, or through ``withAvahi(_:)`` from any other
/// thread — or after the poll thread has been stopped. `gate` (true once closed) orders
/// closing against callers: it is taken before the poll lock and never by a callback, and it
/// is held while the thread is stopped and the objects freed, so nothing is used after free.
/// `callbackThread` lets a call made from inside a callback (which already holds the poll
/// lock) skip both locks instead of deadlocking.
final class AvahiCore: @unchecked Sendable {
    let logger: Logger
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var clientState: AvahiClientState = AVAHI_CLIENT_CONNECTING
    private var failureDetail = ""
    private var operations: [UInt64: any AvahiOperation] = [:]
    private var nextToken: UInt64 = 0
    /// The daemon went away: a new client waits for it (operations are suspended meanwhile).
    private var reconnecting = false
    /// The timer that makes the new client (on the poll; freed with it).
    private var reconnectTimer: OpaquePointer?
    /// Closed from inside a callback: operations ended, thread and connection left running.
    private var defunct = false
    private let gate = Mutex(false)
    private let callbackThread = Atomic<UInt>(0)

    init(logger: Logger) throws(DiscoveryError) {
        // libavahi-client is loaded on first use (CAvahi's shim.c), not linked.
        if let failure = cavahi_load() {
            throw .daemonNotRunning("libavahi-client.so.3 could not be loaded: \(String(cString: failure))")
        }
        guard let poll = avahi_threaded_poll_new() else {
            throw .daemonFailure("starting the Avahi event loop", "out of memory")
        }
        self.poll = poll
        self.logger = logger

        // The callback first fires inside avahi_client_new (on this thread): it uses its own
        // client argument, never `self.client`.
        var error: Int32 = 0
        let client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(rawValue: 0), Self.clientCallback,
                                      Unmanaged.passUnretained(self).toOpaque(), &error)
        guard let client else {
            avahi_threaded_poll_free(poll)
            throw Self.connectionError(error)
        }
        self.client = client
        clientState = avahi_client_get_state(client)

        guard avahi_threaded_poll_start(poll) >= 0 else {
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            throw .daemonFailure("starting the Avahi event loop", "could not start its thread")
        }
        logger.debug("connected to avahi-daemon", metadata: ["avahi.state": "\(Self.describe(clientState))"])
    }

    /// Every client's state callback (the first fires inside `avahi_client_new`: it uses its own
    /// client argument).
    private static let clientCallback: AvahiClientCallback = { client, state, userdata in
        guard let client, let userdata else { return }
        let core = Unmanaged<AvahiCore>.fromOpaque(userdata).takeUnretainedValue()
        core.runCallback { core.clientChanged(client, to: state) }
    }

    /// The error for a failed `avahi_client_new`: unreachable daemon or bus → not running.
    private static func connectionError(_ code: Int32) -> DiscoveryError {
        var detail = avahiErrorText(code)
        if let address = getenv("DBUS_SYSTEM_BUS_ADDRESS") {
            detail += "; system bus DBUS_SYSTEM_BUS_ADDRESS=\(String(cString: address))"
        }
        switch Int(code) {
        case AVAHI_ERR_NO_DAEMON, AVAHI_ERR_DISCONNECTED, AVAHI_ERR_DBUS_ERROR:
            return .daemonNotRunning(detail)
        default:
            return .daemonFailure("connecting to avahi-daemon", detail)
        }
    }

    // MARK: Calls from any thread

    /// Runs `body` with exclusive access to the Avahi objects.
    /// - Returns: `body`'s result, or nil when the core is closed.
    func withAvahi<Result: Sendable, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        if isInCallback {
            return try body()    // this thread runs a callback: it holds the poll lock already
        }
        return try gate.withLock { (closed: inout Bool) throws(Failure) -> Result? in
            guard !closed else { return nil }
            avahi_threaded_poll_lock(poll)
            defer { avahi_threaded_poll_unlock(poll) }
            return try body()
        }
    }

    /// Starts `operation` and registers it for client-state changes.
    /// - Parameters:
    ///   - operation: a new publication or browse.
    ///   - description: e.g. `publishing 'alice'`, for the error when the core is closed.
    /// - Returns: the handle that stops it.
    func start(_ operation: some AvahiOperation, description: String) throws(DiscoveryError) -> any DiscoveryHandle {
        let token = try withAvahi { () throws(DiscoveryError) -> UInt64? in
            guard !defunct else { return nil }
            if reconnecting {
                // Registered now, started once the daemon is back (clientStateChanged).
                try operation.start(client: nil, state: AVAHI_CLIENT_CONNECTING)
            } else {
                guard let client, clientState != AVAHI_CLIENT_FAILURE else {
                    throw .daemonNotRunning(failureDetail)
                }
                try operation.start(client: client, state: clientState)
            }
            nextToken += 1
            operations[nextToken] = operation
            return nextToken
        }
        guard let token = token ?? nil else {
            throw DiscoveryError(.notRunning, "cannot start \(description): the Avahi discovery backend was closed")
        }
        return AvahiHandle(core: self, token: token)
    }

    /// The operation registered under `token` (poll lock held).
    func operation(_ token: UInt64) -> (any AvahiOperation)? {
        operations[token]
    }

    /// Cancels the operation registered under `token`, if it is still registered.
    func stopOperation(_ token: UInt64) {
        _ = withAvahi { () -> Bool in
            guard let operation = operations.removeValue(forKey: token) else { return false }
            return operation.cancel()
        }
    }

    /// Stops the poll thread, cancels every operation, frees the client and the poll, then
    /// reports `.failed(.notRunning)` to the operations that were live. Idempotent.
    func close() {
        let error = DiscoveryError(.notRunning, "the Avahi discovery backend was closed")
        if isInCallback {
            closeFromCallback(error)
            return
        }
        let ended: [any AvahiOperation] = gate.withLock { closed in
            guard !closed else { return [] }
            closed = true
            avahi_threaded_poll_stop(poll)    // joins the thread: no callback runs after this
            let live = operations.sorted { $0.key < $1.key }.map(\.value).filter { $0.cancel() }
            operations = [:]
            if let client {
                avahi_client_free(client)
            }
            client = nil
            avahi_threaded_poll_free(poll)
            return live
        }
        logger.debug("closed the avahi-daemon connection", metadata: ["avahi.operations.ended": "\(ended.count)"])
        for operation in ended {
            operation.reportEnded(error)
        }
    }

    // MARK: Calls from callbacks (poll lock held)

    /// `close()` reached from inside a callback (e.g. the last reference to the backend was
    /// released there): the poll cannot be stopped from its own thread, so withdraw and end
    /// every operation now, refuse new ones, and leave the thread and the connection running
    /// (leaked, with this core kept alive for the callbacks still to come).
    private func closeFromCallback(_ error: DiscoveryError) {
        guard !defunct else { return }
        defunct = true
        _ = Unmanaged.passRetained(self)
        let ended = operations.sorted { $0.key < $1.key }.map(\.value).filter { $0.cancel() }
        operations = [:]
        logger.warning("AvahiDiscovery was closed from inside one of its own callbacks: operations ended, but its thread and connection stay open")
        for operation in ended {
            operation.reportEnded(error)
        }
    }

    /// Runs a callback's body, marking this thread as the one holding the poll lock.
    func runCallback(_ body: () -> Void) {
        let previous = callbackThread.exchange(Self.currentThread, ordering: .relaxed)
        body()
        callbackThread.store(previous, ordering: .relaxed)
    }

    private var isInCallback: Bool {
        callbackThread.load(ordering: .relaxed) == Self.currentThread
    }

    private static var currentThread: UInt {
        UInt(pthread_self())
    }

    private func clientChanged(_ client: OpaquePointer, to state: AvahiClientState) {
        if let current = self.client, current != client { return }    // a replaced client
        clientState = state
        let live = operations.sorted { $0.key < $1.key }.map(\.value)
        let code = Int(avahi_client_errno(client))
        if state == AVAHI_CLIENT_FAILURE, code == AVAHI_ERR_DISCONNECTED || code == AVAHI_ERR_NO_DAEMON, !defunct {
            // The daemon went away (restarted): wait for it, then publish and browse again.
            failureDetail = "avahi-daemon went away and has not returned yet"
            logger.notice("avahi-daemon went away; publishing and browsing resume when it returns",
                          metadata: ["avahi.operations.suspended": "\(live.count)"])
            for operation in live {
                operation.suspend()
            }
            scheduleReconnect(afterMilliseconds: 0)
            return
        }
        if state == AVAHI_CLIENT_CONNECTING, !reconnecting, !defunct {
            // The same client waits for the daemon (NO_FAIL): its objects are gone.
            reconnecting = true
            logger.notice("avahi-daemon went away; publishing and browsing resume when it returns",
                          metadata: ["avahi.operations.suspended": "\(live.count)"])
            for operation in live {
                operation.suspend()
            }
            return
        }
        if state == AVAHI_CLIENT_S_RUNNING, reconnecting {
            reconnecting = false
            logger.notice("avahi-daemon is back; publishing and browsing again", metadata: ["avahi.operations": "\(live.count)"])
        }
        guard state != AVAHI_CLIENT_FAILURE else {
            let reason = avahiErrorText(avahi_client_errno(client))
            failureDetail = "the connection to it was lost: \(reason)"
            logger.warning("lost the connection to avahi-daemon", metadata: [
                "avahi.error": "\(reason)", "avahi.operations.failed": "\(live.count)",
            ])
            let error = DiscoveryError.daemonNotRunning(failureDetail)
            for operation in live {
                operation.fail(error)
            }
            return
        }
        logger.debug("avahi-daemon state changed", metadata: ["avahi.state": "\(Self.describe(state))"])
        for operation in live {
            operation.clientStateChanged(client, to: state)
        }
    }

    /// Arms the timer that replaces the lost client by one that waits for the daemon.
    private func scheduleReconnect(afterMilliseconds milliseconds: UInt32) {
        reconnecting = true
        guard let api = avahi_threaded_poll_get(poll) else { return }
        var when = timeval()
        avahi_elapse_time(&when, milliseconds, 0)
        if let timer = reconnectTimer {
            api.pointee.timeout_update(timer, &when)
            return
        }
        reconnectTimer = api.pointee.timeout_new(api, &when, { _, userdata in
            guard let userdata else { return }
            let core = Unmanaged<AvahiCore>.fromOpaque(userdata).takeUnretainedValue()
            core.runCallback { core.reconnect() }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Frees the lost client and makes one that waits for the daemon (`AVAHI_CLIENT_NO_FAIL`);
    /// its callback resumes the operations once it runs. Retried every second while even that
    /// fails (no system bus).
    private func reconnect() {
        guard let api = avahi_threaded_poll_get(poll) else { return }
        if let timer = reconnectTimer { api.pointee.timeout_update(timer, nil) }
        guard !defunct, reconnecting else { return }
        if let old = client {
            client = nil
            avahi_client_free(old)    // frees the suspended operations' objects too
        }
        clientState = AVAHI_CLIENT_CONNECTING
        var error: Int32 = 0
        guard let fresh = avahi_client_new(api, AVAHI_CLIENT_NO_FAIL, Self.clientCallback,
                                           Unmanaged.passUnretained(self).toOpaque(), &error) else {
            logger.debug("waiting for the system bus to reach avahi-daemon", metadata: ["avahi.error": "\(avahiErrorText(error))"])
            scheduleReconnect(afterMilliseconds: 1000)
            return
        }
        client = fresh
        clientState = avahi_client_get_state(fresh)
    }

    private static func describe(_ state: AvahiClientState) -> String {
        switch state {
        case AVAHI_CLIENT_S_REGISTERING: "registering"
        case AVAHI_CLIENT_S_RUNNING: "running"
        case AVAHI_CLIENT_S_COLLISION: "host name collision"
        case AVAHI_CLIENT_FAILURE: "failure"
        case AVAHI_CLIENT_CONNECTING: "connecting"
        default: "state \(state.rawValue)"
        }
    }
}

/// Avahi's text for an error code, e.g. `Daemon not running`.
func avahiErrorText(_ code: Int32) -> String {
    guard let text = avahi_strerror(code) else { return "Avahi error \(code)" }
    return String(cString: text)
}
