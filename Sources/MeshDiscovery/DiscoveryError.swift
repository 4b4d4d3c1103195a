/// An error from discovery: the daemon, a service type, a discoveryInfo dictionary, a TXT record.
///
/// Each error has a ``code`` for programs and a ``message`` for people that names what was wrong
/// and, where there is one, the fix. Two errors are equal when their codes are equal.
public struct DiscoveryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public enum Code: Hashable, Sendable {
        /// avahi-daemon (or the system D-Bus it is reached through) is not running.
        case daemonNotRunning
        /// avahi-daemon refused or failed an operation; the message has Avahi's reason.
        case daemonFailure
        /// A service type that breaks the Multipeer rules (1–15 characters, …).
        case invalidServiceType
        /// A discoveryInfo dictionary that breaks the TXT limits.
        case invalidDiscoveryInfo
        /// A received TXT record that is not a valid meshchat advertisement.
        case invalidAdvertisement
        /// The advertiser or browser was used after ``stop``, or before ``start``.
        case notRunning
    }

    /// What kind of error this is.
    public let code: Code
    /// A sentence for people.
    public let message: String

    /// The message.
    public var description: String { message }

    /// Creates an error.
    /// - Parameters:
    ///   - code: the kind.
    ///   - message: the sentence for people.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    public static func == (lhs: DiscoveryError, rhs: DiscoveryError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The daemon is absent: the plain-words message with both fixes.
    /// - Parameter detail: what the client library said.
    @inline(never) public static func daemonNotRunning(_ detail: String) -> DiscoveryError {
        .init(.daemonNotRunning,
              "avahi-daemon is not running (\(detail)): start it (e.g. `sudo systemctl start avahi-daemon`, "
              + "or `scripts/setup`), or connect by address with --connect HOST:PORT")
    }
    /// An operation of the daemon failed.
    /// - Parameters:
    ///   - operation: what was attempted, e.g. `publishing 'alice'`.
    ///   - reason: Avahi's error text.
    @inline(never) public static func daemonFailure(_ operation: String, _ reason: String) -> DiscoveryError {
        .init(.daemonFailure, "avahi-daemon failed \(operation): \(reason)")
    }
    @inline(never) static func invalidServiceType(_ type: String, _ why: String) -> DiscoveryError {
        .init(.invalidServiceType, "invalid service type \"\(type)\": \(why)")
    }
    @inline(never) static func invalidDiscoveryInfo(_ why: String) -> DiscoveryError {
        .init(.invalidDiscoveryInfo, "invalid discoveryInfo: \(why)")
    }
    @inline(never) static func invalidAdvertisement(_ why: String) -> DiscoveryError {
        .init(.invalidAdvertisement, why)
    }
    @inline(never) static func notRunning(_ what: String) -> DiscoveryError {
        .init(.notRunning, "\(what) is not running")
    }
}
