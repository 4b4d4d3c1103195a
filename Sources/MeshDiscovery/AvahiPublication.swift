import CAvahi
import Logging

/// One service published through an Avahi entry group.
///
/// States: created (group allocated, nothing added, waiting for the client to run) → added
/// (services added and committed; `.established` follows) → on a collision renamed and added
/// again; on a host-name change (client `S_REGISTERING`/`S_COLLISION`) reset and added again
/// once the client runs; finished after a failure or ``cancel()``.
///
/// - Important: Used only with the poll lock held (see ``AvahiCore``).
final class AvahiPublication: AvahiOperation {
    /// Renames tried in one go before giving up (each `add_service` that collides locally).
    private static let maxRenames = 32

    private unowned let core: AvahiCore
    private let registration: ServiceRegistration
    private let onEvent: @Sendable (PublishEvent) -> Void
    private let logger: Logger
    private var group: OpaquePointer?
    /// The name being published: the registration's, or the last alternative after collisions.
    private var name: String
    private var added = false
    private var finished = false
    /// The TXT strings published: the registration's, or the last ``updateTXT(_:)``.
    private var txt: [[UInt8]]

    init(core: AvahiCore, registration: ServiceRegistration, onEvent: @escaping @Sendable (PublishEvent) -> Void) {
        self.core = core
        self.registration = registration
        self.onEvent = onEvent
        var logger = core.logger
        logger[metadataKey: "dns.type"] = "\(registration.type)"
        self.logger = logger
        name = registration.name
        txt = registration.txt
    }

    private var operation: String { "publishing '\(name)'" }

    func start(client: OpaquePointer?, state: AvahiClientState) throws(DiscoveryError) {
        guard UInt16(exactly: registration.port) != nil else {
            throw DiscoveryError(.daemonFailure, "cannot publish '\(name)': port \(registration.port) is outside 0...65535")
        }
        try Self.check(registration.txt, name: name)
        guard let client, state != AVAHI_CLIENT_CONNECTING else {
            logger.debug("waiting for avahi-daemon before publishing", metadata: ["dns.name": "\(name)"])
            return
        }
        try createGroup(client)
        guard state == AVAHI_CLIENT_S_RUNNING else {
            logger.debug("waiting for avahi-daemon to run before publishing", metadata: ["dns.name": "\(name)"])
            return
        }
        do {
            try addServices()
        } catch {
            _ = cancel()
            throw error
        }
    }

    /// Allocates the entry group on `client`.
    private func createGroup(_ client: OpaquePointer) throws(DiscoveryError) {
        // The callback first fires inside avahi_entry_group_new: it uses its own group argument.
        guard let group = avahi_entry_group_new(client, { group, state, userdata in
            guard let group, let userdata else { return }
            let unmanaged = Unmanaged<AvahiPublication>.fromOpaque(userdata)
            unmanaged.takeUnretainedValue().core.runCallback {
                // Taken inside runCallback: if this is the last reference (stopped from
                // onEvent), whatever its release frees runs as part of the callback.
                let publication = unmanaged.takeUnretainedValue()
                withExtendedLifetime(publication) { publication.groupChanged(group, to: state) }
            }
        }, Unmanaged.passUnretained(self).toOpaque()) else {
            throw .daemonFailure(operation, avahiErrorText(avahi_client_errno(client)))
        }
        self.group = group
    }

    func clientStateChanged(_ client: OpaquePointer, to state: AvahiClientState) {
        guard !finished else { return }
        if group == nil, state == AVAHI_CLIENT_S_RUNNING {
            // The daemon is back (or the client ran late): publish on the new client.
            do {
                try createGroup(client)
            } catch {
                return fail(error)
            }
        }
        guard let group else { return }
        switch state {
        case AVAHI_CLIENT_S_RUNNING where !added:
            addServicesOrFail()
        case AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            // The daemon is (re)establishing its host name: withdraw until it runs again.
            guard added else { return }
            avahi_entry_group_reset(group)
            added = false
            logger.debug("withdrawn until avahi-daemon's host name is established", metadata: ["dns.name": "\(name)"])
        default:
            break
        }
    }

    func suspend() {
        group = nil
        added = false
    }

    func fail(_ error: DiscoveryError) {
        guard !finished else { return }
        finished = true
        logger.warning("publication failed", metadata: ["dns.name": "\(name)", "avahi.error": "\(error)"])
        onEvent(.failed(error))
    }

    func cancel() -> Bool {
        let wasLive = !finished
        finished = true
        if let group {
            avahi_entry_group_free(group)    // withdraws the records: browsers see a REMOVE
            self.group = nil
            logger.debug("withdrawn", metadata: ["dns.name": "\(name)"])
        }
        return wasLive
    }

    func reportEnded(_ error: DiscoveryError) {
        onEvent(.failed(error))
    }

    // MARK: Avahi callbacks

    private func groupChanged(_ group: OpaquePointer, to state: AvahiEntryGroupState) {
        guard !finished else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            logger.debug("published", metadata: ["dns.name": "\(name)", "dns.port": "\(registration.port)"])
            onEvent(.established(name: name))
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another host announced the name: the records were withdrawn; retry renamed.
            rename()
            guard !finished, let current = self.group else { return }    // stopped from onEvent
            avahi_entry_group_reset(current)
            added = false
            addServicesOrFail()
        case AVAHI_ENTRY_GROUP_FAILURE:
            fail(.daemonFailure(operation, avahiErrorText(avahi_client_errno(avahi_entry_group_get_client(group)))))
        default:
            break    // UNCOMMITED, REGISTERING (probing)
        }
    }

    // MARK: Adding the service

    private func addServicesOrFail() {
        do {
            try addServices()
        } catch {
            fail(error)
        }
    }

    /// Adds the service under `name` and commits; renames on a local collision (another
    /// entry group of this daemon holds the name).
    private func addServices() throws(DiscoveryError) {
        let txt = Self.stringList(self.txt)
        defer { avahi_string_list_free(txt) }
        let port = UInt16(registration.port)
        for _ in 0..<Self.maxRenames {
            guard !finished, let group else { return }
            let status = avahi_entry_group_add_service_strlst(
                group, cavahi_if_unspec(), cavahi_proto_unspec(), AVAHI_PUBLISH_NO_COOKIE,
                name, registration.type, nil, nil, port, txt)
            if Int(status) == AVAHI_ERR_COLLISION {
                avahi_entry_group_reset(group)
                rename()
                continue
            }
            guard status >= 0 else {
                throw .daemonFailure(operation, avahiErrorText(status))
            }
            let committed = avahi_entry_group_commit(group)
            guard committed >= 0 else {
                throw .daemonFailure(operation, avahiErrorText(committed))
            }
            added = true
            logger.debug("publishing", metadata: ["dns.name": "\(name)", "dns.port": "\(registration.port)"])
            return
        }
        throw .daemonFailure(operation, "the name and its \(Self.maxRenames) alternatives all collided")
    }

    /// Replaces the TXT record in place: no withdrawal, browsers resolve the new record (§12.5).
    /// While not published yet (the daemon is away), the new record is published when it is back.
    func updateTXT(_ strings: [[UInt8]]) throws(DiscoveryError) {
        try Self.check(strings, name: name)
        guard !finished else { return }
        txt = strings
        guard added, let group else { return }
        let list = Self.stringList(strings)
        defer { avahi_string_list_free(list) }
        let status = avahi_entry_group_update_service_txt_strlst(
            group, cavahi_if_unspec(), cavahi_proto_unspec(), AVAHI_PUBLISH_NO_COOKIE, name, registration.type, nil, list)
        guard status >= 0 else { throw .daemonFailure("updating the TXT record of '\(name)'", avahiErrorText(status)) }
        logger.debug("TXT record updated", metadata: ["dns.name": "\(name)", "dns.txt.strings": "\(strings.count)"])
    }

    /// Refuses TXT strings avahi-daemon would refuse: empty, or over 255 bytes.
    private static func check(_ strings: [[UInt8]], name: String) throws(DiscoveryError) {
        for (index, string) in strings.enumerated() where string.count > 255 || string.isEmpty {
            throw .invalidDiscoveryInfo(string.isEmpty
                ? "TXT string \(index) of '\(name)' is empty; avahi-daemon refuses empty TXT strings"
                : "TXT string \(index) of '\(name)' is \(string.count) bytes; the limit is 255")
        }
    }

    /// Moves to Avahi's alternative name (`alice` → `alice #2` → `alice #3`) and reports it.
    private func rename() {
        let old = name
        guard let alternative = avahi_alternative_service_name(old) else { return }
        name = String(cString: alternative)
        avahi_free(alternative)
        logger.debug("name collision", metadata: ["dns.name": "\(old)", "dns.name.new": "\(name)"])
        onEvent(.collision(name: old, newName: name))
    }

    /// The Avahi string list that publishes `strings` as a TXT record in this order, as
    /// arbitrary bytes (nil when empty). Free it with `avahi_string_list_free`.
    ///
    /// Avahi serialises a list last element first (its lists are built by prepending), so the
    /// list holds the strings in reverse: each string is prepended in order. Checked on the
    /// wire: `[aaa, bbb, ccc]` goes out as `aaa bbb ccc`.
    static func stringList(_ strings: [[UInt8]]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for string in strings {
            list = string.withUnsafeBufferPointer { bytes in
                guard let base = bytes.baseAddress else {
                    return avahi_string_list_add_anonymous(list, 0)    // an empty string
                }
                return avahi_string_list_add_arbitrary(list, base, bytes.count)
            }
        }
        return list
    }
}
